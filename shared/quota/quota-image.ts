/**
 * The quota item as an environment last saw it, and the one conditional write that takes tokens and takes or
 * renews a slot lease (docs/interface.md §7). Pure values: the store renders a `QuotaWrite` as one DynamoDB
 * UpdateItem (`storage/quota-item.ts`), whose condition and update mean exactly what `QuotaWrite` says here.
 *
 * Why this is exact:
 * - Window counters count tokens granted: a write that takes K adds K to the minute, hour and day counters under
 *   the condition that each stays within its limit, so no window grants more than its limit, and a request is
 *   admitted only with a token granted for its minute. A minute counter never goes down: an image of it at its
 *   limit proves a refusal until the minute ends. The hour and day counters get back, once, the tokens of an
 *   ended minute their holder never spent (it can no longer spend them), so they too count every token spent.
 * - A lease is taken only under `size(leases) < concurrent`, counting expired leases still in the map; an expired
 *   lease leaves the map only by a write that asserts its value is still the one seen expired, and a holder
 *   renews only its own entry at the value it wrote. So a lease is never removed once renewed, never renewed once
 *   removed, and the map never holds more than `concurrent` entries: requests in flight, each on its holder's
 *   live lease, never exceed the limit.
 * - `unspent` (per minute) is the sum of the tokens each environment reported unspent at its last write; a write
 *   that would raise it past the cap fails. An environment's tokens only shrink between its writes, so the tokens
 *   held unspent in a window never exceed the cap: the most a window can lose to environments that go cold.
 */
import type { Quota } from '../catalog/catalog';
import { LIMIT_OF_WINDOW, type LimitName, type WindowUsage } from './rate-limit';
import { currentWindows, parseWindowAttribute, type QuotaWindow, secondsUntil, type WindowKind } from './windows';

export interface QuotaImage {
  /** Holder id -> lease expiry (epoch ms, the holder's clock); absent until the item has been initialised. */
  leases?: Record<string, number>;
  /** Window attribute (`m#…`, `h#…`, `d#…`) -> tokens granted in it. */
  counters: Record<string, number>;
  /** Minute window attribute (`m#…`) -> tokens environments reported unspent in it (stored as `u#…`). */
  unspent: Record<string, number>;
}

/** One conditional write: take `take` tokens of every current window and take or renew the holder's lease. */
export interface QuotaWrite {
  windows: readonly QuotaWindow[];
  quota: Quota;
  /** Tokens added to each current window's counter (0: the lease only). */
  take: number;
  holder: string;
  /** The holder's lease afterwards. */
  expiry: number;
  /** The value the holder last wrote for its lease, when it still counts on holding it: renew in place. */
  renewFrom?: number;
  /** Expired leases removed, each asserted to still hold the value seen expired (so the room may count them). */
  asserted: Readonly<Record<string, number>>;
  /** Change of the minute's `unspent`; when positive, the write fails if it would pass `unspentCap`. */
  unspentDelta: number;
  unspentCap: number;
  /** Ended windows' counters, removed without being relied on. */
  purge: readonly string[];
  /**
   * Tokens of an ended minute the holder never spent, given back to the hour and day counters that still run
   * (attribute -> count): the holder drops them before the write is sent, so they are given back at most once.
   */
  returned: Readonly<Record<string, number>>;
}

/** Whether the write's condition holds on `image`: what the store's ConditionExpression says. */
export function writeHolds(image: QuotaImage | undefined, write: QuotaWrite): boolean {
  if (!image?.leases) return false;
  const leases = image.leases;
  if (write.take > 0) {
    for (const window of write.windows) {
      const delta = write.take - (write.returned[window.attribute] ?? 0);
      if ((image.counters[window.attribute] ?? 0) + delta > write.quota[LIMIT_OF_WINDOW[window.kind]]) return false;
    }
  }
  if (write.renewFrom !== undefined) {
    if (leases[write.holder] !== write.renewFrom) return false;
  } else if (Object.keys(leases).length >= write.quota.concurrent + Object.keys(write.asserted).length) {
    return false;
  }
  for (const [id, expiry] of Object.entries(write.asserted)) if (leases[id] !== expiry) return false;
  if (write.unspentDelta > 0) {
    const minute = minuteOf(write.windows);
    if ((image.unspent[minute] ?? 0) + write.unspentDelta > write.unspentCap) return false;
  }
  return true;
}

