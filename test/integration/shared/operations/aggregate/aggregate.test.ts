/**
 * Aggregate over HTTP (docs/interface.md §21): measures, groups, filters, having, order and paging through the real
 * pipeline and SQL engine over dynalite; the caller's grant (hidden fields, row filter) on the signed and the
 * client-key paths; and the refusals, each with its message.
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
const WRITER: AppCredentials = {
  appCode: 'app-writer',
  accessKey: 'ak-writer-application',
  secret: 'sk-writer-secret-value',
};
const NINA_KEY = 'dasu_sdk-calls-nina-0000000000000000000000';

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

function aggregate(paramMap: Record<string, unknown>, app?: AppCredentials) {
  return harness.call('/openapi/data/aggregate', { datasetCode: 'orders', paramMap }, app ? { app } : {});
}

async function data(paramMap: Record<string, unknown>, app?: AppCredentials) {
  const res = await aggregate(paramMap, app);
  expect(res.body).toMatchObject({ success: true });
  return res.body.data;
}

describe('measures and groups', () => {
  it('sums and counts per group, ordered by an alias, with the group count and the columns', async () => {
    expect(
      await data({
        aggregate: [
          { type: 'SUM', column: 'amount', alias: 'total' },
          { type: 'count', alias: 'orders' },
        ],
        groupBy: ['status'],
        orderBy: [{ total: 'DESC' }],
      }),
    ).toEqual({
      tableData: [
        { status: 'paid', total: 480.5, orders: 3 },
        { status: 'new', total: 40, orders: 2 },
        { status: 'void', total: 15, orders: 1 },
      ],
      paging: { currentPage: 1, pageSize: 20, totalCount: 3 },
      tableColumns: [
        { title: 'status', dataIndex: 'status' },
        { title: 'total', dataIndex: 'total' },
        { title: 'orders', dataIndex: 'orders' },
      ],
    });
  });

  it('measures every record as one group without groupBy; field is the old name of column', async () => {
    const answer = await data({
      aggregate: [
        { type: 'AVG', column: 'qty' },
        { type: 'Max', column: 'customer' },
        { type: 'MIN', field: 'amount' },
        { type: 'COUNT', column: 'qty' },
        { type: 'COUNT', column: 'status', distinct: true, alias: 'statuses' },
        { type: 'SUM', column: 'cost', alias: 'costs' },
      ],
    });
    expect(answer.tableData).toEqual([
      { avg_qty: 2.6, max_customer: 'Fay', min_amount: 15, count_qty: 5, statuses: 3, costs: 296 },
    ]);
    expect(answer.paging).toEqual({ currentPage: 1, pageSize: 20, totalCount: 1 });
  });

  it('rounds to the precision asked', async () => {
    const answer = await data({
      aggregate: [
        { type: 'AVG', column: 'amount', alias: 'exact' },
        { type: 'AVG', column: 'amount', alias: 'whole', round: true, precision: 0 },
      ],
    });
    expect(answer.tableData).toEqual([{ exact: 107.1, whole: 107 }]);
  });
});

describe('which records and which groups', () => {
  it("measures only the records get-list's filters and where select ($gteq included)", async () => {
    const answer = await data({
      aggregate: [
        { type: 'SUM', column: 'amount', alias: 'total' },
        { type: 'COUNT', alias: 'orders' },
      ],
      groupBy: ['status'],
      region: 'north',
      where: { amount: { $gteq: 15 } },
    });
    expect(answer.tableData).toEqual([
      { status: 'paid', total: 180.5, orders: 2 },
      { status: 'void', total: 15, orders: 1 },
    ]);
  });

  it('keeps the groups having selects, by alias or by groupBy field', async () => {
    const byAlias = await data({
      aggregate: [{ type: 'COUNT', alias: 'orders' }],
      groupBy: ['status'],
      having: { orders: { $gte: 2 } },
    });
    expect(byAlias.tableData).toEqual([
      { status: 'new', orders: 2 },
      { status: 'paid', orders: 3 },
    ]);
    expect(byAlias.paging.totalCount).toBe(2);
    const byField = await data({
      aggregate: [{ type: 'COUNT', alias: 'orders' }],
      groupBy: ['status'],
      having: { status: { $ne: 'paid' } },
    });
    expect(byField.tableData).toEqual([
      { status: 'new', orders: 2 },
      { status: 'void', orders: 1 },
    ]);
  });

  it('pages the groups, page read as currentPage', async () => {
    const answer = await data({
      aggregate: [{ type: 'SUM', column: 'qty', alias: 'qty' }],
      groupBy: ['customer'],
      page: 2,
      pageSize: 2,
    });
    expect(answer.tableData).toEqual([
      { customer: 'Cy', qty: 6 },
      { customer: 'Dee', qty: 1 },
    ]);
    expect(answer.paging).toEqual({ currentPage: 2, pageSize: 2, totalCount: 6 });
    const past = await data({ aggregate: [{ type: 'COUNT' }], groupBy: ['customer'], currentPage: 9, pageSize: 2 });
    expect(past).toMatchObject({ tableData: [], paging: { currentPage: 9, pageSize: 2, totalCount: 6 } });
  });
});

describe("the caller's grant", () => {
  it('measures only the rows of its row filter, and an alias may take any name', async () => {
    const answer = await data(
      {
        aggregate: [
          { type: 'COUNT', alias: 'orders' },
          { type: 'SUM', column: 'amount', alias: 'cost' },
          { type: 'AVG', column: 'amount', alias: 'mean', round: true, precision: 2 },
        ],
      },
      NARROW,
    );
    expect(answer.tableData).toEqual([{ orders: 4, cost: 195.5, mean: 65.17 }]);
  });

  it('answers a hidden field wherever it is named exactly as a field the dataset does not have', async () => {
    for (const name of ['cost', 'nope']) {
      expectFailure(
        await aggregate({ aggregate: [{ type: 'SUM', column: name }] }, NARROW),
        1001,
        `aggregate[0].column: unknown field '${name}' in dataset 'orders'`,
      );
      expectFailure(
        await aggregate({ aggregate: [{ type: 'COUNT' }], groupBy: [name] }, NARROW),
        1001,
        `groupBy[0]: unknown field '${name}' in dataset 'orders'`,
      );
      expectFailure(
        await aggregate({ aggregate: [{ type: 'COUNT' }], where: { [name]: { $gt: 1 } } }, NARROW),
        1001,
        `where.${name}: unknown field '${name}' in dataset 'orders'`,
      );
      expectFailure(
        await aggregate(
          { aggregate: [{ type: 'COUNT', alias: 'n' }], groupBy: ['status'], having: { [name]: 1 } },
          NARROW,
        ),
        1001,
        `having.${name}: unknown name '${name}': it takes the groupBy fields and the aggregate aliases (status, n)`,
      );
      expectFailure(
        await aggregate(
          { aggregate: [{ type: 'COUNT', alias: 'n' }], groupBy: ['status'], orderBy: [{ [name]: 'asc' }] },
          NARROW,
        ),
        1001,
        `orderBy[0].${name}: unknown name '${name}': it takes the groupBy fields and the aggregate aliases (status, n)`,
      );
    }
  });

  it('is served on the client-key path with the user’s grant, and refused without read', async () => {
    const response = await fetch(`${harness.url}/client/data/aggregate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-User-AK': NINA_KEY },
      body: JSON.stringify({
        appCode: 'app-narrow',
        datasetCode: 'orders',
        paramMap: { aggregate: [{ type: 'COUNT', alias: 'orders' }], groupBy: ['status'] },
      }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { tableData: unknown } }).data.tableData).toEqual([
      { status: 'new', orders: 1 },
      { status: 'paid', orders: 2 },
      { status: 'void', orders: 1 },
    ]);
    expectFailure(
      await aggregate({ aggregate: [{ type: 'COUNT' }] }, WRITER),
      1006,
      "application 'app-writer' may not read records of dataset 'orders'",
    );
  });
});

describe('refusals', () => {
  it.each([
    [{}, /^aggregate: expects 1 to 20 items/],
    [{ aggregate: [] }, /^aggregate: expects 1 to 20 items/],
    [{ aggregate: Array.from({ length: 21 }, () => ({ type: 'COUNT' })) }, /^aggregate: expects 1 to 20 items/],
    [
      { aggregate: [{ type: 'MEDIAN', column: 'amount' }] },
      'aggregate[0].type: expects SUM, AVG, COUNT, MAX or MIN (any letter case)',
    ],
    [{ aggregate: [{ type: 'SUM' }] }, 'aggregate[0].column: SUM needs a column'],
    [
      { aggregate: [{ type: 'SUM', column: 'customer' }] },
      "aggregate[0].column: SUM needs an integer or number field, 'customer' is string",
    ],
    [{ aggregate: [{ type: 'COUNT' }, { type: 'count' }] }, /^aggregate\[1\]: the output name 'count' is taken/],
    [
      { aggregate: [{ type: 'COUNT', alias: 'status' }], groupBy: ['status'] },
      /^aggregate\[0\]: the output name 'status' is taken/,
    ],
    [
      { aggregate: [{ type: 'AVG', column: 'amount', round: true }] },
      'aggregate[0].precision: round needs the number of decimals (precision)',
    ],
    [{ aggregate: [{ type: 'COUNT', alias: 'a b' }] }, /^aggregate\[0\]\.alias: expects 1 to 64 letters/],
    [
      { aggregate: [{ type: 'COUNT', as: 'n' }] },
      'aggregate[0].as: unknown key (type, column, alias, distinct, round, precision)',
    ],
    [{ aggregate: [{ type: 'COUNT' }], groupBy: 'status' }, 'groupBy: expects an array of field names'],
    [
      { aggregate: [{ type: 'COUNT', alias: 'n' }], groupBy: ['status'], orderBy: [{ n: 'up' }] },
      'orderBy[0].n: direction must be "asc" or "desc"',
    ],
    [{ aggregate: [{ type: 'COUNT', alias: 'n' }], having: { n: { $like: 1 } } }, 'having.n.$like: unknown operator'],
    [
      { aggregate: [{ type: 'COUNT' }], stauts: 'new' },
      /^stauts: unknown field or filter in dataset 'orders'; did you mean 'status'\?/,
    ],
    [{ aggregate: [{ type: 'COUNT' }], pageSize: 0 }, 'pageSize must be an integer of at least 1'],
  ])('%j is 1001', async (paramMap, message) => {
    expectFailure(await aggregate(paramMap), 1001, message);
  });

  it('needs a paramMap', async () => {
    const res = await harness.call('/openapi/data/aggregate', { datasetCode: 'orders' });
    expectFailure(res, 1001, 'paramMap is required');
  });
});
