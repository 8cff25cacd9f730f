/**
 * The dataset cache over a source with a change feed: a loaded copy catches up by the recorded changes and
 * the changed records alone (never a reload while it is younger than its maximum age), applies updates,
 * inserts and rows leaving the caller's row filter, and refuses a dataset above the row budget from its count
 * before reading anything.
 */
import type { FieldConfig } from '../../../../../shared/catalog/schema';
import { QueryTimeoutError } from '../../../../../shared/contract/errors';
import {
  DatasetCache,
  type DatasetChange,
  type DatasetChangeFeed,
  type DatasetRecord,
  type DatasetRowSource,
  type ReadRowsRequest,
} from '../../../../../shared/sql/dataset-cache';

const fields: FieldConfig[] = [
  { name: 'region', type: 'string' },
  { name: 'amount', type: 'number' },
];

function record(id: string, region: string, amount: number): DatasetRecord {
  return { id, region, amount, gmt_create: '2024-01-01 10:00:00', gmt_modified: '2024-01-01 10:00:00' };
}

/** An in-memory store that records each write as a change at the clock's time, like the record store does. */
class FeedSource implements DatasetRowSource {
  clock = 1_000_000;
  readonly loads: ReadRowsRequest[] = [];
  readonly byId: string[][] = [];
  readonly changeReads: number[] = [];
  private readonly log: DatasetChange[] = [];
  private sequence = 0;
  readonly changes: DatasetChangeFeed;

  constructor(readonly rows: Map<string, DatasetRecord>) {
    this.changes = {
      rereadMs: 30_000,
      settledMs: 2_000,
      changesSince: async (_code, sinceMs) => {
        this.changeReads.push(sinceMs);
        return this.log.filter((change) => Number(change.position.split('.')[0]) > sinceMs);
      },
      readRowsById: async (_code, ids, request) => {
        this.byId.push([...ids]);
        return ids
          .map((id) => this.rows.get(id))
          .filter((row): row is DatasetRecord => row !== undefined)
          .filter((row) => matches(row, request.rowFilter));
      },
      countRecords: async () => this.rows.size,
    };
  }

  write(row: DatasetRecord): void {
    this.rows.set(row.id as string, row);
    this.sequence += 1;
    this.log.push({ position: `${this.clock}.${this.sequence}`, time: this.clock, ids: [row.id as string] });
  }

  async readRows(_code: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]> {
    this.loads.push(request);
    return [...this.rows.values()].filter((row) => matches(row, request.rowFilter)).slice(0, request.limit);
  }
}

function matches(row: DatasetRecord, filter: Readonly<Record<string, unknown>> | undefined): boolean {
  return Object.entries(filter ?? {}).every(([key, value]) => row[key] === value);
}

function dataset(size: number): Map<string, DatasetRecord> {
  return new Map(
    Array.from(
      { length: size },
      (_, i) => [`r${i}`, record(`r${i}`, i % 2 ? 'EU' : 'US', i)] as [string, DatasetRecord],
    ),
  );
}

describe('DatasetCache with a change feed', () => {
  it('catches up on one write by reading that record alone, and serves the same table when nothing changed', async () => {
    const source = new FeedSource(dataset(1000));
    const cache = new DatasetCache({ now: () => source.clock });
    const view = { datasetCode: 'orders', fields };
    const [loaded] = await cache.tables([view], source);
    expect(loaded?.rows).toHaveLength(1000);
    source.clock += 1000;
    const [unchanged] = await cache.tables([view], source);
    expect(unchanged).toBe(loaded);

    source.clock += 1000;
    source.write(record('r7', 'EU', 700));
    source.write(record('new', 'US', 5));
    source.clock += 1000;
    const [caughtUp] = await cache.tables([view], source);
    expect(source.loads).toHaveLength(1);
    expect(source.byId).toEqual([['r7', 'new']]);
    expect(caughtUp?.rows).toHaveLength(1001);
    expect(caughtUp?.rows.filter((row) => row[0] === 'r7')).toEqual([
      ['r7', 'EU', 700, '2024-01-01 10:00:00', '2024-01-01 10:00:00'],
    ]);
    expect(caughtUp?.key).not.toBe(loaded?.key);

    // The next query re-reads the recent changes (one may land late) but applies none of them again.
    source.clock += 1000;
    const [again] = await cache.tables([view], source);
    expect(again).toBe(caughtUp);
    expect(source.byId).toHaveLength(1);
  });

  it('reads changes again from a re-read window before its last look, so a late change is not missed', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock });
    const view = { datasetCode: 'orders', fields };
    await cache.tables([view], source);
    const lookedAt = source.clock;
    source.clock += 5000;
    await cache.tables([view], source);
    // One read when loading (changes just before the load are not trusted to be in it), one now.
    expect(source.changeReads).toEqual([lookedAt - 30_000, lookedAt - 30_000]);
  });

  it('trusts a load with changes recorded before it, except the last moments a read may not show yet', async () => {
    const source = new FeedSource(dataset(10));
    source.write(record('r1', 'EU', 100));
    source.clock += 5_000;
    source.write(record('r2', 'US', 200));
    source.clock += 500;
    const cache = new DatasetCache({ now: () => source.clock });
    const view = { datasetCode: 'orders', fields };
    await cache.tables([view], source);
    source.clock += 1000;
    await cache.tables([view], source);
    // r1 was written 5.5 s before the load: in it. r2, half a second before: read again to be sure.
    expect(source.byId).toEqual([['r2']]);
  });

  it('drops a row that leaves the caller’s row filter and adds one that enters it', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock });
    const view = { datasetCode: 'orders', fields, rowFilter: { region: 'EU' } };
    const [before] = await cache.tables([view], source);
    expect(before?.rows.map((row) => row[0])).toEqual(['r1', 'r3', 'r5', 'r7', 'r9']);
    source.clock += 10;
    source.write(record('r3', 'US', 3));
    source.write(record('r4', 'EU', 4));
    source.clock += 10;
    const [after] = await cache.tables([view], source);
    expect(after?.rows.map((row) => row[0])).toEqual(['r1', 'r5', 'r7', 'r9', 'r4']);
  });

  it('loads afresh once the copy is older than its maximum age', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock, maxAgeMs: 60_000 });
    const view = { datasetCode: 'orders', fields };
    await cache.tables([view], source);
    source.clock += 60_000;
    await cache.tables([view], source);
    expect(source.loads).toHaveLength(2);
  });

  it('refuses a dataset above the row budget from its count, before reading any row', async () => {
    const source = new FeedSource(dataset(51));
    const cache = new DatasetCache({ now: () => source.clock, rowBudget: 50 });
    await expect(cache.tables([{ datasetCode: 'orders', fields }], source)).rejects.toEqual(
      new QueryTimeoutError(
        "the query's datasets hold more than 50 rows, the most custom SQL loads at once; narrow the data (a smaller dataset or a row filter) or read it page by page with get-list",
      ),
    );
    expect(source.loads).toHaveLength(0);
  });

  it('passes the load deadline to the source', async () => {
    const source = new FeedSource(dataset(3));
    const cache = new DatasetCache({ now: () => source.clock });
    await cache.tables([{ datasetCode: 'orders', fields }], source, {
      loadLimit: { ms: 4000, message: 'too slow' },
    });
    expect(source.loads[0]?.deadline).toEqual({ at: source.clock + 4000, message: 'too slow' });
  });
});
