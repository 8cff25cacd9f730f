/**
 * Function environments as the quota sees them (docs/interface.md §7): a holder is one environment running one
 * request at a time, which keeps, per application, its slot lease, its block of rate tokens and the quota item
 * as it last saw it. On Lambda every container runs one request at a time, so its pool holds one holder; a
 * process that runs requests side by side (the local server, a test) takes one holder per request in flight, so
 * each of them is exactly what a container would be, and the limits stay exact in one process as across many.
 */
import { randomBytes } from 'node:crypto';
import type { Quota } from '../catalog/catalog';
import { BLOCK_HORIZON_MS, CLOCK_SKEW_MS, RENEW_LEAD_MS, SLOT_LEASE_MS, unspentCap, usableUntil } from './leases';
import { expiredLeases, liveLeaseCount, minuteOf, type QuotaImage, type QuotaWrite, staleWindows } from './quota-image';
import { LIMIT_OF_WINDOW, type WindowUsage } from './rate-limit';
import { currentWindows, parseWindowAttribute, type QuotaWindow, windowAt } from './windows';

/** Tokens of one minute window held by a holder. */
export interface TokenBlock {
  /** The minute window's attribute. */
  minute: string;
  end: number;
  left: number;
  /** What the holder last reported unspent for this window (its share of the item's `unspent`). */
  reported: number;
}

/** What one holder keeps of one application's quota. */
export interface Holding {
  /** The expiry this holder last wrote for its lease, while it counts on holding it. */
  lease?: number;
  block?: TokenBlock;
  /** Epoch ms of the last request, and the smoothed interval between requests: the holder's own rate. */
  lastAt?: number;
  interval?: number;
  image?: QuotaImage;
}

export class LeaseHolder {
  private readonly holdings = new Map<string, Holding>();
  constructor(readonly id: string = newHolderId()) {}

  holding(appCode: string): Holding {
    let holding = this.holdings.get(appCode);
    if (!holding) {
      holding = {};
      this.holdings.set(appCode, holding);
    }
    return holding;
  }
}

/**
 * The holders of one process: a request takes the idle one that went idle last among those holding a live lease
 * for its application, else the one that went idle last (the warmest), else a new one.
 */
export class HolderPool {
  private readonly idle: LeaseHolder[] = [];

  acquire(appCode: string, now: number): LeaseHolder {
    for (let k = this.idle.length - 1; k >= 0; k -= 1) {
      const holder = this.idle[k] as LeaseHolder;
      if (leaseCovers(holder.holding(appCode), now)) return this.idle.splice(k, 1)[0] as LeaseHolder;
    }
    return this.idle.pop() ?? new LeaseHolder();
  }

  release(holder: LeaseHolder): void {
    this.idle.push(holder);
  }
}

/** Smoothing of the interval between requests: recent traffic weighs most. */
const RATE_WEIGHT = 0.3;

/** Notes a request at `now` in the holder's own rate. */
export function observeRequest(holding: Holding, now: number): void {
  if (holding.lastAt !== undefined) {
    const interval = Math.max(1, now - holding.lastAt);
    holding.interval =
      holding.interval === undefined ? interval : (1 - RATE_WEIGHT) * holding.interval + RATE_WEIGHT * interval;
  }
  holding.lastAt = now;
}

/** The holder's block of the current minute, when it may still spend from it at `now`. */
export function usableBlock(holding: Holding, now: number): TokenBlock | undefined {
  const block = holding.block;
  const minute = windowAt('minute', now);
  return block && block.minute === minute.attribute && now < minute.end - CLOCK_SKEW_MS ? block : undefined;
}

/**
 * Whether the holder's own traffic is too sparse to come back before its lease stops covering a request: then,
 * when slots are contended, it gives its slot back as its request ends rather than hold it idle.
 */
export function sparse(holding: Holding): boolean {
  return holding.interval === undefined || holding.interval > SLOT_LEASE_MS - CLOCK_SKEW_MS - RENEW_LEAD_MS;
}

/** Whether a request may start on the holder's lease without renewing it. */
export function leaseCovers(holding: Holding, now: number): boolean {
  return holding.lease !== undefined && now + RENEW_LEAD_MS <= usableUntil(holding.lease);
}

/**
 * The write a request needs when it cannot be admitted on what its holder holds: renew (or take) the lease, and
 * take a block when the holder has no token left (topping it up when low, since the write is paid anyway).
 * `consume` is 1 when the write admits a request, 0 for a renewal while one runs.
 */
