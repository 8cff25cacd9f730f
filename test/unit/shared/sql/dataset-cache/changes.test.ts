/**
 * The dataset cache over a source with a change feed (changes claimed before their writes, as the record store
 * claims change items): a loaded copy catches up by the recorded changes and the changed records alone, reads a
 * change again while its write has not landed, never catches up at a higher cost than a reload (reading past its
 * share of a load when the dataset's count says the records created since cost less to catch up), weighs each
 * dataset of a query by its own reads, refuses the row budget before reading anything, and a query waiting for
 * another's load gives up at its own limit.
 */
import type { FieldConfig } from '../../../../../shared/catalog/schema';
import { QueryTimeoutError } from '../../../../../shared/contract/errors';
import { changedRecordReads } from '../../../../../shared/sql/catch-up-plan';
import { DatasetCache } from '../../../../../shared/sql/dataset-cache';
import type {
  ChangedRecord,
  DatasetChange,
  DatasetChangeFeed,
  DatasetRecord,
  DatasetRowSource,
  ReadRowsRequest,
} from '../../../../../shared/sql/dataset-source';

const fields: FieldConfig[] = [
  { name: 'region', type: 'string' },
  { name: 'amount', type: 'number' },
];

const REREAD_MS = 3_000;
const SETTLE_MS = 30_000;

function record(id: string, region: string, amount: number): DatasetRecord {
  return { id, region, amount, gmt_create: '2024-01-01 10:00:00', gmt_modified: '2024-01-01 10:00:00' };
}

/**
 * An in-memory store whose writes claim a change at the clock's time before they land, like the record store;
 * a read costs `rowUnits` per row loaded (one unless set), one unit per record read by id, twice `rowUnits` per
 * record read in a key range (consistently, by bytes like a load), `changeUnits` per change read (none unless
 * set) and `countUnits` per count. Changed records are read as `changedRecordReads` groups them, as the record
 * store reads them. With `interleave`, each read waits a turn before it is counted, as a read over the network
 * does, so that the reads of a query's datasets interleave.
 */
class FeedSource implements DatasetRowSource {
  clock = 1_000_000;
  units = 0;
  rowUnits = 1;
  changeUnits = 0;
  countUnits = 0;
  interleave = false;
  /** How many changes each bounded read of the feed read. */
  readonly changesRead: number[] = [];
  readonly loads: ReadRowsRequest[] = [];
  /** The records read to catch up, per catch-up: in key ranges, and by id. */
  readonly byId: string[][] = [];
  readonly inRanges: string[][] = [];
  /** How many changes each unbounded read of the feed (a load's) read. */
  readonly changesSinceRead: number[] = [];
  readonly changeReads: number[] = [];
  readonly counts: number[] = [];
  private readonly log: DatasetChange[] = [];
  private readonly revisions = new Map<string, number>();
  private sequence = 0;
  /** Set to make the next load wait until it is resolved. */
  holdLoad?: Promise<void>;
  /** Called as a count is read, before it answers. */
  onCount?: () => Promise<void>;
  readonly changes: DatasetChangeFeed;

  constructor(readonly rows: Map<string, DatasetRecord>) {
    this.changes = this.feed(
      () => this.units,
      (units) => {
        this.units += units;
      },
    );
  }

