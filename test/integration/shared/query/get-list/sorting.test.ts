/**
 * Get-list order and paging over HTTP (docs/interface.md §5): multi-key sorts with many ties paged through to the
 * end (every record exactly once, in order), nulls first ascending and last descending, the default newest
 * first, pageSize clamping and pages past the end.
 */
import path from 'node:path';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));

type Row = { id: string; name: string; qty: number | null; status: string | null; price: number | null };
const created: Row[] = [];
const QTYS = [3, null, 1, 2, 1];
const STATUSES = ['new', 'paid', null];
const PRICES = [9.5, -1, 0, 9.5, null, 2];

beforeAll(async () => {
  await harness.start();
  for (let i = 0; i < 48; i++) {
    const record = {
      name: `n${String(i % 6).padStart(2, '0')}`,
      qty: QTYS[i % QTYS.length] ?? null,
      status: STATUSES[i % STATUSES.length] ?? null,
      price: PRICES[i % PRICES.length] ?? null,
    };
    const res = await harness.create('items', record);
    created.push({ id: res.body.data.id, ...record });
  }
  for (const num of [2, null, -1, null]) await harness.create('plain', { num });
}, 60_000);
afterAll(() => harness.stop());

/** The test's own order: nulls lowest, then the id in the last key's direction. */
function expectedOrder(rows: Row[], keys: [keyof Row, 'asc' | 'desc'][]): string[] {
  const compare = (a: unknown, b: unknown) => {
    if (a === b) return 0;
    if (a === null) return -1;
    if (b === null) return 1;
    return (a as number | string) < (b as number | string) ? -1 : 1;
  };
  const last = keys[keys.length - 1]?.[1] ?? 'desc';
  const all: [keyof Row, 'asc' | 'desc'][] = [...keys, ['id', last]];
  return [...rows]
    .sort((x, y) => {
      for (const [field, direction] of all) {
        const c = compare(x[field], y[field]);
        if (c !== 0) return direction === 'asc' ? c : -c;
      }
      return 0;
    })
    .map((row) => row.id);
}

async function pageThrough(dataset: string, paramMap: Record<string, unknown>, pageSize: number) {
  const ids: string[] = [];
  const totals = new Set<number>();
  for (let page = 1; ; page++) {
    const res = await harness.getList(dataset, { ...paramMap, pageSize, currentPage: page });
    expect(res.body.success).toBe(true);
    totals.add(res.body.data.paging.totalCount);
    const rows = res.body.data.tableData as { id: string }[];
    if (rows.length === 0) break;
    ids.push(...rows.map((r) => r.id));
  }
  return { ids, totals: [...totals] };
}

describe('multi-key sorts with many ties, paged through to the end', () => {
  it.each([
    [
      [
        ['status', 'asc'],
        ['qty', 'desc'],
      ],
    ],
    [
      [
        ['qty', 'asc'],
        ['price', 'asc'],
      ],
    ],
    [[['price', 'desc']]],
    [[['name', 'asc']]],
    [
      [
        ['name', 'desc'],
        ['status', 'desc'],
        ['qty', 'asc'],
      ],
    ],
    [[['qty', 'desc']]],
    [[['status', 'asc']]],
  ] as [keyof Row, 'asc' | 'desc'][][][])('%j shows every record exactly once, in order', async (keys) => {
    const ytSortList = keys.map(([field, direction]) => ({ [field]: direction }));
    const { ids, totals } = await pageThrough('items', { ytSortList }, 7);
    expect(totals).toEqual([48]);
    expect(new Set(ids).size).toBe(48);
    expect(ids).toEqual(expectedOrder(created, keys));
  });

  it('sorts a filtered list with ties the same way', async () => {
    const { ids, totals } = await pageThrough('items', { qty_in: [1, 3], ytSortList: [{ price: 'asc' }] }, 5);
    const rows = created.filter((r) => r.qty === 1 || r.qty === 3);
    expect(totals).toEqual([rows.length]);
    expect(ids).toEqual(expectedOrder(rows, [['price', 'asc']]));
  });

  it('sorts by id and by gmt_create', async () => {
    const byId = await pageThrough('items', { ytSortList: [{ id: 'asc' }] }, 20);
    expect(byId.ids).toEqual(created.map((r) => r.id));
    const byCreate = await pageThrough('items', { ytSortList: [{ gmt_create: 'asc' }] }, 20);
    expect(byCreate.ids).toEqual(created.map((r) => r.id));
  });
});

