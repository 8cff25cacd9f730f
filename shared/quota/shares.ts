/**
 * Quota shares: how an application whose traffic one quota item cannot carry spreads over several.
 *
 * Every request writes its application's quota item twice (admit, release), and one DynamoDB item takes about
 * 1,000 writes/s; past ~400 writes/s on one item the writes start to queue. An item must also stay under 1 KB
 * so that each of those writes costs exactly 1 WCU, and every lease in flight takes room in it. So an
 * application gets `shareCount(quota)` items ("shares"):
 *
 *   shares = max(ceil(perMinute / 12,000), ceil(concurrent / 32)), at most min(perMinute, perHour, perDay,
 *   floor(concurrent / 4)) so that every share has at least one of each window and 4 requests in flight,
 *   and at least 1.
 *
 * The concurrency limit also bounds the rate (requests in flight / request duration), so an application that
 * needs many shares for its per-minute limit needs a matching concurrency limit to reach it.
 *
 * 12,000 a minute is 200 requests/s sustained, 400 writes/s. Share k holds its part of every limit
 * (`shareQuota`): the limits are split as evenly as integers allow, so the parts add up to the limit exactly.
 * Share 0 is the application's original item, so an application with one share is what it always was.
 *
 * Exactness: every share admits at most its part (one conditional write per share, as for one item), so the
 * application admits at most its limit. A request refused by one share tries the others, and is refused only
 * when every share refused it: a window counter never decreases within its window, so a share seen full for a
 * window stays full until the window ends, and the request may skip it on that knowledge without writing.
 * Leases do decrease, so a share full of leases is always asked, never skipped.
 */
import type { Quota } from '../catalog/catalog';

/** Admissions a minute one share takes: 200 requests/s, 400 writes/s with their releases. */
export const MAX_PER_MINUTE_PER_SHARE = 12_000;
/** Leases one share holds: with the counters, the item stays well under 1 KB (see `quota-item.ts`). */
export const MAX_LEASES_PER_SHARE = 32;

/**
 * Requests in flight each share holds at least: a request that finds its share's slots taken tries another
 * share (one more write), so slots are not cut thinner than this.
 */
export const MIN_LEASES_PER_SHARE = 4;

/** How many quota items an application with these limits spreads over. */
export function shareCount(quota: Quota): number {
  const wanted = Math.max(
    Math.ceil(quota.perMinute / MAX_PER_MINUTE_PER_SHARE),
    Math.ceil(quota.concurrent / MAX_LEASES_PER_SHARE),
  );
  const most = Math.min(
    quota.perMinute,
    quota.perHour,
    quota.perDay,
    Math.max(1, Math.floor(quota.concurrent / MIN_LEASES_PER_SHARE)),
  );
  return Math.max(1, Math.min(wanted, most));
}

/** Share k's part of `total` split `count` ways: the first `total % count` shares take one more. */
function part(total: number, count: number, k: number): number {
  return Math.floor(total / count) + (k < total % count ? 1 : 0);
}

/** The limits share `k` of `count` enforces; over all shares they add up to `quota` exactly. */
export function shareQuota(quota: Quota, count: number, k: number): Quota {
  if (count === 1) return quota;
  return {
    perMinute: part(quota.perMinute, count, k),
    perHour: part(quota.perHour, count, k),
    perDay: part(quota.perDay, count, k),
    concurrent: part(quota.concurrent, count, k),
  };
}
