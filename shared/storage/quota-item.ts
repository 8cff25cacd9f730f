/**
 * The quota item of one application and the one conditional update that admits a request: pure functions,
 * no I/O (the store in `quota-store.ts` sends what these build). See `quota-store.ts` for why the design is
 * exact under concurrency.
 *
 *   pk         'app#<appCode>', or 'app#<appCode>#<k>' for share k > 0 of a sharded application (`shares.ts`;
 *              the key is defined with every other in item-keys.ts)
 *   leases     map lease id -> expiry (epoch ms): the requests in flight
 *   m#<start>  count of the minute window that starts at <start> (likewise h#, d#)
 *   expiresAt  epoch seconds after which nothing in the item matters any more (DynamoDB TTL may tidy up)
 *
 * Size: at most 32 leases of 17 bytes (8-character id, 13-digit expiry), a handful of counters of about
 * 23 bytes and the key (at most 73 bytes): under 900 bytes, so every write of it costs exactly 1 WCU.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Quota } from '../catalog/catalog';
import { LIMIT_OF_WINDOW, type LimitName, type WindowUsage } from '../quota/rate-limit';
import {
  currentWindows,
  parseWindowAttribute,
  type QuotaWindow,
  secondsUntil,
  WINDOW_LENGTH_MS,
} from '../quota/windows';
import { quotaPartitionKey } from './item-keys';

export const QuotaAttr = {
  partitionKey: 'pk',
  leases: 'leases',
  expiresAt: 'expiresAt',
} as const;

/**
 * A window counter is removed only once its window ended this long ago, so that a container whose clock lags
 * by less than this never sees its current window's count removed under it (and restarted from zero).
 */
export const STALE_WINDOW_GRACE_MS = 60_000;
/** At most this many expired leases are removed per write: keeps the expression small after a mass crash. */
export const MAX_PURGED_LEASES = 25;

export interface QuotaItem {
  /** Lease id -> expiry (epoch ms); absent until the item has been initialised. */
  leases?: Record<string, number>;
  /** Window attribute -> count, for every window counter the item holds (current or stale). */
  counters: Record<string, number>;
}

/** Read a quota item from plain attributes (`plainAttributes` of what the store returns). */
export function decodeQuotaItem(attributes: Record<string, unknown> | undefined): QuotaItem | undefined {
  if (!attributes) return undefined;
  const item: QuotaItem = { counters: {} };
  const leases = attributes[QuotaAttr.leases];
  if (leases !== null && typeof leases === 'object' && !Array.isArray(leases)) {
    item.leases = {};
    for (const [id, expiry] of Object.entries(leases)) if (typeof expiry === 'number') item.leases[id] = expiry;
  }
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'number' && parseWindowAttribute(name)) item.counters[name] = value;
  }
  return item;
}

/**
 * Plain attributes from DynamoDB's wire format: the item an update returns, or a ConditionalCheckFailedException
 * carries. Only the types a quota item holds (S, N, M) are kept.
 */
export function plainAttributes(raw: Record<string, unknown>): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const converted = plainValue(value);
    if (converted !== undefined) plain[name] = converted;
  }
  return plain;
}

/**
 * DynamoDB's wire format of the values the quota store sends (numbers, strings and the empty lease map): the
 * store talks to the low-level client, so that its two writes per request skip the document client's generic
 * translation.
 */
export function wireAttributes(plain: Record<string, unknown>): Record<string, AttributeValue> {
  const wire: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(plain)) wire[name] = wireValue(value);
  return wire;
}

function wireValue(value: unknown): AttributeValue {
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'string') return { S: value };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return { M: wireAttributes(value as Record<string, unknown>) };
  }
  throw new TypeError(`a quota item holds numbers, strings and maps, not ${typeof value}`);
}

function plainValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  const typed = value as { S?: unknown; N?: unknown; M?: unknown };
  if (typeof typed.S === 'string') return typed.S;
  if (typeof typed.N === 'string') return Number(typed.N);
  if (typed.M !== null && typeof typed.M === 'object') return plainAttributes(typed.M as Record<string, unknown>);
  return undefined;
}