describe('default order', () => {
  it('is newest first, paged without repeats', async () => {
    const { ids, totals } = await pageThrough('items', {}, 10);
    expect(totals).toEqual([48]);
    expect(ids).toEqual(created.map((r) => r.id).reverse());
  });
});

describe('nulls', () => {
  it('sort first ascending and last descending (ties by id in the same direction)', async () => {
    const asc = await harness.getList('plain', { ytSortList: [{ num: 'asc' }] });
    const ascRows = asc.body.data.tableData as { id: string; num: number | null }[];
    expect(ascRows.map((r) => r.num)).toEqual([null, null, -1, 2]);
    expect((ascRows[0]?.id ?? '') < (ascRows[1]?.id ?? '')).toBe(true);
    const desc = await harness.getList('plain', { ytSortList: [{ num: 'desc' }] });
    const descRows = desc.body.data.tableData as { id: string; num: number | null }[];
    expect(descRows.map((r) => r.num)).toEqual([2, -1, null, null]);
    expect((descRows[2]?.id ?? '') > (descRows[3]?.id ?? '')).toBe(true);
  });

  it('of an indexed field come first ascending and last descending', async () => {
    const asc = await harness.getList('items', { ytSortList: [{ qty: 'asc' }], pageSize: 100 });
    const qtys = (asc.body.data.tableData as Row[]).map((r) => r.qty);
    expect(qtys.slice(0, 10)).toEqual(Array(10).fill(null));
    const desc = await harness.getList('items', { ytSortList: [{ qty: 'desc' }], pageSize: 100 });
    expect((desc.body.data.tableData as Row[]).map((r) => r.qty).slice(-10)).toEqual(Array(10).fill(null));
  });
});

describe('paging', () => {
  it('serves a pageSize above 100 as 100 and says so', async () => {
    for (let i = 0; i < 60; i++) await harness.create('plain', { num: i });
    const res = await harness.getList('plain', { pageSize: 150 });
    expect(res.body.data.paging).toEqual({ pageSize: 100, totalCount: 64, currentPage: 1 });
    expect(res.body.data.tableData).toHaveLength(64);
    const filtered = await harness.getList('plain', { pageSize: 1000, num_start: 0 });
    expect(filtered.body.data.paging).toEqual({ pageSize: 100, totalCount: 61, currentPage: 1 });
  });

  it('answers a page past the end with no rows and the true total', async () => {
    const res = await harness.getList('items', { currentPage: 99, pageSize: 10 });
    expect(res.body.data).toMatchObject({ paging: { pageSize: 10, totalCount: 48, currentPage: 99 }, tableData: [] });
    const filtered = await harness.getList('items', { currentPage: 4, pageSize: 10, status: 'new' });
    expect(filtered.body.data).toMatchObject({
      paging: { pageSize: 10, totalCount: 16, currentPage: 4 },
      tableData: [],
    });
  });

  it('accepts paging numbers as numeric strings', async () => {
    const res = await harness.getList('items', { currentPage: '2', pageSize: '5' });
    expect(res.body.data.paging).toEqual({ pageSize: 5, totalCount: 48, currentPage: 2 });
    expect(res.body.data.tableData.map((r: Row) => r.id)).toEqual(
      created
        .map((r) => r.id)
        .reverse()
        .slice(5, 10),
    );
  });

  it('reads one page, not all before it, for the next page of an unfiltered list', async () => {
    const units = async (currentPage: number) => {
      const before = harness.logLines.length;
      await harness.getList('items', { currentPage, pageSize: 3, ytSortList: [{ id: 'asc' }] });
      return harness.logLines.slice(before).reduce((sum, line) => sum + Number(line.readUnits), 0);
    };
    // Offsets 39 and 42: no earlier test started a page there (the cache is keyed by offset).
    const cold = await units(14);
    const warm = await units(15);
    expect(warm).toBeLessThan(cold);
  });
});
