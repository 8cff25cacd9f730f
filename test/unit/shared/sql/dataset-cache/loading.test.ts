import type { FieldConfig } from '../../../../../shared/catalog/schema';
import { QueryTimeoutError } from '../../../../../shared/contract/errors';
import { DatasetCache } from '../../../../../shared/sql/dataset-cache';
import type { DatasetRecord, DatasetRowSource, ReadRowsRequest } from '../../../../../shared/sql/dataset-source';
import { datasetColumns, toTableRow } from '../../../../../shared/sql/dataset-table';

/** An in-memory stand-in for the record store: versions bumped by `write`, rows filtered by equality. */
class FakeRowSource implements DatasetRowSource {
  readonly reads: { datasetCode: string; request: ReadRowsRequest }[] = [];
  private readonly versions = new Map<string, number>();

  constructor(private readonly data: Record<string, DatasetRecord[]>) {}

  write(datasetCode: string, record: DatasetRecord): void {
    this.data[datasetCode]?.push(record);
    this.versions.set(datasetCode, (this.versions.get(datasetCode) ?? 0) + 1);
  }

  async version(datasetCode: string): Promise<number | undefined> {
    return this.versions.get(datasetCode) ?? 0;
  }

  async readRows(datasetCode: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]> {
    this.reads.push({ datasetCode, request });
    const filter = request.rowFilter ?? {};
    return (this.data[datasetCode] ?? [])
      .filter((record) => Object.entries(filter).every(([key, value]) => record[key] === value))
      .slice(0, request.limit);
  }
}

const orderFields: FieldConfig[] = [
  { name: 'region', type: 'string' },
  { name: 'amount', type: 'number' },
  { name: 'secret', type: 'string' },
];

function order(id: string, region: string, amount: number): DatasetRecord {
  return {
    id,
    region,
    amount,
    secret: `s-${id}`,
    gmt_create: '2024-01-01 10:00:00',
    gmt_modified: '2024-01-01 10:00:00',
  };
}

function source(): FakeRowSource {
  return new FakeRowSource({
    orders: [order('o1', 'EU', 10), order('o2', 'US', 20), order('o3', 'EU', 5)],
    customers: [{ id: 'c1', name: 'Ann', gmt_create: '2024-01-01 10:00:00', gmt_modified: '2024-01-01 10:00:00' }],
  });
}

const visible = orderFields.filter((f) => f.name !== 'secret');