/** How much of each current window the item shows used. */
export function windowUsage(item: QuotaItem | undefined, quota: Quota, now: number): WindowUsage[] {
  return currentWindows(now).map((window) => ({
    kind: window.kind,
    limit: quota[LIMIT_OF_WINDOW[window.kind]],
    used: item?.counters[window.attribute] ?? 0,
    end: window.end,
  }));
}

/** Attributes a write may remove without changing any decision: ended windows and expired leases. */
export interface Purge {
  windowAttributes: string[];
  expiredLeases: string[];
}

export const NO_PURGE: Purge = { windowAttributes: [], expiredLeases: [] };

/** What of an item (as last seen) has stopped mattering at `now`. */
export function planPurge(item: QuotaItem | undefined, now: number): Purge {
  if (!item) return NO_PURGE;
  const windowAttributes = Object.keys(item.counters).filter((name) => {
    const window = parseWindowAttribute(name);
    return window !== undefined && window.end + STALE_WINDOW_GRACE_MS <= now;
  });
  return { windowAttributes, expiredLeases: expiredLeasesOf(item, now) };
}

/** Leases whose expiry has passed, oldest first, at most MAX_PURGED_LEASES. */
export function expiredLeasesOf(item: QuotaItem, now: number): string[] {
  return Object.entries(item.leases ?? {})
    .filter(([, expiry]) => expiry <= now)
    .sort(([, a], [, b]) => a - b)
    .slice(0, MAX_PURGED_LEASES)
    .map(([id]) => id);
}

export function liveLeaseCount(item: QuotaItem, now: number): number {
  return Object.values(item.leases ?? {}).filter((expiry) => expiry > now).length;
}

/** The expiry of the live lease that expires first: when a slot frees at the latest. */
export function oldestLiveLeaseExpiry(item: QuotaItem, now: number): number | undefined {
  const live = Object.values(item.leases ?? {}).filter((expiry) => expiry > now);
  return live.length ? Math.min(...live) : undefined;
}

/** Why the conditional admission failed, read from the item as it was when it failed. */
export type Refusal =
  /** No lease map yet (a new application, or an item TTL has removed): create it, then try again. */
  | { kind: 'uninitialized' }
  /** A limit is reached: the request is refused. */
  | { kind: 'exceeded'; limit: LimitName; value: number; retryAfterSeconds: number }
  /**
   * No limit is reached: expired leases filled the map (or the item changed since). Try again, removing these
   * expired leases and asserting that they are still there, so that they may be discounted from the map's size.
   */
  | { kind: 'retry'; expiredLeases: string[] };

export function explainRefusal(item: QuotaItem | undefined, quota: Quota, now: number): Refusal {
  if (!item?.leases) return { kind: 'uninitialized' };
  // When several windows are exhausted the caller must wait for the last of them to end.
  const exhausted = windowUsage(item, quota, now).filter((usage) => usage.used >= usage.limit);
  const binding = exhausted.sort((a, b) => b.end - a.end)[0];
  if (binding) {
    return {
      kind: 'exceeded',
      limit: LIMIT_OF_WINDOW[binding.kind],
      value: binding.limit,
      retryAfterSeconds: secondsUntil(binding.end, now),
    };
  }
  if (liveLeaseCount(item, now) >= quota.concurrent) {
    // A slot frees at the latest when the oldest lease expires (its request released it, or it crashed).
    return {
      kind: 'exceeded',
      limit: 'concurrent',
      value: quota.concurrent,
      retryAfterSeconds: secondsUntil(oldestLiveLeaseExpiry(item, now) ?? now, now),
    };
  }
  return { kind: 'retry', expiredLeases: expiredLeasesOf(item, now) };
}

export interface AdmitPlan {
  windows: readonly QuotaWindow[];
  quota: Quota;
  leaseId: string;
  leaseExpiry: number;
  /** Removed without being relied on: idempotent, so stale knowledge is harmless. */
  purge: Purge;
  /** Expired leases removed AND asserted present, so that the lease limit may discount them. */
  assertedExpiredLeases: readonly string[];
}

