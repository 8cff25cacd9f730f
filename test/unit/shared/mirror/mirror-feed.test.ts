/**
 * docs/interface.md §20, read-your-writes: a query waits within its limit for the mirror to hold every write
 * acknowledged before it started, and past the limit answers 2001 saying how far behind the mirror is (or that a
 * dataset is still being copied into it). The feed here runs over a database that holds nothing, with the change
 * log's writer as slow as the test makes it.
 */
import { QueryTimeoutError } from '../../../../shared/contract/errors';
import { MirrorFeed } from '../../../../shared/mirror/mirror-feed';
import { MirrorTables } from '../../../../shared/mirror/mirror-tables';

function feedWith(logged: () => Promise<void>, now: () => number): MirrorFeed {
  return new MirrorFeed({
    tables: new MirrorTables({ execute: async () => [] }),
    datasets: async () => [{ datasetCode: 'orders', fields: [{ name: 'amount', type: 'number' }] }],
    events: { settleMs: 0, read: async () => ({ changes: [], more: false }) },
    logged,
    changeRetentionDays: async () => 30,
    backfill: { records: { readRecords: async () => ({ items: [] }) }, recordsPerSecond: 0 },
    idleMs: 3_600_000,
    now,
  });
}

const never = () => new Promise<void>(() => undefined);

describe('a query waiting for the MySQL mirror', () => {
  it('answers 2001 naming a dataset still being copied when the mirror never caught up', async () => {
    const feed = feedWith(never, Date.now);
    feed.start();
    const started = Date.now();
    const waiting = feed.caughtUp(['orders'], started, started + 200, 200);
    await expect(waiting).rejects.toThrow(QueryTimeoutError);
    await expect(feed.caughtUp(['orders'], started, started, 200)).rejects.toThrow(
      "the MySQL mirror did not catch up with the writes made before this query within its limit of 200 ms (dataset 'orders' is still being copied into it); try again shortly",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('goes on once a round has applied what was written before the query, and says how far behind it is when not', async () => {
    let clock = 1_000_000;
    let rounds = 0;
    // The change log holds every write the first time it is asked; after that its writer falls behind for good.
    const feed = feedWith(
      () => (rounds++ === 0 ? Promise.resolve() : never()),
      () => clock,
    );
    feed.start();
    await feed.caughtUp(['orders'], 999_000, clock + 60_000, 5_000);
    for (let i = 0; i < 50 && feed.lagSeconds('orders') === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(feed.lagSeconds('orders')).toBe(0);
    // A query that started before the round's moment goes on at once.
    await feed.caughtUp(['orders'], clock - 1, clock, 5_000);
    clock += 7_000;
    await expect(feed.caughtUp(['orders'], clock - 10, clock, 5_000)).rejects.toThrow(
      "within its limit of 5000 ms (dataset 'orders' is 7 s behind)",
    );
  });
});