  /** The feed, its reads counted by `charge` (and told by `unitsRead`). */
  private feed(unitsRead: () => number, charge: (units: number) => void): DatasetChangeFeed {
    return {
      rereadMs: REREAD_MS,
      settleMs: SETTLE_MS,
      changesSince: async (_code, sinceMs, known) => {
        this.changeReads.push(sinceMs);
        const through = known?.through === undefined ? -1 : this.log.findIndex((c) => c.position === known.through);
        const read = this.log.filter(
          (change, i) => change.time > sinceMs && !(known && change.time > known.fromMs && i <= through),
        );
        await this.turn();
        charge(read.length * this.changeUnits);
        this.changesSinceRead.push(read.length);
        return read;
      },
      changesWithin: async (_code, sinceMs, allowance) => {
        this.changeReads.push(sinceMs);
        const all = this.log.filter((change) => change.time > sinceMs);
        const read: DatasetChange[] = [];
        while (read.length < all.length) {
          const page = await allowance(read);
          if (page <= 0) break;
          const next = all.slice(read.length, read.length + page);
          await this.turn();
          charge(next.length * this.changeUnits);
          read.push(...next);
        }
        this.changesRead.push(read.length);
        return { changes: read, complete: read.length === all.length };
      },
      readChanged: async (_code, changes, request): Promise<ChangedRecord[]> => {
        const { ranges, byId } = changedRecordReads(changes);
        const inRanges = ranges.flatMap((range) => range.ids);
        this.byId.push(byId);
        this.inRanges.push(inRanges);
        await this.turn();
        charge(byId.length + inRanges.length * 2 * this.rowUnits);
        const ids = [...new Set([...inRanges, ...byId])];
        return ids.flatMap((id) => {
          const row = this.rows.get(id);
          if (!row) return [];
          return [{ id, revision: this.revisions.get(id) ?? 1, ...(matches(row, request.rowFilter) ? { row } : {}) }];
        });
      },
      countRecords: async (_code, atMost) => {
        this.counts.push(atMost);
        await this.onCount?.();
        await this.turn();
        charge(this.countUnits);
        return this.rows.size;
      },
      unitsRead,
      apart: () => {
        let own = 0;
        const charged = (units: number) => {
          own += units;
          charge(units);
        };
        return {
          readRows: (_code, request) => this.read(request, charged),
          changes: this.feed(() => own, charged),
        };
      },
      detached: () => {
        let own = 0;
        const counted = (units: number) => {
          own += units;
        };
        return { readRows: (_code, request) => this.read(request, counted), changes: this.feed(() => own, counted) };
      },
      charge,
    };
  }