export function planWrite(holder: string, holding: Holding, quota: Quota, now: number, consume: 0 | 1): QuotaWrite {
  const windows = currentWindows(now);
  const minute = windows[0] as QuotaWindow;
  const image = holding.image;
  const block = usableBlock(holding, now);
  const left = block?.left ?? 0;
  const reported = holding.block?.minute === minute.attribute ? holding.block.reported : 0;
  const cap = unspentCap(quota.perMinute);
  const need = consume > left ? 1 : 0;
  let take = need;
  const target = consume === 1 ? blockTarget(holding, quota, now, minute, image) : 0;
  if (consume === 1 && left - 1 < target / 2) {
    // The holder's unspent tokens after this write may not pass the cap, counting what others reported; nor may
    // any window pass its limit as last seen.
    const unspentRoom = cap - (image?.unspent[minute.attribute] ?? 0) + reported - (left - 1);
    const windowRoom = Math.min(
      ...windows.map((window) => quota[LIMIT_OF_WINDOW[window.kind]] - (image?.counters[window.attribute] ?? 0)),
    );
    take = Math.max(need, Math.min(target - (left - 1), unspentRoom, windowRoom));
  }
  const renewFrom = holding.lease;
  const full = Object.keys(image?.leases ?? {}).length >= quota.concurrent;
  return {
    windows,
    quota,
    take,
    holder,
    expiry: now + SLOT_LEASE_MS,
    ...(renewFrom === undefined ? {} : { renewFrom }),
    asserted: renewFrom === undefined && full ? expiredLeases(image, holder, now) : {},
    unspentDelta: left + take - consume - reported,
    unspentCap: cap,
    purge: staleWindows(image, now),
    returned: returnedTokens(holding.block, windows),
  };
}

/** The tokens of an ended minute's block, for the hour and day windows still running (the write's `returned`). */
function returnedTokens(block: TokenBlock | undefined, windows: readonly QuotaWindow[]): Record<string, number> {
  const minute = windows[0] as QuotaWindow;
  if (!block || block.left <= 0 || block.minute === minute.attribute) return {};
  const ended = parseWindowAttribute(block.minute);
  if (!ended) return {};
  const returned: Record<string, number> = {};
  for (const window of windows.slice(1)) {
    if (windowAt(window.kind, ended.start).attribute === window.attribute) returned[window.attribute] = block.left;
  }
  return returned;
}

/**
 * How many tokens a block should hold: the holder's own rate over the horizon, no more than the rest of the
 * minute needs, and no more than a fair part of what each window has left among the environments sharing it.
 */
function blockTarget(
  holding: Holding,
  quota: Quota,
  now: number,
  minute: QuotaWindow,
  image: QuotaImage | undefined,
): number {
  const interval = holding.interval;
  // No rate known yet (a holder's first request): no block, the request's own token only.
  if (interval === undefined) return 0;
  let wanted = Math.ceil(BLOCK_HORIZON_MS / interval);
  wanted = Math.min(wanted, Math.floor((minute.end - CLOCK_SKEW_MS - now) / interval) + 1);
  const sharing = Math.max(1, liveLeaseCount(image, now));
  for (const window of currentWindows(now)) {
    const room = quota[LIMIT_OF_WINDOW[window.kind]] - (image?.counters[window.attribute] ?? 0);
    wanted = Math.min(wanted, Math.floor(room / (2 * sharing)));
  }
  return Math.max(0, wanted);
}

/** The holder's state once `write`, sent at `now`, succeeded and the item became `image`. */
export function afterWrite(
  holding: Holding,
  write: QuotaWrite,
  image: QuotaImage | undefined,
  consume: 0 | 1,
  now: number,
): void {
  const left = (usableBlock(holding, now)?.left ?? 0) + write.take - consume;
  holding.lease = write.expiry;
  holding.block = { minute: minuteOf(write.windows), end: (write.windows[0] as QuotaWindow).end, left, reported: left };
  if (image) holding.image = image;
}

/**
 * The application's windows as the holder's image shows them, its own unspent tokens counted as left: tokens
 * other environments hold are not, so `RateLimit-Remaining` never claims them.
 */
export function holdingUsage(holding: Holding, quota: Quota, now: number): WindowUsage[] {
  const own = usableBlock(holding, now)?.left ?? 0;
  return currentWindows(now).map((window) => ({
    kind: window.kind,
    limit: quota[LIMIT_OF_WINDOW[window.kind]],
    used: Math.max(0, (holding.image?.counters[window.attribute] ?? 0) - own),
    end: window.end,
  }));
}

/** 48 random bits, URL-safe: unique among the leases of one item, short enough to keep it small. */
function newHolderId(): string {
  return randomBytes(6).toString('base64url');
}
