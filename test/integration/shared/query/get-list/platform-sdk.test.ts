/**
 * The platform SDK's list calls over HTTP (docs/interface.md §21): `orderBy` (any letter case, several entries, the
 * same sort as `ytSortList`, not both), `$gteq`/`$lteq` in `where`, `page` read as `currentPage`, and a numeric
 * `sqlCode` for execute-sql.
 */
import path from 'node:path';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'sdk-calls-config.json'));
const NARROW: AppCredentials = {
  appCode: 'app-narrow',
  accessKey: 'ak-narrow-application',
  secret: 'sk-narrow-secret-value',
};

const ORDERS = [
  { customer: 'Ada', status: 'paid', region: 'north', amount: 120.5, qty: 3, cost: 80 },
  { customer: 'Bob', status: 'new', region: 'south', amount: 40, qty: 1, cost: 10 },
  { customer: 'Cy', status: 'paid', region: 'south', amount: 300, qty: 6, cost: 200 },
  { customer: 'Dee', status: 'void', region: 'north', amount: 15, qty: 1, cost: 5 },
  { customer: 'Eve', status: 'paid', region: 'north', amount: 60, qty: null, cost: null },
  { customer: 'Fay', status: 'new', region: 'north', amount: null, qty: 2, cost: 1 },
];

beforeAll(async () => {
  await harness.start();
  for (const order of ORDERS) expect((await harness.create('orders', order)).body.success).toBe(true);
}, 60_000);
afterAll(() => harness.stop());

async function customers(paramMap: Record<string, unknown>, app?: AppCredentials): Promise<string[]> {
  const res = await harness.getList('orders', { pageSize: 100, ...paramMap }, app ? { app } : {});
  expect(res.body.success).toBe(true);
  return res.body.data.tableData.map((row: { customer: string }) => row.customer);
}

describe('orderBy', () => {
  it('sorts by one field, the direction in any letter case, nulls last descending', async () => {
    expect(await customers({ orderBy: [{ amount: 'DESC' }] })).toEqual(['Cy', 'Ada', 'Eve', 'Bob', 'Dee', 'Fay']);
    expect(await customers({ orderBy: [{ amount: 'Asc' }] })).toEqual(['Fay', 'Dee', 'Bob', 'Eve', 'Ada', 'Cy']);
  });

  it('sorts by several entries, earlier first, exactly as ytSortList does', async () => {
    const expected = ['Fay', 'Bob', 'Cy', 'Ada', 'Eve', 'Dee'];
    expect(await customers({ orderBy: [{ status: 'asc' }, { qty: 'Desc' }] })).toEqual(expected);
    expect(await customers({ ytSortList: [{ status: 'asc' }, { qty: 'desc' }] })).toEqual(expected);
  });

  it('pages a sorted list with page and pageSize as the platform demo sends them', async () => {
    const res = await harness.getList('orders', { page: 2, pageSize: 2, orderBy: [{ amount: 'asc' }] });
    expect(res.body.data.paging).toEqual({ currentPage: 2, pageSize: 2, totalCount: 6 });
    expect(res.body.data.tableData.map((row: { customer: string }) => row.customer)).toEqual(['Bob', 'Eve']);
  });

  it('refuses ytSortList and orderBy together, naming both', async () => {
    const res = await harness.getList('orders', { ytSortList: [{ amount: 'asc' }], orderBy: [{ amount: 'asc' }] });
    expectFailure(res, 1001, 'ytSortList and orderBy: send one of them, not both (they are the same sort)');
  });

  it('refuses a direction other than asc or desc, an unknown field and a shape that is not a list', async () => {
    expectFailure(
      await harness.getList('orders', { orderBy: [{ amount: 'up' }] }),
      1001,
      'orderBy[0].amount: direction must be "asc" or "desc"',
    );
    expectFailure(
      await harness.getList('orders', { orderBy: [{ amount: 'asc' }, { nope: 'asc' }] }),
      1001,
      "orderBy[1].nope: unknown field 'nope' in dataset 'orders'",
    );
    expectFailure(
      await harness.getList('orders', { orderBy: { amount: 'asc' } }),
      1001,
      'orderBy: expects an array of {"field": "asc" | "desc"}',
    );
    expectFailure(
      await harness.getList('orders', { orderBy: [{ amount: 'asc', qty: 'asc' }] }),
      1001,
      'orderBy[0]: expects one {"field": "asc" | "desc"}',
    );
  });

  it('answers a field the grant hides as it answers an unknown one', async () => {
    expectFailure(
      await harness.getList('orders', { orderBy: [{ cost: 'asc' }] }, { app: NARROW }),
      1001,
      "orderBy[0].cost: unknown field 'cost' in dataset 'orders'",
    );
    expect(await customers({ orderBy: [{ amount: 'desc' }] }, NARROW)).toEqual(['Ada', 'Eve', 'Dee', 'Fay']);
  });
});