  private async turn(): Promise<void> {
    if (this.interleave) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Claim a write of `row` now; it lands when the returned function is called. */
  claim(row: DatasetRecord): () => void {
    const id = row.id as string;
    const exists = this.rows.has(id);
    const revision = (this.revisions.get(id) ?? (exists ? 1 : 0)) + 1;
    this.sequence += 1;
    this.log.push({
      position: `${this.clock}.${this.sequence}`,
      time: this.clock,
      ids: [id],
      revision,
      created: exists ? 0 : 1,
    });
    return () => {
      this.rows.set(id, row);
      this.revisions.set(id, revision);
    };
  }

  write(row: DatasetRecord): void {
    this.claim(row)();
  }

  readRows(_code: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]> {
    return this.read(request, (units) => {
      this.units += units;
    });
  }

  private async read(request: ReadRowsRequest, charge: (units: number) => void): Promise<readonly DatasetRecord[]> {
    this.loads.push(request);
    if (this.holdLoad) await this.holdLoad;
    const rows = [...this.rows.values()].filter((row) => matches(row, request.rowFilter)).slice(0, request.limit);
    await this.turn();
    charge(rows.length * this.rowUnits);
    for (const row of rows) {
      const id = row.id as string;
      if (request.watch?.has(id)) request.seen?.(id, this.revisions.get(id) ?? 1);
    }
    return rows;
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

const view = { datasetCode: 'orders', fields };

describe('DatasetCache with a change feed', () => {
  it('catches up on one write by reading that record alone, and serves the same table when nothing changed', async () => {
    const source = new FeedSource(dataset(1000));
    const cache = new DatasetCache({ now: () => source.clock });
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

    // The next query reads the recent changes again (one may land late) but applies none of them again.
    source.clock += 1000;
    const [again] = await cache.tables([view], source);
    expect(again).toBe(caughtUp);
    expect(source.byId).toHaveLength(1);
  });

  it('keeps a small copy loaded right after writes: the re-read window’s changes, applied already, weigh nothing', async () => {
    const source = new FeedSource(dataset(4));
    source.rowUnits = 0.25;
    source.changeUnits = 0.5;
    const cache = new DatasetCache({ now: () => source.clock });
    for (let i = 0; i < 12; i += 1) source.write(record(`w${i}`, 'EU', i));
    source.clock += 1000;
    const [loaded] = await cache.tables([view], source);
    expect(loaded?.rows).toHaveLength(16);
    source.clock += 500;
    const unitsBefore = source.units;
    const [warm] = await cache.tables([view], source);
    // Reading the window's twelve changes (6 units) costs more than loading the 16 rows (4): the copy is kept all
    // the same, since a load would not spare that read.
    expect(warm).toBe(loaded);
    expect(source.loads).toHaveLength(1);
    expect(source.changesRead).toEqual([12]);
    expect(source.units - unitsBefore).toBe(6);
  });

  it('reads changes again from a re-read window before its last look, so a late change is not missed', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock });
    const loadedAt = source.clock;
    await cache.tables([view], source);
    source.clock += 5000;
    await cache.tables([view], source);
    const lookedAt = source.clock;
    source.clock += 5000;
    await cache.tables([view], source);
    // The load watches the settle window before it; each later look reads from its previous look less the window.
    expect(source.changeReads).toEqual([loadedAt - SETTLE_MS, loadedAt - REREAD_MS, lookedAt - REREAD_MS]);
  });

  it('trusts a load with the records it showed at their new revision, and reads again a write that had not landed', async () => {
    const source = new FeedSource(dataset(10));
    source.write(record('r1', 'EU', 100));
    source.clock += 500;
    const landR2 = source.claim(record('r2', 'US', 200));
    source.clock += 500;
    const cache = new DatasetCache({ now: () => source.clock });
    const [loaded] = await cache.tables([view], source);
    expect(loaded?.rows.find((row) => row[0] === 'r2')).toEqual([
      'r2',
      'US',
      2,
      '2024-01-01 10:00:00',
      '2024-01-01 10:00:00',
    ]);
    landR2();
    source.clock += 1000;
    const [caughtUp] = await cache.tables([view], source);
    // r1's write was in the load; r2's was claimed but not written when the load read it.
    expect(source.byId).toEqual([['r2']]);
    expect(caughtUp?.rows.find((row) => row[0] === 'r2')?.[2]).toBe(200);
    source.clock += 1000;
    await cache.tables([view], source);
    expect(source.byId).toHaveLength(1);
  });

  it('reads a claimed change again until its write lands, and drops it once it has settled', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock });
    await cache.tables([view], source);
    source.clock += 1000;
    const land = source.claim(record('r3', 'EU', 333));
    source.clock += 1000;
    await cache.tables([view], source);
    source.clock += 10_000;
    await cache.tables([view], source);
    expect(source.byId).toEqual([['r3'], ['r3']]);
    land();
    source.clock += 1000;
    const [caughtUp] = await cache.tables([view], source);
    expect(caughtUp?.rows.find((row) => row[0] === 'r3')?.[2]).toBe(333);
    expect(source.byId).toHaveLength(3);
    // A claim whose write never lands is read until it has settled, then no more.
    source.claim(record('r4', 'US', 444));
    source.clock += 1000;
    await cache.tables([view], source);
    source.clock += SETTLE_MS;
    await cache.tables([view], source);
    source.clock += 1000;
    await cache.tables([view], source);
    expect(source.byId.slice(3)).toEqual([['r4'], ['r4']]);
  });

  it('drops a row that leaves the caller’s row filter and adds one that enters it', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock });
    const euView = { datasetCode: 'orders', fields, rowFilter: { region: 'EU' } };
    const [before] = await cache.tables([euView], source);
    expect(before?.rows.map((row) => row[0])).toEqual(['r1', 'r3', 'r5', 'r7', 'r9']);
    source.clock += 10;
    source.write(record('r3', 'US', 3));
    source.write(record('r4', 'EU', 4));
    source.clock += 10;
    const [after] = await cache.tables([euView], source);
    expect(after?.rows.map((row) => row[0])).toEqual(['r1', 'r5', 'r7', 'r9', 'r4']);
  });

  it('loads afresh instead of catching up when reading the changed records would cost more', async () => {
    const source = new FeedSource(dataset(40));
    const cache = new DatasetCache({ now: () => source.clock });
    await cache.tables([view], source);
    source.clock += 1000;
    // 30 records changed, each read by id at two units (consistently) against one unit a row for a load.
    for (let i = 0; i < 30; i++) source.write(record(`r${i}`, 'EU', 1000 + i));
    source.clock += 1000;
    const unitsBefore = source.units;
    const [table] = await cache.tables([view], source);
    expect(source.loads).toHaveLength(2);
    expect(source.byId).toEqual([]);
    expect(source.units - unitsBefore).toBe(40);
    expect(table?.rows.find((row) => row[0] === 'r29')?.[2]).toBe(1029);
  });

  // Figures measured on the embedded store: 10,000 records of 8 fields load for 680 read units (0.068 a record);
  // a single write's change item costs 0.037 of a unit to read consistently; a record read by id costs one.
  async function measuredCopy(size = 10_000) {
    const source = new FeedSource(dataset(size));
    source.rowUnits = 0.068;
    source.changeUnits = 0.037;
    const cache = new DatasetCache({ now: () => source.clock });
    await cache.tables([view], source);
    return { source, cache };
  }

  it('after 1,000 single creates on 10,000 records, catches up for 174 units: the count tells it is cheaper than a load', async () => {
    const { source, cache } = await measuredCopy();
    expect(source.units).toBeCloseTo(680, 6);
    expect(source.changesSinceRead).toEqual([0]);
    source.countUnits = 1;
    source.clock += 1000;
    for (let i = 0; i < 1000; i++) source.write(record(`n${i}`, 'EU', i));
    source.clock += 1000;
    const unitsBefore = source.units;
    const [table] = await cache.tables([view], source);
    expect(table?.rows).toHaveLength(11_000);
    expect(source.loads).toHaveLength(1);
    // The share (2 % of the 680 the load cost: 13.6 units) is spent after 50 change items and 318 more, 368 at
    // 0.037 (13.616 units). The count (1 unit, read up to 10,000 + 6,312 records: past that many creates a catch-up
    // at their rate would cost more than a load) says 1,000 records were created since the load: at the 0.1757 a
    // create the 368 cost to catch up (13.616 + 368 records in a range at 0.136 + 1), catching up 1,000 would cost
    // 176.7 with the count, against 748 for a load of 11,000. So the decision reads on, the other 632 in one page:
    // 1,000 change items (37 units), the count (1) and the 1,000 new records in one range (136), 174 in all, where
    // loading afresh cost 785 (13.616 + 748 + the 632 change items the decision had not read, 23.384).
    expect(source.counts).toEqual([200_000, 16_312]);
    expect(source.changesRead.at(-1)).toBe(1000);
    expect(source.inRanges.at(-1)).toHaveLength(1000);
    expect(source.byId.at(-1)).toEqual([]);
    expect(source.units - unitsBefore).toBeCloseTo(37 + 1 + 136, 6);
  });

  it('after 1,000 updates on 10,000 records, loads afresh having read change items for 2 % of a load, and no count', async () => {
    const { source, cache } = await measuredCopy();
    source.countUnits = 1;
    source.clock += 1000;
    for (let i = 0; i < 1000; i++) source.write(record(`r${i}`, 'EU', 5000 + i));
    source.clock += 1000;
    const unitsBefore = source.units;
    const [table] = await cache.tables([view], source);
    expect(table?.rows).toHaveLength(10_000);
    expect(table?.rows.find((row) => row[0] === 'r999')?.[2]).toBe(5999);
    expect(source.byId).toEqual([]);
    // Updates leave the count as it is, so it could not tell a catch-up cheaper: the decision spends its share,
    // 368 change items at 0.037 (13.616 units), and the dataset is counted only against the row budget (1 unit)
    // before the fresh load of 10,000 records (680 units), which reads the 632 change items the decision did not
    // (23.384 units) to know its position, not the 368 again.
    expect(source.changesRead.at(-1)).toBe(368);
    expect(source.counts).toEqual([200_000, 200_000]);
    expect(source.changesSinceRead.at(-1)).toBe(632);
    expect(source.units - unitsBefore).toBeCloseTo(13.616 + 1 + 680 + 23.384, 6);
    // The reloaded copy knows its position: the next query (past the re-read window) applies none of them again.
    source.clock += REREAD_MS;
    const [again] = await cache.tables([view], source);
    expect(again).toBe(table);
    expect(source.byId).toEqual([]);
    expect(source.inRanges).toEqual([]);
  });

  it('with a row filter, the count cannot tell what the view gained: the decision spends its 2 % and loads afresh', async () => {
    const source = new FeedSource(dataset(10_000));
    source.rowUnits = 0.068;
    source.changeUnits = 0.037;
    source.countUnits = 1;
    const cache = new DatasetCache({ now: () => source.clock });
    const euView = { datasetCode: 'orders', fields, rowFilter: { region: 'EU' } };
    const [loaded] = await cache.tables([euView], source);
    expect(loaded?.rows).toHaveLength(5000);
    source.clock += 1000;
    for (let i = 0; i < 1000; i++) source.write(record(`n${i}`, 'EU', i));
    source.clock += 1000;
    const unitsBefore = source.units;
    const [table] = await cache.tables([euView], source);
    expect(table?.rows).toHaveLength(6000);
    // 2 % of the 340 the load of 5,000 rows cost: 50 change items and 134 more (6.808 units), then the load of
    // 6,000 rows (408) and the 816 change items the decision did not read (30.192). Nothing counted.
    expect(source.changesRead.at(-1)).toBe(184);
    expect(source.counts).toEqual([]);
    expect(source.loads).toHaveLength(2);
    expect(source.units - unitsBefore).toBeCloseTo(6.808 + 408 + 30.192, 6);
  });

  it('after 300 single creates on 10,000 records, catches up reading their records as one range, by bytes', async () => {
    const { source, cache } = await measuredCopy();
    source.clock += 1000;
    for (let i = 0; i < 300; i++) source.write(record(`n${i}`, 'EU', i));
    source.clock += 1000;
    const unitsBefore = source.units;
    const [table] = await cache.tables([view], source);
    expect(table?.rows).toHaveLength(10_300);
    expect(source.loads).toHaveLength(1);
    // 300 change items (11.1 units) and 300 records in one range at twice a load's 0.068 (40.8 units): 51.9, where
    // reading them by id cost 311.1, against 700.4 for a load of 10,300.
    expect(source.changesRead.at(-1)).toBe(300);
    expect(source.inRanges.at(-1)).toHaveLength(300);
    expect(source.byId.at(-1)).toEqual([]);
    expect(source.units - unitsBefore).toBeCloseTo(51.9, 6);
  });

  it('after 1,000 single creates on 100,000 records, catches up for 173 units where reading them by id cost 1,037', async () => {
    const { source, cache } = await measuredCopy(100_000);
    source.clock += 1000;
    for (let i = 0; i < 1000; i++) source.write(record(`n${i}`, 'EU', i));
    // One of them updated after its create, and an older record: the first comes out as it is now, in the range.
    source.write(record('n7', 'US', 7000));
    source.write(record('r5', 'US', 5000));
    source.clock += 1000;
    const unitsBefore = source.units;
    const [table] = await cache.tables([view], source);
    expect(table?.rows).toHaveLength(101_000);
    expect(source.loads).toHaveLength(1);
    // 1,002 change items (37.074 units: within 2 % of a load of 6,800), the 1,000 new records in one range (136)
    // and r5 by id (1).
    expect(source.changesRead.at(-1)).toBe(1002);
    expect(source.inRanges.at(-1)).toHaveLength(1000);
    expect(source.byId.at(-1)).toEqual(['r5']);
    expect(source.units - unitsBefore).toBeCloseTo(37.074 + 136 + 1, 6);
    expect(table?.rows.filter((row) => row[0] === 'n7' || row[0] === 'r5')).toEqual([
      ['n7', 'US', 7000, '2024-01-01 10:00:00', '2024-01-01 10:00:00'],
      ['r5', 'US', 5000, '2024-01-01 10:00:00', '2024-01-01 10:00:00'],
    ]);
  });

  it('weighs each dataset of a query by its own reads, though their loads and plans run at once', async () => {
    // Two datasets behind one request's meter; each read waits a turn, so the loads' reads (and the plans') interleave.
    const small = new FeedSource(dataset(100));
    const large = new FeedSource(dataset(10_000));
    for (const source of [small, large]) {
      source.rowUnits = 0.068;
      source.changeUnits = 0.037;
      source.interleave = true;
    }
    const of = (code: string) => (code === 'small' ? small : large);
    const part = () => ({ small: small.changes.apart(), orders: large.changes.apart() });
    const within = (parts: ReturnType<typeof part>): DatasetChangeFeed => {
      const by = (code: string) => (code === 'small' ? parts.small : parts.orders).changes;
      return {
        rereadMs: REREAD_MS,
        settleMs: SETTLE_MS,
        changesSince: (code, sinceMs, known) => by(code).changesSince(code, sinceMs, known),
        changesWithin: (code, sinceMs, allowance) => by(code).changesWithin(code, sinceMs, allowance),
        readChanged: (code, changes, request) => by(code).readChanged(code, changes, request),
        countRecords: (code, atMost) => by(code).countRecords(code, atMost),
        // The request's meter: every read of both datasets.
        unitsRead: () => small.units + large.units,
        apart: () => {
          const own = part();
          return {
            readRows: (code, request) => (code === 'small' ? own.small : own.orders).readRows(code, request),
            changes: {
              ...within(own),
              unitsRead: () => own.small.changes.unitsRead() + own.orders.changes.unitsRead(),
            },
          };
        },
        detached: () => {
          const own = { small: small.changes.detached(), orders: large.changes.detached() };
          return {
            readRows: (code, request) => (code === 'small' ? own.small : own.orders).readRows(code, request),
            changes: {
              ...within(own),
              unitsRead: () => own.small.changes.unitsRead() + own.orders.changes.unitsRead(),
            },
          };
        },
        charge: (units) => small.changes.charge(units),
      };
    };
    const request: DatasetRowSource = {
      readRows: (code, rowsRequest) => of(code).readRows(code, rowsRequest),
      changes: within(part()),
    };
    const views = [view, { datasetCode: 'small', fields }];
    const cache = new DatasetCache({ now: () => small.clock });
    await cache.tables(views, request);
    expect(small.units + large.units).toBeCloseTo(6.8 + 680, 6);
    // Ten updates of the small dataset, 300 creates in the large one.
    for (const source of [small, large]) source.clock += 1000;
    for (let i = 0; i < 10; i++) small.write(record(`r${i}`, 'EU', 900 + i));
    for (let i = 0; i < 300; i++) large.write(record(`n${i}`, 'EU', i));
    for (const source of [small, large]) source.clock += 1000;
    const unitsBefore = small.units + large.units;
    const [largeTable, smallTable] = await cache.tables(views, request);
    expect(smallTable?.rows.find((row) => row[0] === 'r9')?.[2]).toBe(909);
    expect(largeTable?.rows).toHaveLength(10_300);
    // The small copy's load cost 6.8 (0.068 a row; counted with the large one's 680 it would have seemed 6.87 a
    // row): its ten records read by id (a unit each) cost more than loading it again, so it is loaded afresh
    // (0.37 of change items and 6.8). The large copy catches up (300 change items, 11.1, and the 300 records in a
    // range, 40.8).
    expect(small.loads).toHaveLength(2);
    expect(small.byId).toEqual([]);
    expect(large.loads).toHaveLength(1);
    expect(large.inRanges).toEqual([expect.arrayContaining(['n0', 'n299'])]);
    expect(small.units + large.units - unitsBefore).toBeCloseTo(0.37 + 6.8 + 11.1 + 40.8, 6);
  });

  it('reads the records of creates far apart in time by id, and weighs them so', async () => {
    const source = new FeedSource(dataset(100));
    const cache = new DatasetCache({ now: () => source.clock });
    await cache.tables([view], source);
    for (let i = 0; i < 3; i++) {
      source.clock += 5_000;
      source.write(record(`n${i}`, 'EU', i));
    }
    source.clock += 1000;
    await cache.tables([view], source);
    expect(source.inRanges).toEqual([[]]);
    expect(source.byId).toEqual([['n0', 'n1', 'n2']]);
  });

  it('reads no change item when the changes it still owes already cost more than a load', async () => {
    const source = new FeedSource(dataset(20));
    const cache = new DatasetCache({ now: () => source.clock });
    source.clock += 1000;
    // Claimed while the load reads, landed after it: owed by the copy, 25 records at 2 units against a load of 20.
    const lands = Array.from({ length: 25 }, (_, i) => source.claim(record(`r${i}`, 'EU', 500 + i)));
    source.clock += 1000;
    await cache.tables([view], source);
    for (const land of lands) land();
    source.clock += 1000;
    const [table] = await cache.tables([view], source);
    expect(source.changesRead).toEqual([0]);
    expect(source.loads).toHaveLength(2);
    expect(table?.rows.find((row) => row[0] === 'r24')?.[2]).toBe(524);
  });

  it('weighs a fresh load against the row budget by the dataset’s count, not by the copy it replaces as well', async () => {
    const source = new FeedSource(dataset(30));
    const cache = new DatasetCache({ now: () => source.clock, rowBudget: 50 });
    await cache.tables([view], source);
    source.clock += 1000;
    for (let i = 0; i < 30; i++) source.write(record(`r${i}`, 'US', 2000 + i));
    source.clock += 1000;
    const [table] = await cache.tables([view], source);
    expect(source.loads).toHaveLength(2);
    expect(table?.rows).toHaveLength(30);
    expect(table?.rows.find((row) => row[0] === 'r0')?.[2]).toBe(2000);
  });

  it('loads afresh once the copy is older than its maximum age', async () => {
    const source = new FeedSource(dataset(10));
    const cache = new DatasetCache({ now: () => source.clock, maxAgeMs: 60_000 });
    await cache.tables([view], source);
    source.clock += 60_000;
    await cache.tables([view], source);
    expect(source.loads).toHaveLength(2);
  });

  const budgetRefusal = new QueryTimeoutError(
    "the query's datasets hold more than 50 rows, the most the embedded engine loads at once; the mysql engine runs it at any size (docs/interface.md §20), or narrow the data (a smaller dataset or a row filter) or read it page by page with get-list",
  );

  it('refuses a dataset above the row budget from its count, before reading any row or change', async () => {
    const source = new FeedSource(dataset(51));
    const cache = new DatasetCache({ now: () => source.clock, rowBudget: 50 });
    await expect(cache.tables([view], source)).rejects.toEqual(budgetRefusal);
    expect(source.loads).toHaveLength(0);
    expect(source.changeReads).toHaveLength(0);
    expect(source.counts).toEqual([50]);
  });

  it('refuses a catch-up whose new records would pass the row budget, before reading any record', async () => {
    const source = new FeedSource(dataset(48));
    const cache = new DatasetCache({ now: () => source.clock, rowBudget: 50 });
    await cache.tables([view], source);
    source.clock += 1000;
    for (let i = 0; i < 3; i++) source.write(record(`n${i}`, 'EU', i));
    source.clock += 1000;
    await expect(cache.tables([view], source)).rejects.toEqual(budgetRefusal);
    expect(source.byId).toEqual([]);
    expect(source.loads).toHaveLength(1);
  });

  it('drops a copy whose fresh load the row budget refuses: it cannot be used again', async () => {
    const source = new FeedSource(dataset(30));
    const cache = new DatasetCache({ now: () => source.clock, rowBudget: 50 });
    await cache.tables([view], source);
    expect(cache.cachedRows).toBe(30);
    source.clock += 1000;
    for (let i = 0; i < 30; i++) source.write(record(`r${i}`, 'US', 2000 + i));
    for (let i = 0; i < 21; i++) source.write(record(`n${i}`, 'EU', i));
    source.clock += 1000;
    await expect(cache.tables([view], source)).rejects.toEqual(budgetRefusal);
    expect(source.loads).toHaveLength(1);
    expect(cache.size).toBe(0);
    expect(cache.cachedRows).toBe(0);
  });

  it('lets a query wait for a load only within its own time limit (2001, Retry-After), and keeps the load for the next', async () => {
    let clock = 1_000;
    const source = new FeedSource(dataset(5));
    let release = () => {};
    source.holdLoad = new Promise<void>((resolve) => {
      release = resolve;
    });
    const cache = new DatasetCache({ now: () => clock });
    const first = cache.tables([view], source, { loadLimit: { ms: 20_000, message: 'first: too slow' } });
    await new Promise((resolve) => setImmediate(resolve));
    clock += 100;
    const second = cache.tables([view], source, { loadLimit: { ms: 50, message: 'second: too slow' } });
    await expect(second).rejects.toMatchObject({
      code: 2001,
      retryAfterSeconds: 1,
      message:
        'loading orders: 0 of 5 rows; retry in 1 s (the load goes on meanwhile, and a retry does not read again what it has read)',
    });
    expect(source.loads).toHaveLength(1);
    release();
    const [table] = await first;
    expect(table?.rows).toHaveLength(5);
    const [again] = await cache.tables([view], source, { loadLimit: { ms: 50, message: 'third: too slow' } });
    expect(again).toBe(table);
    expect(source.loads).toHaveLength(1);
  });

  it('charges a load that finished after its query gave up to the next query, once', async () => {
    const clock = 1_000;
    const source = new FeedSource(dataset(5));
    let release = () => {};
    source.holdLoad = new Promise<void>((resolve) => {
      release = resolve;
    });
    const cache = new DatasetCache({ now: () => clock });
    const limit = { loadLimit: { ms: 50, message: 'too slow' } };
    await expect(cache.tables([view], source, limit)).rejects.toMatchObject({ code: 2001, retryAfterSeconds: 1 });
    expect(source.units).toBe(0);
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Nobody waited when it finished: the next query (a catch-up of the loaded copy) pays its 5 units.
    const [table] = await cache.tables([view], source, limit);
    expect(table?.rows).toHaveLength(5);
    expect(source.loads).toHaveLength(1);
    expect(source.units).toBe(5);
    await cache.tables([view], source, limit);
    expect(source.units).toBe(5);
  });

  it('catches up from a load that finished while a retry was deciding, instead of loading a second time', async () => {
    const clock = 1_000;
    const source = new FeedSource(dataset(5));
    let release = () => {};
    source.holdLoad = new Promise<void>((resolve) => {
      release = resolve;
    });
    const cache = new DatasetCache({ now: () => clock });
    const limit = { loadLimit: { ms: 50, message: 'too slow' } };
    await expect(cache.tables([view], source, limit)).rejects.toMatchObject({ code: 2001, retryAfterSeconds: 1 });
    // The retry finds no copy yet; while it counts the dataset, the load finishes and stores its copy.
    source.onCount = async () => {
      source.onCount = undefined;
      release();
      await new Promise((resolve) => setTimeout(resolve, 10));
    };
    const [table] = await cache.tables([view], source, limit);
    expect(table?.rows).toHaveLength(5);
    expect(source.loads).toHaveLength(1);
    expect(source.units).toBe(5);
  });

  it('reads without the query’s deadline, within the background limit', async () => {
    const source = new FeedSource(dataset(3));
    const cache = new DatasetCache({ now: () => source.clock, backgroundLimitMs: 60_000 });
    await cache.tables([view], source, { loadLimit: { ms: 4000, message: 'too slow' } });
    expect(source.loads[0]?.deadline).toEqual({
      at: source.clock + 60_000,
      message: "loading the dataset 'orders' took longer than 60000 ms and was stopped",
    });
  });
});
