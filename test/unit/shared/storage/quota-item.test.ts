/** The quota item's pure logic: why an admission failed, what may be purged, the headers and the messages. */
import type { Quota } from '../../../../shared/catalog/catalog';
import { rateLimitHeaders, rateLimitMessage, tightestWindow } from '../../../../shared/quota/rate-limit';
import { currentWindows } from '../../../../shared/quota/windows';
import {
  admitExpression,
  decodeQuotaItem,
  explainRefusal,
  plainAttributes,
  planPurge,
} from '../../../../shared/storage/quota-item';

const at = (iso: string) => Date.parse(iso);
const NOW = at('2026-11-22T04:10:37Z');
const QUOTA: Quota = { perMinute: 5, perHour: 100, perDay: 1000, concurrent: 2 };

describe('explainRefusal', () => {
  it('asks for the lease map when the item or its map does not exist', () => {
    expect(explainRefusal(undefined, QUOTA, NOW)).toEqual({ kind: 'uninitialized' });
    expect(explainRefusal({ counters: {} }, QUOTA, NOW)).toEqual({ kind: 'uninitialized' });
  });

  it('names the per-minute limit and the seconds to the next minute', () => {
    const item = { leases: {}, counters: { 'm#2026-11-22T04:10': 5, 'h#2026-11-22T04': 40 } };
    expect(explainRefusal(item, QUOTA, NOW)).toEqual({
      kind: 'exceeded',
      limit: 'perMinute',
      value: 5,
      retryAfterSeconds: 23,
    });
  });

  it('names the window that ends last when several are exhausted', () => {
    const item = { leases: {}, counters: { 'm#2026-11-22T04:10': 5, 'h#2026-11-22T04': 100 } };
    expect(explainRefusal(item, QUOTA, NOW)).toEqual({
      kind: 'exceeded',
      limit: 'perHour',
      value: 100,
      retryAfterSeconds: 49 * 60 + 23,
    });
  });

  it('ignores the counters of ended windows', () => {
    const item = { leases: {}, counters: { 'm#2026-11-22T04:09': 5, 'd#2026-11-21': 1000 } };
    expect(explainRefusal(item, QUOTA, NOW)).toEqual({ kind: 'retry', expiredLeases: [] });
  });

  it('refuses for concurrency when live leases fill the limit, until the oldest of them expires', () => {
    const item = { leases: { a: NOW + 1, b: NOW + 20_000 }, counters: {} };
    expect(explainRefusal(item, QUOTA, NOW)).toEqual({
      kind: 'exceeded',
      limit: 'concurrent',
      value: 2,
      retryAfterSeconds: 1,
    });
    const later = { leases: { a: NOW + 12_400, b: NOW + 20_000, gone: NOW - 10 }, counters: {} };
    expect(explainRefusal(later, QUOTA, NOW)).toEqual({
      kind: 'exceeded',
      limit: 'concurrent',
      value: 2,
      retryAfterSeconds: 13,
    });
  });

  it('retries, purging expired leases, when only expired leases fill the map', () => {
    const item = { leases: { live: NOW + 1, late: NOW - 1, older: NOW - 5000 }, counters: {} };
    expect(explainRefusal(item, QUOTA, NOW)).toEqual({ kind: 'retry', expiredLeases: ['older', 'late'] });
  });
});

describe('planPurge', () => {
  it('removes windows ended over a minute ago and expired leases, keeps the rest', () => {
    const item = {
      leases: { live: NOW + 1000, dead: NOW - 1 },
      counters: {
        'm#2026-11-22T04:10': 1,
        'm#2026-11-22T04:09': 3,
        'm#2026-11-22T04:08': 3,
        'h#2026-11-22T03': 9,
        'd#2026-11-21': 9,
      },
    };
    expect(planPurge(item, NOW)).toEqual({
      windowAttributes: ['m#2026-11-22T04:08', 'h#2026-11-22T03', 'd#2026-11-21'],
      expiredLeases: ['dead'],
    });
  });
});

