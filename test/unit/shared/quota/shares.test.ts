/** The sharding rule of quota items (`shared/quota/shares.ts`) and the size bound of one item. */
import { MAX_LEASES_PER_SHARE, shareCount, shareQuota } from '../../../../shared/quota/shares';
import { estimateItemBytes, type QuotaItem } from '../../../../shared/storage/quota-item';

const DEFAULTS = { perMinute: 600, perHour: 10_000, perDay: 100_000, concurrent: 10 };

describe('shareCount', () => {
  it('keeps the default limits on one item', () => {
    expect(shareCount(DEFAULTS)).toBe(1);
  });

  it('adds a share per 12,000 requests a minute (400 writes/s with their releases)', () => {
    const roomy = { perHour: 1e6, perDay: 1e7, concurrent: 100 };
    expect(shareCount({ ...roomy, perMinute: 12_000, concurrent: 10 })).toBe(1);
    expect(shareCount({ ...roomy, perMinute: 12_001, concurrent: 10 })).toBe(2);
    expect(shareCount({ ...roomy, perMinute: 48_000 })).toBe(4);
  });

  it('adds a share per 32 requests in flight, so that every item stays under 1 KB', () => {
    expect(shareCount({ ...DEFAULTS, concurrent: 32 })).toBe(1);
    expect(shareCount({ ...DEFAULTS, concurrent: 33 })).toBe(2);
    expect(shareCount({ ...DEFAULTS, concurrent: 100 })).toBe(4);
  });

  it('leaves every share at least 4 requests in flight', () => {
    expect(shareCount({ perMinute: 600_000, perHour: 1e7, perDay: 1e8, concurrent: 10 })).toBe(2);
    expect(shareCount({ perMinute: 600_000, perHour: 1e7, perDay: 1e8, concurrent: 3 })).toBe(1);
  });

  it('never makes a share with nothing to admit', () => {
    expect(shareCount({ perMinute: 3, perHour: 10_000, perDay: 100_000, concurrent: 100 })).toBe(3);
    expect(shareCount({ perMinute: 60_000, perHour: 10_000, perDay: 100_000, concurrent: 1 })).toBe(1);
  });
});

describe('shareQuota', () => {
  it('splits every limit so that the shares add up to it exactly', () => {
    const quota = { perMinute: 10, perHour: 10_000, perDay: 100_001, concurrent: 100 };
    const parts = [0, 1, 2, 3].map((k) => shareQuota(quota, 4, k));
    expect(parts.map((part) => part.perMinute)).toEqual([3, 3, 2, 2]);
    expect(parts.map((part) => part.perDay)).toEqual([25_001, 25_000, 25_000, 25_000]);
    expect(parts.map((part) => part.concurrent)).toEqual([25, 25, 25, 25]);
    expect(parts.reduce((sum, part) => sum + part.perHour, 0)).toBe(10_000);
  });

  it('is the limits themselves for one share', () => {
    expect(shareQuota(DEFAULTS, 1, 0)).toBe(DEFAULTS);
  });
});

describe('item size', () => {
  it('stays under 1 KB with a full lease map, the longest appCode and stale windows not yet removed', () => {
    const appCode = 'a'.repeat(64);
    const leases: Record<string, number> = {};
    for (let k = 0; k < MAX_LEASES_PER_SHARE; k += 1)
      leases[`lease-${String(k).padStart(2, '0')}`] = 1_795_000_000_000 + k;
    const item: QuotaItem = {
      leases,
      counters: {
        'm#2026-11-22T04:10': 199_999,
        'm#2026-11-22T04:09': 199_999,
        'm#2026-11-22T04:08': 199_999,
        'h#2026-11-22T04': 999_999,
        'h#2026-11-22T03': 999_999,
        'd#2026-11-22': 9_999_999,
        'd#2026-11-21': 9_999_999,
      },
    };
    expect(estimateItemBytes(appCode, item, 9)).toBeLessThan(1_000);
  });
});
