/** The quota item's pure logic: the refusals an image proves, the write's expression, the headers and the messages. */
import type { Quota } from '../../../../shared/catalog/catalog';
import { type QuotaWrite, slotRefusal, staleWindows, windowRefusal } from '../../../../shared/quota/quota-image';
import { rateLimitHeaders, rateLimitMessage, tightestWindow } from '../../../../shared/quota/rate-limit';
import { currentWindows } from '../../../../shared/quota/windows';
import { decodeQuotaItem, plainAttributes, writeExpression } from '../../../../shared/storage/quota-item';

const at = (iso: string) => Date.parse(iso);
const NOW = at('2026-11-22T04:10:37Z');
const QUOTA: Quota = { perMinute: 5, perHour: 100, perDay: 1000, concurrent: 2 };

describe('refusals an image proves', () => {
  it('names the window that ends last among those at their limit, and ignores ended windows', () => {
    const image = {
      leases: {},
      counters: { 'm#2026-11-22T04:10': 5, 'h#2026-11-22T04': 100, 'm#2026-11-22T04:09': 9 },
      unspent: {},
    };
    expect(windowRefusal(image, QUOTA, NOW)).toEqual({ limit: 'perHour', value: 100, retryAfterSeconds: 2963 });
    expect(windowRefusal({ leases: {}, counters: { 'm#2026-11-22T04:09': 9 }, unspent: {} }, QUOTA, NOW)).toBe(
      undefined,
    );
  });

  it("counts other holders' leases live past the clock skew, until the first of them lapses", () => {
    const image = { leases: { a: NOW + 1_500, mine: NOW + 900 }, counters: {}, unspent: {} };
    expect(slotRefusal(image, QUOTA, 'me', NOW, 100)).toEqual({
      limit: 'concurrent',
      value: 2,
      retryAfterSeconds: 1,
    });
    // Its own lease is no other holder's; a lease within the skew of lapsing is not counted on.
    expect(slotRefusal(image, QUOTA, 'mine', NOW, 100)).toBe(undefined);
    expect(slotRefusal({ ...image, leases: { a: NOW + 1_500, b: NOW + 50 } }, QUOTA, 'me', NOW, 100)).toBe(undefined);
  });

  it('lists ended windows (counters and unspent tallies) once they ended a minute ago', () => {
    const image = {
      counters: { 'm#2026-11-22T04:08': 3, 'm#2026-11-22T04:09': 2, 'm#2026-11-22T04:10': 1 },
      unspent: { 'm#2026-11-22T04:08': 1 },
    };
    expect(staleWindows(image, NOW)).toEqual(['m#2026-11-22T04:08']);
  });
});

describe('writeExpression', () => {
  const write: QuotaWrite = {
    windows: currentWindows(NOW),
    quota: QUOTA,
    take: 3,
    holder: 'me',
    expiry: NOW + 1_900,
    asserted: { y: NOW - 10 },
    unspentDelta: 2,
    unspentCap: 4,
    purge: ['m#2026-11-22T04:08'],
    returned: { 'h#2026-11-22T04': 2 },
  };

  it('takes a block under every window limit, a free slot counting the asserted lapsed leases, within the cap', () => {
    const parts = writeExpression(write);
    expect(parts.ConditionExpression).toBe(
      'attribute_exists(#leases) AND NOT #w0 >= :r0 AND NOT #w1 >= :r1 AND NOT #w2 >= :r2 AND ' +
        'size(#leases) < :room AND #leases.#a0 = :a0 AND NOT #u >= :ur',
    );
    // counter + 3 <= limit (the hour: + 3 - 2 given back from an ended minute); 2 leases + the asserted one;
    // unspent + 2 <= 4
    expect(parts.ExpressionAttributeValues).toMatchObject({ ':r0': 3, ':r1': 100, ':r2': 998, ':room': 3, ':ur': 3 });
    expect(parts.ExpressionAttributeValues[':a0']).toBe(NOW - 10);
    expect(parts.UpdateExpression).toBe(
      'SET #leases.#me = :expiry, #ttl = :ttl ADD #w0 :d0, #w1 :d1, #w2 :d2, #u :delta ' +
        'REMOVE #leases.#a0, #s0, #t0',
    );
    expect(parts.ExpressionAttributeNames).toMatchObject({ '#u': 'u#2026-11-22T04:10', '#t0': 'u#2026-11-22T04:08' });
    expect(parts.ExpressionAttributeValues[':ttl']).toBe(at('2026-11-24T00:00:00Z') / 1000);
  });

  it('renews its own lease at the value it wrote, taking nothing and reporting tokens spent', () => {
    const parts = writeExpression({
      ...write,
      take: 0,
      renewFrom: NOW - 200,
      asserted: {},
      unspentDelta: -1,
      purge: [],
      returned: {},
    });
    expect(parts.ConditionExpression).toBe('attribute_exists(#leases) AND #leases.#me = :from');
    expect(parts.UpdateExpression).toBe('SET #leases.#me = :expiry, #ttl = :ttl ADD #u :delta');
    // DynamoDB refuses names the expressions do not use.
    expect(Object.keys(parts.ExpressionAttributeNames).sort()).toEqual(['#leases', '#me', '#ttl', '#u']);
  });
});

describe('decoding', () => {
  it('reads the wire format a ConditionalCheckFailedException carries', () => {
    const raw = {
      pk: { S: 'app#a' },
      leases: { M: { l1: { N: '1795000000000' } } },
      'm#2026-11-22T04:10': { N: '7' },
      'u#2026-11-22T04:10': { N: '2' },
      expiresAt: { N: '1795400000' },
    };
    expect(decodeQuotaItem(plainAttributes(raw))).toEqual({
      leases: { l1: 1795000000000 },
      counters: { 'm#2026-11-22T04:10': 7 },
      unspent: { 'm#2026-11-22T04:10': 2 },
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