describe('DatasetCache', () => {
  it('loads a dataset as a table of the visible fields and the rows its filter allows', async () => {
    const cache = new DatasetCache();
    const [table] = await cache.tables(
      [{ datasetCode: 'orders', fields: visible, rowFilter: { region: 'EU' } }],
      source(),
    );
    expect(table?.name).toBe('orders');
    expect(table?.columns).toEqual([
      { name: 'id', type: 'ANY' },
      { name: 'region', type: 'TEXT' },
      { name: 'amount', type: 'REAL' },
      { name: 'gmt_create', type: 'TEXT' },
      { name: 'gmt_modified', type: 'TEXT' },
    ]);
    expect(table?.rows).toEqual([
      ['o1', 'EU', 10, '2024-01-01 10:00:00', '2024-01-01 10:00:00'],
      ['o3', 'EU', 5, '2024-01-01 10:00:00', '2024-01-01 10:00:00'],
    ]);
  });

  it('asks the source for the visible fields, the row filter and one row more than the budget', async () => {
    const rows = source();
    const cache = new DatasetCache({ rowBudget: 50 });
    await cache.tables([{ datasetCode: 'orders', fields: visible, rowFilter: { region: 'EU' } }], rows);
    expect(rows.reads).toEqual([
      { datasetCode: 'orders', request: { fields: ['region', 'amount'], rowFilter: { region: 'EU' }, limit: 51 } },
    ]);
  });

  it('serves an unchanged dataset from the cache and reloads it after a write', async () => {
    const rows = source();
    const cache = new DatasetCache();
    const view = { datasetCode: 'orders', fields: visible };
    const [first] = await cache.tables([view], rows);
    const [second] = await cache.tables([view], rows);
    expect(second).toBe(first);
    expect(rows.reads).toHaveLength(1);

    rows.write('orders', order('o4', 'EU', 1));
    const [third] = await cache.tables([view], rows);
    expect(rows.reads).toHaveLength(2);
    expect(third?.rows).toHaveLength(4);
    expect(third?.key).not.toBe(first?.key);
    expect(cache.size).toBe(1);
    expect(cache.cachedRows).toBe(4);
  });

  it('keeps the views of different callers apart', async () => {
    const rows = source();
    const cache = new DatasetCache();
    const [eu] = await cache.tables([{ datasetCode: 'orders', fields: visible, rowFilter: { region: 'EU' } }], rows);
    const [all] = await cache.tables([{ datasetCode: 'orders', fields: orderFields }], rows);
    expect(eu?.rows).toHaveLength(2);
    expect(all?.rows).toHaveLength(3);
    expect(all?.columns.map((c) => c.name)).toEqual(['id', 'region', 'amount', 'secret', 'gmt_create', 'gmt_modified']);
    expect(eu?.key).not.toBe(all?.key);
    expect(rows.reads).toHaveLength(2);
  });

  it('treats row filters with the same content in another key order as the same view', async () => {
    const rows = source();
    const cache = new DatasetCache();
    await cache.tables([{ datasetCode: 'orders', fields: visible, rowFilter: { region: 'EU', amount: 10 } }], rows);
    await cache.tables([{ datasetCode: 'orders', fields: visible, rowFilter: { amount: 10, region: 'EU' } }], rows);
    expect(rows.reads).toHaveLength(1);
  });

  it('loads a dataset once when two queries ask for it at the same time', async () => {
    const rows = source();
    const cache = new DatasetCache();
    const view = { datasetCode: 'orders', fields: visible };
    const [[a], [b]] = await Promise.all([cache.tables([view], rows), cache.tables([view], rows)]);
    expect(a).toBe(b);
    expect(rows.reads).toHaveLength(1);
  });

  it('answers 2001 when the query’s datasets hold more rows than the budget', async () => {
    const rows = source();
    const cache = new DatasetCache({ rowBudget: 3 });
    await expect(
      cache.tables(
        [
          { datasetCode: 'orders', fields: visible },
          { datasetCode: 'customers', fields: [{ name: 'name', type: 'string' }] },
        ],
        rows,
      ),
    ).rejects.toThrow(
      new QueryTimeoutError(
        "the query's datasets hold more than 3 rows, the most the embedded engine loads at once; the mysql engine " +
          'runs it at any size (docs/interface.md §20), or narrow the data (a smaller dataset or a row filter) or ' +
          'read it page by page with get-list',
      ),
    );
    await expect(cache.tables([{ datasetCode: 'orders', fields: visible }], rows)).resolves.toHaveLength(1);
  });

  it('drops the least recently used tables beyond its row bound', async () => {
    const rows = source();
    const cache = new DatasetCache({ maxCachedRows: 4 });
    const orders = { datasetCode: 'orders', fields: visible };
    const customers = { datasetCode: 'customers', fields: [{ name: 'name', type: 'string' } as FieldConfig] };
    const euOrders = { ...orders, rowFilter: { region: 'EU' } };
    await cache.tables([orders], rows); // 3 rows
    await cache.tables([customers], rows); // 1 row: 4 in all
    await cache.tables([orders], rows); // orders is now the most recently used
    await cache.tables([euOrders], rows); // 2 rows: customers goes first, then orders
    expect(cache.cachedRows).toBe(2);
    expect(cache.size).toBe(1);
    await cache.tables([euOrders], rows);
    expect(rows.reads.map((r) => r.datasetCode)).toEqual(['orders', 'customers', 'orders']);
    await cache.tables([customers], rows);
    expect(rows.reads).toHaveLength(4);
  });
});

describe('dataset tables', () => {
  it('maps field types to column types, with system fields around the visible fields', () => {
    const fields: FieldConfig[] = [
      { name: 's', type: 'string' },
      { name: 't', type: 'text' },
      { name: 'i', type: 'integer' },
      { name: 'n', type: 'number' },
      { name: 'b', type: 'boolean' },
      { name: 'd', type: 'date' },
      { name: 'dt', type: 'datetime' },
      { name: 'e', type: 'enum', options: ['x'] },
      { name: 'j', type: 'json' },
    ];
    expect(datasetColumns(fields).map((c) => `${c.name}:${c.type}`)).toEqual([
      'id:ANY',
      's:TEXT',
      't:TEXT',
      'i:INTEGER',
      'n:REAL',
      'b:INTEGER',
      'd:TEXT',
      'dt:TEXT',
      'e:TEXT',
      'j:TEXT',
      'gmt_create:TEXT',
      'gmt_modified:TEXT',
    ]);
    expect(
      toTableRow(fields, {
        id: 7,
        s: 'a',
        t: 'long',
        i: 3,
        n: 2.5,
        b: true,
        d: '2024-02-01',
        dt: '2024-02-01 10:00:00',
        e: 'x',
        j: { k: [1, 'two'] },
        gmt_create: '2024-02-01 10:00:00',
        gmt_modified: '2024-02-02 10:00:00',
      }),
    ).toEqual([
      7,
      'a',
      'long',
      3,
      2.5,
      1,
      '2024-02-01',
      '2024-02-01 10:00:00',
      'x',
      '{"k":[1,"two"]}',
      '2024-02-01 10:00:00',
      '2024-02-02 10:00:00',
    ]);
  });

  it('writes absent values as NULL and false as 0, and leaves out fields it was not given', () => {
    const fields: FieldConfig[] = [
      { name: 'b', type: 'boolean' },
      { name: 'n', type: 'number' },
    ];
    expect(toTableRow(fields, { id: 'r1', b: false, hidden: 'x', gmt_create: 'c', gmt_modified: 'm' })).toEqual([
      'r1',
      0,
      null,
      'c',
      'm',
    ]);
  });
});

