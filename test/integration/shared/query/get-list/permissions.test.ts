/**
 * Get-list under a grant (docs/interface.md §6): the row filter narrows the list inside the query (exact totalCount),
 * readFields hide fields from records and columns, and filtering, sorting or selecting a hidden field is
 * answered exactly as for a field the dataset does not have (1001).
 */
import path from 'node:path';
import { failureWith } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));
const SCOPED: AppCredentials = {
  appCode: 'app-scoped',
  accessKey: 'ak-scoped-current-01',
  secret: 'sk-scoped-secret-value',
};
const ITEMS = [
  { name: 'eu-1', qty: 5, region: 'EU', price: 10, note: 'secret' },
  { name: 'us-1', qty: 5, region: 'US', price: 20 },
  { name: 'eu-2', qty: 1, region: 'EU', price: 30 },
  { name: 'none', qty: 5 },
  { name: 'eu-3', qty: 7, region: 'EU', status: 'paid' },
  { name: 'us-2', qty: 7, region: 'US' },
];

beforeAll(async () => {
  await harness.start();
  for (const record of ITEMS) await harness.create('items', record);
  for (const [num, kind] of [
    [1, 'a'],
    [5, 'a'],
    [6, 'b'],
    [9, 'c'],
    [7, null],
    [null, 'a'],
    [8, 'b'],
  ] as const) {
    await harness.create('plain', { num, kind });
  }
});
afterAll(() => harness.stop());

const scoped = (paramMap: Record<string, unknown>, dataset = 'items') =>
  harness.getList(dataset, paramMap, { app: SCOPED });

describe('row filter', () => {
  it('narrows the list and its exact total', async () => {
    const res = await scoped({ ytSortList: [{ name: 'asc' }] });
    expect(res.body.data.paging.totalCount).toBe(3);
    expect(res.body.data.tableData.map((r: { name: string }) => r.name)).toEqual(['eu-1', 'eu-2', 'eu-3']);
  });

  it('is ANDed with the caller filters before paging', async () => {
    const res = await scoped({ qty_in: [5, 7], pageSize: 1, currentPage: 2, ytSortList: [{ qty: 'asc' }] });
    expect(res.body.data.paging).toEqual({ pageSize: 1, totalCount: 2, currentPage: 2 });
    expect(res.body.data.tableData.map((r: { name: string }) => r.name)).toEqual(['eu-3']);
    const other = await scoped({ region: 'US' });
    expect(other.body.data).toMatchObject({ paging: { totalCount: 0 }, tableData: [] });
  });

  it('can combine several conditions, and a caller without one sees everything', async () => {
    const res = await scoped({ ytSortList: [{ num: 'asc' }] }, 'plain');
    expect(res.body.data.paging.totalCount).toBe(3);
    expect(res.body.data.tableData.map((r: { num: number }) => r.num)).toEqual([5, 6, 8]);
    const owner = await harness.getList('plain', {});
    expect(owner.body.data.paging.totalCount).toBe(7);
  });
});