describe('admitExpression', () => {
  it('discounts only the expired leases it asserts from the room condition', () => {
    const parts = admitExpression({
      windows: currentWindows(NOW),
      quota: QUOTA,
      leaseId: 'new',
      leaseExpiry: NOW + 30_000,
      purge: { windowAttributes: ['m#2026-11-22T04:08'], expiredLeases: ['x', 'y'] },
      assertedExpiredLeases: ['y'],
    });
    expect(parts.ConditionExpression).toContain('size(#leases) < :leaseRoom');
    expect(parts.ExpressionAttributeValues[':leaseRoom']).toBe(3);
    expect(parts.ConditionExpression).toContain('attribute_exists(#leases.#a0)');
    expect(parts.ExpressionAttributeNames['#a0']).toBe('y');
    expect(parts.UpdateExpression).toMatch(/REMOVE #s0, #leases\.#a0, #leases\.#e0$/);
    expect(parts.ExpressionAttributeNames['#e0']).toBe('x');
    expect(parts.ExpressionAttributeValues[':ttl']).toBe(at('2026-11-24T00:00:00Z') / 1000);
  });
});

describe('decoding', () => {
  it('reads the wire format a ConditionalCheckFailedException carries', () => {
    const raw = {
      pk: { S: 'app#a' },
      leases: { M: { l1: { N: '1795000000000' } } },
      'm#2026-11-22T04:10': { N: '7' },
      expiresAt: { N: '1795400000' },
    };
    expect(decodeQuotaItem(plainAttributes(raw))).toEqual({
      leases: { l1: 1795000000000 },
      counters: { 'm#2026-11-22T04:10': 7 },
    });
  });
});

describe('rate-limit headers', () => {
  const end = (iso: string) => at(iso);
  const minute = { kind: 'minute' as const, limit: 5, used: 2, end: end('2026-11-22T04:11:00Z') };
  const hour = { kind: 'hour' as const, limit: 100, used: 40, end: end('2026-11-22T05:00:00Z') };
  const day = { kind: 'day' as const, limit: 1000, used: 997, end: end('2026-11-23T00:00:00Z') };

  it('describe the window with the fewest requests remaining', () => {
    expect(rateLimitHeaders([minute, hour], NOW)).toEqual({
      'RateLimit-Limit': '5',
      'RateLimit-Remaining': '3',
      'RateLimit-Reset': '23',
    });
    expect(rateLimitHeaders([minute, hour, day], NOW)).toEqual({
      'RateLimit-Limit': '1000',
      'RateLimit-Remaining': '3',
      'RateLimit-Reset': String(19 * 3600 + 49 * 60 + 23),
    });
  });

  it('prefer the longer window on a tie, since it stays exhausted longer', () => {
    const exhaustedMinute = { ...minute, used: 5 };
    const exhaustedHour = { ...hour, used: 100 };
    expect(tightestWindow([exhaustedMinute, exhaustedHour])).toBe(exhaustedHour);
  });

  it('never report a negative remainder after the limit was lowered', () => {
    expect(rateLimitHeaders([{ ...minute, used: 9 }], NOW)['RateLimit-Remaining']).toBe('0');
  });
});

describe('rateLimitMessage', () => {
  it.each([
    ['perMinute', 600, 23, 'per-minute limit of 600 requests reached; retry after 23 s'],
    ['perHour', 10000, 1200, 'per-hour limit of 10000 requests reached; retry after 1200 s'],
    ['perDay', 100000, 3600, 'per-day limit of 100000 requests reached; retry after 3600 s'],
    ['concurrent', 10, 1, 'limit of 10 requests in flight reached; retry after 1 s'],
  ] as const)('%s', (limit, value, seconds, message) => {
    expect(rateLimitMessage(limit, value, seconds)).toBe(message);
  });
});