describe('DatasetCache with a source that cannot tell versions', () => {
  class UnversionedSource extends FakeRowSource {
    override async version(): Promise<undefined> {
      return undefined;
    }
  }

  it('reads afresh for every query, keeps nothing and gives the engine no key to reuse', async () => {
    const rows = new UnversionedSource({ orders: [order('o1', 'EU', 10)] });
    const cache = new DatasetCache();
    const view = { datasetCode: 'orders', fields: visible };
    const [first] = await cache.tables([view], rows);
    rows.write('orders', order('o2', 'US', 20));
    const [second] = await cache.tables([view], rows);
    expect(first?.key).toBeUndefined();
    expect(first?.rows).toHaveLength(1);
    expect(second?.rows).toHaveLength(2);
    expect(rows.reads).toHaveLength(2);
    expect(cache.size).toBe(0);
  });
});

describe('maximum age', () => {
  it('reloads a table older than its maximum age even when the version is unchanged, under a new key', async () => {
    let clock = 0;
    const cache = new DatasetCache({ maxAgeMs: 1_000, now: () => clock });
    const rows = source();
    const view = { datasetCode: 'orders', fields: visible };
    const [first] = await cache.tables([view], rows);
    clock = 999;
    const [again] = await cache.tables([view], rows);
    expect(rows.reads).toHaveLength(1);
    expect(again?.key).toBe(first?.key);
    clock = 1_000;
    const [reloaded] = await cache.tables([view], rows);
    expect(rows.reads).toHaveLength(2);
    // The engine keeps tables by key: a reload must not be mistaken for the copy it already holds.
    expect(reloaded?.key).not.toBe(first?.key);
  });

  it('drops a copy past its maximum age on the next query, whatever that query reads', async () => {
    let clock = 0;
    const cache = new DatasetCache({ maxAgeMs: 1_000, now: () => clock });
    const rows = source();
    await cache.tables([{ datasetCode: 'orders', fields: visible }], rows);
    clock = 500;
    const customers = { datasetCode: 'customers', fields: [{ name: 'name', type: 'string' as const }] };
    await cache.tables([customers], rows);
    expect(cache.size).toBe(2);
    expect(cache.cachedRows).toBe(4);
    clock = 1_000;
    await cache.tables([customers], rows);
    expect(cache.size).toBe(1);
    expect(cache.cachedRows).toBe(1);
    clock = 1_500;
    cache.sweep();
    expect(cache.size).toBe(0);
    expect(cache.cachedRows).toBe(0);
  });

  describe('in an idle process', () => {
    beforeEach(() => jest.useFakeTimers({ now: 0 }));
    afterEach(() => jest.useRealTimers());

    it('drops each copy once it ages out, by a timer, without any query', async () => {
      const cache = new DatasetCache({ maxAgeMs: 60_000 });
      const rows = source();
      await cache.tables([{ datasetCode: 'orders', fields: visible }], rows);
      jest.advanceTimersByTime(30_000);
      await cache.tables([{ datasetCode: 'orders', fields: visible, rowFilter: { region: 'EU' } }], rows);
      expect(cache.size).toBe(2);
      expect(cache.cachedRows).toBe(5);
      jest.advanceTimersByTime(29_999);
      expect(cache.size).toBe(2);
      jest.advanceTimersByTime(1);
      expect(cache.size).toBe(1);
      expect(cache.cachedRows).toBe(2);
      jest.advanceTimersByTime(30_000);
      expect(cache.size).toBe(0);
      expect(cache.cachedRows).toBe(0);
      // Nothing is held, so no timer is left either.
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