/** The item after the write (its condition held): what the store's UpdateExpression does. */
export function applyWrite(image: QuotaImage, write: QuotaWrite): QuotaImage {
  const next: QuotaImage = {
    leases: { ...image.leases },
    counters: { ...image.counters },
    unspent: { ...image.unspent },
  };
  const leases = next.leases as Record<string, number>;
  for (const name of write.purge) {
    delete next.counters[name];
    delete next.unspent[name];
  }
  for (const window of write.windows) {
    const delta = write.take - (write.returned[window.attribute] ?? 0);
    if (delta !== 0) next.counters[window.attribute] = (next.counters[window.attribute] ?? 0) + delta;
  }
  for (const id of Object.keys(write.asserted)) delete leases[id];
  leases[write.holder] = write.expiry;
  if (write.unspentDelta !== 0) {
    const minute = minuteOf(write.windows);
    next.unspent[minute] = (next.unspent[minute] ?? 0) + write.unspentDelta;
  }
  return next;
}

/** The minute window's attribute among a write's windows. */
export function minuteOf(windows: readonly QuotaWindow[]): string {
  return (windows.find((window) => window.kind === 'minute') as QuotaWindow).attribute;
}

/** How much of each current window the image shows granted. */
export function windowUsage(image: QuotaImage | undefined, quota: Quota, now: number): WindowUsage[] {
  return currentWindows(now).map((window) => ({
    kind: window.kind,
    limit: quota[LIMIT_OF_WINDOW[window.kind]],
    used: image?.counters[window.attribute] ?? 0,
    end: window.end,
  }));
}

export interface Refused {
  limit: LimitName;
  value: number;
  retryAfterSeconds: number;
}

/**
 * A current window the image shows at its limit (the one that ends last). A minute counter never goes down, so
 * an image of it at its limit proves a refusal until the minute ends; hour and day counters get back the tokens
 * of ended minutes nobody spent, so only the item as it was when a write failed proves theirs (`kinds`).
 */
export function windowRefusal(
  image: QuotaImage | undefined,
  quota: Quota,
  now: number,
  kinds: readonly WindowKind[] = ['minute', 'hour', 'day'],
): Refused | undefined {
  const binding = windowUsage(image, quota, now)
    .filter((usage) => kinds.includes(usage.kind) && usage.used >= usage.limit)
    .sort((a, b) => b.end - a.end)[0];
  if (!binding) return undefined;
  return {
    limit: LIMIT_OF_WINDOW[binding.kind],
    value: binding.limit,
    retryAfterSeconds: secondsUntil(binding.end, now),
  };
}

/**
 * Other holders' leases that surely still hold their slots at `now` (a clock up to CLOCK_SKEW_MS ahead of
 * theirs counts them live a little less long): when they fill the limit, the image proves a refusal.
 */
export function slotRefusal(
  image: QuotaImage | undefined,
  quota: Quota,
  holder: string,
  now: number,
  skewMs: number,
): Refused | undefined {
  const live = Object.entries(image?.leases ?? {})
    .filter(([id, expiry]) => id !== holder && expiry > now + skewMs)
    .map(([, expiry]) => expiry);
  if (live.length < quota.concurrent) return undefined;
  return {
    limit: 'concurrent',
    value: quota.concurrent,
    retryAfterSeconds: secondsUntil(Math.min(...live), now),
  };
}

/** Other holders' leases expired at `now`, oldest first: what a write may remove by asserting their values. */
export function expiredLeases(image: QuotaImage | undefined, holder: string, now: number): Record<string, number> {
  const expired = Object.entries(image?.leases ?? {})
    .filter(([id, expiry]) => id !== holder && expiry <= now)
    .sort(([, a], [, b]) => a - b)
    .slice(0, MAX_ASSERTED_LEASES);
  return Object.fromEntries(expired);
}

/** Live leases in the image: how many environments share the application's traffic. */
export function liveLeaseCount(image: QuotaImage | undefined, now: number): number {
  return Object.values(image?.leases ?? {}).filter((expiry) => expiry > now).length;
}

/** At most this many expired leases are removed per write: keeps the expression small after a mass crash. */
export const MAX_ASSERTED_LEASES = 25;

/**
 * A window counter (or unspent tally) is removed only once its window ended this long ago, so that an
 * environment whose clock lags by less than this never sees its current window's count removed under it.
 */
export const STALE_WINDOW_GRACE_MS = 60_000;

/** Ended windows' attributes an image holds: removed by the next write, never relied on. */
export function staleWindows(image: QuotaImage | undefined, now: number): string[] {
  if (!image) return [];
  const names = new Set([...Object.keys(image.counters), ...Object.keys(image.unspent)]);
  return [...names].filter((name) => {
    const window = parseWindowAttribute(name);
    return window !== undefined && window.end + STALE_WINDOW_GRACE_MS <= now;
  });
}