describe('$gteq and $lteq', () => {
  it('are $gte and $lte', async () => {
    const sort = { orderBy: [{ amount: 'asc' }] };
    const expected = ['Bob', 'Eve', 'Ada'];
    expect(await customers({ ...sort, where: { amount: { $gteq: 40, $lteq: 120.5 } } })).toEqual(expected);
    expect(await customers({ ...sort, where: { amount: { $gte: 40, $lte: 120.5 } } })).toEqual(expected);
    expect(await customers({ ...sort, where: { $or: [{ qty: { $gteq: 6 } }, { qty: { $lteq: 1 } }] } })).toEqual([
      'Dee',
      'Bob',
      'Cy',
    ]);
  });

  it('refuse a field whose type has no order, as $gte does', async () => {
    expectFailure(
      await harness.getList('orders', { where: { status: { $gteq: 'new' } } }),
      1001,
      "where.status.$gteq: $gteq is not supported for the enum field 'status'",
    );
  });
});

describe('page', () => {
  it('is currentPage when currentPage is absent, and currentPage wins when both are sent', async () => {
    const sort = [{ customer: 'asc' }];
    const page3 = await harness.getList('orders', { page: 3, pageSize: 2, orderBy: sort });
    expect(page3.body.data.paging.currentPage).toBe(3);
    expect(page3.body.data.tableData.map((row: { customer: string }) => row.customer)).toEqual(['Eve', 'Fay']);
    const both = await harness.getList('orders', { currentPage: 1, page: 3, pageSize: 2, orderBy: sort });
    expect(both.body.data.paging.currentPage).toBe(1);
    expect(both.body.data.tableData.map((row: { customer: string }) => row.customer)).toEqual(['Ada', 'Bob']);
  });

  it('is checked as currentPage is, and other unknown keys remain 1001', async () => {
    expectFailure(await harness.getList('orders', { page: 0 }), 1001, 'page must be an integer of at least 1');
    expectFailure(await harness.getList('orders', { page: 'two' }), 1001, 'page must be an integer of at least 1');
    expectFailure(
      await harness.getList('orders', { pages: 2 }),
      1001,
      /^pages: unknown field or filter in dataset 'orders'/,
    );
  });
});

describe('a numeric sqlCode', () => {
  const executeSql = (body: Record<string, unknown>) =>
    harness.call('/api/custom/executeSql', body, { datasetCode: null });

  it('runs the query whose numeric id it is, as a number or as digits no text code has', async () => {
    const expected = { execSuccess: true, execResult: [{ n: 6 }] };
    expect((await executeSql({ sqlCode: 7001 })).body.data).toEqual(expected);
    expect((await executeSql({ sqlCode: '7001' })).body.data).toEqual(expected);
    expect((await executeSql({ id: 7001 })).body.data).toEqual(expected);
  });

  it('prefers a text code made of digits to a numeric id when the text is sent', async () => {
    expect((await executeSql({ sqlCode: '42' })).body.data).toEqual({
      execSuccess: true,
      execResult: [{ answer: 'by code' }],
    });
    expect((await executeSql({ sqlCode: 42 })).body.data).toEqual({
      execSuccess: true,
      execResult: [{ answer: 'by id' }],
    });
  });

  it('answers 1001 for an id no query of the caller has, and for a number that is no id', async () => {
    expectFailure(await executeSql({ sqlCode: 8000 }), 1001, 'query with id 8000 not found');
    expectFailure(
      await executeSql({ sqlCode: '8000' }),
      1001,
      "query '8000' not found (no query has that code or that numeric id)",
    );
    // Another application's query is not found, as an unknown one.
    expectFailure(await executeSql({ sqlCode: 31 }), 1001, 'query with id 31 not found');
    expectFailure(await executeSql({ sqlCode: 1.5 }), 1001, 'sqlCode must be a code or a positive integer id');
    expectFailure(await executeSql({ sqlCode: -3 }), 1001, 'sqlCode must be a code or a positive integer id');
  });
});