describe('readFields', () => {
  it('hides the other fields from records and columns', async () => {
    const res = await scoped({ name: 'eu-1' });
    expect(Object.keys(res.body.data.tableData[0])).toEqual([
      'id',
      'name',
      'qty',
      'status',
      'region',
      'gmt_create',
      'gmt_modified',
    ]);
    expect(res.body.data.tableColumns.map((c: { dataIndex: string }) => c.dataIndex)).toEqual([
      'id',
      'name',
      'qty',
      'status',
      'region',
      'gmt_create',
      'gmt_modified',
    ]);
  });

  // docs/interface.md §6: to this application a hidden field is a field the dataset does not have. A request on a
  // hidden field (price, note, flag) gets the answer the same request on a made-up field (nosuch) gets.
  it.each([
    ['a filter', { price: 10 }, 'price', { nosuch: 10 }, 'nosuch', ": unknown field or filter in dataset 'items'"],
    [
      'a _like',
      { note_like: 'x' },
      'note_like',
      { nota_like: 'x' },
      'nota_like',
      // The nearest key this caller may use, for the hidden name and for the made-up one alike.
      ": unknown field or filter in dataset 'items'; did you mean 'name_like'?",
    ],
    [
      'a where',
      { where: { $or: [{ qty: 1 }, { flag: true }] } },
      "where.$or[1].flag: unknown field 'flag'",
      { where: { $or: [{ qty: 1 }, { nosuch: true }] } },
      "where.$or[1].nosuch: unknown field 'nosuch'",
      " in dataset 'items'",
    ],
    [
      'a sort',
      { ytSortList: [{ price: 'desc' }] },
      "ytSortList[0].price: unknown field 'price'",
      { ytSortList: [{ nosuch: 'desc' }] },
      "ytSortList[0].nosuch: unknown field 'nosuch'",
      " in dataset 'items'",
    ],
    [
      'a select',
      { select: ['name', 'note'] },
      "select[1]: unknown field 'note'",
      { select: ['name', 'nosuch'] },
      "select[1]: unknown field 'nosuch'",
      " in dataset 'items'",
    ],
  ])('answers %s on a hidden field as on an unknown one (1001)', async (_label, hidden, hiddenStart, unknown, unknownStart, rest) => {
    const res = await scoped(hidden);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: `${hiddenStart}${rest}` });
    const other = await scoped(unknown);
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ ...failureWith(1001), errorMsg: `${unknownStart}${rest}` });
  });

  // "Did you mean" chooses among the fields the caller may read: a slip of a hidden field gets no suggestion of it.
  it.each([
    ['a filter', { pric: 10 }, "pric: unknown field or filter in dataset 'items'", "; did you mean 'price'?"],
    [
      'a where',
      { where: { prise: { $gt: 1 } } },
      "where.prise: unknown field 'prise' in dataset 'items'",
      "; did you mean 'price'?",
    ],
    [
      'a sort',
      { ytSortList: [{ nots: 'asc' }] },
      "ytSortList[0].nots: unknown field 'nots' in dataset 'items'",
      "; did you mean 'note'?",
    ],
    ['a select', { select: ['flg'] }, "select[0]: unknown field 'flg' in dataset 'items'", "; did you mean 'flag'?"],
  ])('never suggests a hidden field: %s', async (_label, paramMap, message, ownersHint) => {
    const res = await scoped(paramMap);
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: message });
    const owner = await harness.getList('items', paramMap);
    expect(owner.body).toEqual({ ...failureWith(1001), errorMsg: `${message}${ownersHint}` });
  });

  it.each([
    ['a filter', { regoin: 'EU' }, "regoin: unknown field or filter in dataset 'items'; did you mean 'region'?"],
    ['a suffix', { qty_strat: 1 }, "qty_strat: unknown field or filter in dataset 'items'; did you mean 'qty_start'?"],
    ['a paging key', { pagesize: 5 }, "pagesize: unknown field or filter in dataset 'items'; did you mean 'pageSize'?"],
    [
      'a where',
      { where: { stauts: 'paid' } },
      "where.stauts: unknown field 'stauts' in dataset 'items'; did you mean 'status'?",
    ],
    [
      'a sort',
      { ytSortList: [{ gmt_created: 'asc' }] },
      "ytSortList[0].gmt_created: unknown field 'gmt_created' in dataset 'items'; did you mean 'gmt_create'?",
    ],
    ['a select', { select: ['nme'] }, "select[0]: unknown field 'nme' in dataset 'items'; did you mean 'name'?"],
  ])('suggests the readable field a slip meant: %s', async (_label, paramMap, message) => {
    const res = await scoped(paramMap);
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: message });
  });

  it('still allows system fields and visible fields in filters, sorts and select', async () => {
    const res = await scoped({
      select: ['name', 'gmt_create'],
      gmt_create_start: '2000-01-01 00:00:00',
      name_like: 'EU-',
    });
    expect(res.body.data.paging.totalCount).toBe(3);
    expect(Object.keys(res.body.data.tableData[0])).toEqual(['id', 'name', 'gmt_create']);
  });
});