export interface UpdateExpressionParts {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * The one conditional update that admits a request: increments the three window counters and adds the lease
 * if every counter is under its limit and the lease map has room; removes ended windows and expired leases.
 */
export function admitExpression(plan: AdmitPlan): UpdateExpressionParts {
  const names: Record<string, string> = { '#leases': QuotaAttr.leases, '#lease': plan.leaseId, '#ttl': 'expiresAt' };
  const values: Record<string, unknown> = { ':one': 1, ':leaseExpiry': plan.leaseExpiry };
  const sets: string[] = [];
  const adds: string[] = [];
  const conditions: string[] = ['attribute_exists(#leases)'];

  // The expressions are written in the forms that cost a store least to parse, with the same meaning:
  // `NOT #w >= :limit` holds when the counter is absent (a comparison with a missing attribute is false) or
  // under its limit, i.e. `attribute_not_exists(#w) OR #w < :limit` without the parenthesised OR, which
  // dynalite's parser takes about ten times longer over; `ADD #w :one` starts an absent counter at 1, as
  // `SET #w = if_not_exists(#w, :zero) + :one` does.
  plan.windows.forEach((window, k) => {
    names[`#w${k}`] = window.attribute;
    values[`:limit${k}`] = plan.quota[LIMIT_OF_WINDOW[window.kind]];
    adds.push(`#w${k} :one`);
    conditions.push(`NOT #w${k} >= :limit${k}`);
  });
  sets.push('#leases.#lease = :leaseExpiry');
  // Nothing in the item matters after the day window ends and the last lease expires; TTL may then delete it.
  const dayEnd = Math.max(...plan.windows.map((window) => window.end));
  values[':ttl'] = Math.ceil((dayEnd + WINDOW_LENGTH_MS.day) / 1000);
  sets.push('#ttl = :ttl');

  const removes: string[] = [];
  const current = new Set(plan.windows.map((window) => window.attribute));
  plan.purge.windowAttributes
    .filter((name) => !current.has(name))
    .forEach((name, k) => {
      names[`#s${k}`] = name;
      removes.push(`#s${k}`);
    });
  const asserted = [...new Set(plan.assertedExpiredLeases)].filter((id) => id !== plan.leaseId);
  asserted.forEach((id, k) => {
    names[`#a${k}`] = id;
    removes.push(`#leases.#a${k}`);
    conditions.push(`attribute_exists(#leases.#a${k})`);
  });
  plan.purge.expiredLeases
    .filter((id) => id !== plan.leaseId && !asserted.includes(id))
    .forEach((id, k) => {
      names[`#e${k}`] = id;
      removes.push(`#leases.#e${k}`);
    });
  // Every asserted lease is present and expired, so live leases <= size - asserted: the lease limit holds.
  values[':leaseRoom'] = plan.quota.concurrent + asserted.length;
  conditions.splice(1, 0, 'size(#leases) < :leaseRoom');

  return {
    UpdateExpression: `SET ${sets.join(', ')} ADD ${adds.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * Write units a failed conditional write is charged: DynamoDB bills it by the item's size (1 unit per KB) but
 * reports nothing, so the request's meter estimates it from the item it saw. Numbers count as their digits'
 * storage (about one byte per two digits plus one), map entries as name, value and a byte of overhead.
 */
export function estimateWriteUnits(appCode: string, item: QuotaItem | undefined, share = 0): number {
  return Math.max(1, Math.ceil(estimateItemBytes(appCode, item, share) / 1024));
}

/** The stored size of a quota item, in bytes, by DynamoDB's rules (as `estimateWriteUnits` describes). */
export function estimateItemBytes(appCode: string, item: QuotaItem | undefined, share = 0): number {
  if (!item) return 0;
  const numberBytes = (value: number) => Math.ceil(String(Math.abs(value)).length / 2) + 1;
  let bytes = QuotaAttr.partitionKey.length + quotaPartitionKey(appCode, share).length;
  bytes += QuotaAttr.expiresAt.length + 6;
  for (const [name, count] of Object.entries(item.counters)) bytes += name.length + numberBytes(count);
  if (item.leases) {
    bytes += QuotaAttr.leases.length + 3;
    for (const [id, expiry] of Object.entries(item.leases)) bytes += id.length + numberBytes(expiry) + 1;
  }
  return bytes;
}
