/**
 * Related fields on get-list over HTTP (docs/interface.md §21): `<relation>.<field>` in `select` (nested answers,
 * `null` for an empty, dangling or unreadable link), in `where` and in `orderBy`, through the caller's own grant on
 * the related dataset, and the 1001s of paths that are not one.
 */
import path from 'node:path';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'));
const NARROW: AppCredentials = {
  appCode: 'app-narrow',
  accessKey: 'ak-narrow-application',
  secret: 'sk-narrow-secret-value',
};
const ORDERS_ONLY: AppCredentials = {
  appCode: 'app-orders-only',
  accessKey: 'ak-orders-only-application',
  secret: 'sk-orders-only-secret',
};

const CUSTOMERS = [
  { name: 'Ada', tier: 'gold', region: 'north', email: 'ada@example.com' },
  { name: 'Bob', tier: 'silver', region: 'south', email: 'bob@example.com' },
  { name: 'Cy', tier: 'gold', region: 'north', email: 'cy@example.com' },
  { name: 'Dee', tier: null, region: 'north', email: null },
];
const customerIds: Record<string, string> = {};

beforeAll(async () => {
  await harness.start();
  for (const customer of CUSTOMERS) {
    const res = await harness.create('customers', customer);
    expect(res.body.success).toBe(true);
    customerIds[customer.name] = res.body.data.id;
  }
  const orders = [
    { item: 'pen', amount: 5, customer_id: customerIds.Ada },
    { item: 'ink', amount: 20, customer_id: customerIds.Bob },
    { item: 'pad', amount: 12, customer_id: customerIds.Cy },
    { item: 'cap', amount: 7, customer_id: null },
    { item: 'mug', amount: 9, customer_id: '01NOSUCHCUSTOMER0000000000' },
    { item: 'box', amount: 30, customer_id: customerIds.Ada },
    { item: 'cup', amount: 3, customer_id: customerIds.Dee },
  ];
  for (const order of orders) expect((await harness.create('orders', order)).body.success).toBe(true);
}, 60_000);
afterAll(() => harness.stop());

async function list(paramMap: Record<string, unknown>, app?: AppCredentials) {
  const res = await harness.getList('orders', { pageSize: 100, ...paramMap }, app ? { app } : {});
  expect(res.body).toMatchObject({ success: true });
  return res.body.data;
}

async function items(paramMap: Record<string, unknown>, app?: AppCredentials): Promise<string[]> {
  return (await list({ select: ['item'], ...paramMap }, app)).tableData.map((row: { item: string }) => row.item);
}

describe('select', () => {
  it('nests the selected related fields, null for an empty or dangling link', async () => {
    const data = await list({ select: ['item', 'customer.name', 'customer.tier'], orderBy: [{ amount: 'asc' }] });
    expect(data.tableData.map(({ id: _id, ...row }: { id: string }) => row)).toEqual([
      { item: 'cup', customer: { name: 'Dee', tier: null } },
      { item: 'pen', customer: { name: 'Ada', tier: 'gold' } },
      { item: 'cap', customer: null },
      { item: 'mug', customer: null },
      { item: 'pad', customer: { name: 'Cy', tier: 'gold' } },
      { item: 'ink', customer: { name: 'Bob', tier: 'silver' } },
      { item: 'box', customer: { name: 'Ada', tier: 'gold' } },
    ]);
    expect(data.tableColumns).toEqual([
      { title: 'id', dataIndex: 'id' },
      { title: 'item', dataIndex: 'item' },
      { title: 'customer.Name', dataIndex: 'customer.name' },
      { title: 'customer.tier', dataIndex: 'customer.tier' },
    ]);
  });

  it('takes the related id and timestamps like any other field of the related dataset', async () => {
    const data = await list({ select: ['customer.id'], where: { item: 'pen' } });
    expect(data.tableData).toEqual([{ id: expect.any(String), customer: { id: customerIds.Ada } }]);
  });

  it("reads a page's related records in one batch read, each distinct record once", async () => {
    await list({ select: ['item'], orderBy: [{ amount: 'asc' }] });
    const without = harness.logLines.at(-1)?.readUnits;
    await list({ select: ['item', 'customer.name'], orderBy: [{ amount: 'asc' }] });
    const withRelation = harness.logLines.at(-1)?.readUnits;
    // Five distinct links (Ada's twice, one dangling, one empty and unread) at 0.5 units each.
    expect(without).toBeGreaterThan(0);
    expect((withRelation as number) - (without as number)).toBe(2.5);
  });
});

describe('where', () => {
  it('narrows the list by a condition on a related field', async () => {
    expect(await items({ where: { 'customer.tier': 'gold' }, orderBy: [{ amount: 'asc' }] })).toEqual([
      'pen',
      'pad',
      'box',
    ]);
    const data = await list({ where: { 'customer.name': { $in: ['Bob', 'Cy'] }, amount: { $gteq: 15 } } });
    expect(data.tableData.map((row: { item: string }) => row.item)).toEqual(['ink']);
    expect(data.paging.totalCount).toBe(1);
  });

  it('matches no record without a related record, not even a condition on null', async () => {
    expect(await items({ where: { 'customer.tier': null } })).toEqual(['cup']);
    expect(await items({ where: { 'customer.name': { $ne: 'Ada' } }, orderBy: [{ amount: 'asc' }] })).toEqual([
      'cup',
      'pad',
      'ink',
    ]);
  });

  it('joins in memory a condition on a related field under $or with one of this dataset', async () => {
    const where = { $or: [{ 'customer.tier': 'silver' }, { amount: { $lte: 5 } }] };
    expect(await items({ where, orderBy: [{ amount: 'asc' }] })).toEqual(['cup', 'pen', 'ink']);
  });

  it('joins in memory when the related ids would make a filter the store cannot evaluate in one read', async () => {
    // 590 values under $or: the store evaluates them alone, not with one more `customer_id IN (...)` beside them.
    const values = Array.from({ length: 590 }, (_, i) => (i === 0 ? 'pen' : i === 1 ? 'box' : `v${i}`));
    const parts = [];
    for (let i = 0; i < values.length; i += 100) parts.push({ item: { $in: values.slice(i, i + 100) } });
    const where = { $or: parts, 'customer.name': 'Ada' };
    expect(await items({ where, orderBy: [{ amount: 'asc' }] })).toEqual(['pen', 'box']);
    expect(await items({ where: { $or: parts }, orderBy: [{ amount: 'asc' }] })).toEqual(['pen', 'box']);
  });

  it('answers an empty page when no related record matches', async () => {
    const data = await list({ where: { 'customer.name': 'Nobody' } });
    expect(data).toMatchObject({ tableData: [], paging: { totalCount: 0 } });
  });
});

describe('orderBy', () => {
  it('orders by a related field, records without a related record where nulls go', async () => {
    const orderBy = [{ 'customer.name': 'asc' }, { amount: 'asc' }];
    expect(await items({ orderBy })).toEqual(['cap', 'mug', 'pen', 'box', 'ink', 'pad', 'cup']);
    const page = await list({ select: ['item'], orderBy, page: 2, pageSize: 3 });
    expect(page.tableData.map((row: { item: string }) => row.item)).toEqual(['box', 'ink', 'pad']);
    expect(page.paging).toEqual({ currentPage: 2, pageSize: 3, totalCount: 7 });
    expect(await items({ ytSortList: [{ 'customer.name': 'desc' }, { amount: 'desc' }] })).toEqual([
      'cup',
      'pad',
      'ink',
      'box',
      'pen',
      'mug',
      'cap',
    ]);
  });

  it('orders a list narrowed by a related condition', async () => {
    const where = { 'customer.region': 'north' };
    expect(await items({ where, orderBy: [{ 'customer.name': 'desc' }, { amount: 'desc' }] })).toEqual([
      'cup',
      'pad',
      'box',
      'pen',
    ]);
  });
});

describe("the caller's grant on the related dataset", () => {
  it('shows only the fields it shows, and null for a row outside its row filter', async () => {
    const data = await list(
      { select: ['item', 'customer.name', 'customer.region'], orderBy: [{ amount: 'asc' }] },
      NARROW,
    );
    expect(data.tableData.map(({ id: _id, ...row }: { id: string }) => row)).toEqual([
      { item: 'cup', customer: { name: 'Dee', region: 'north' } },
      { item: 'pen', customer: { name: 'Ada', region: 'north' } },
      { item: 'cap', customer: null },
      { item: 'mug', customer: null },
      { item: 'pad', customer: { name: 'Cy', region: 'north' } },
      { item: 'ink', customer: null },
      { item: 'box', customer: { name: 'Ada', region: 'north' } },
    ]);
  });

  it('matches no row outside its row filter', async () => {
    expect(await items({ where: { 'customer.name': 'Bob' } }, NARROW)).toEqual([]);
    expect(await items({ where: { 'customer.region': { $ne: 'north' } } }, NARROW)).toEqual([]);
  });

  it('refuses a hidden related field as it refuses a hidden field', async () => {
    expectFailure(
      await harness.getList('orders', { select: ['customer.email'] }, { app: NARROW }),
      1001,
      "select[0]: unknown field 'email' in dataset 'customers'",
    );
    expectFailure(
      await harness.getList('orders', { where: { 'customer.tier': 'gold' } }, { app: NARROW }),
      1001,
      "where.customer.tier: unknown field 'tier' in dataset 'customers'",
    );
  });

  it('refuses a relation to a dataset the caller may not read (1006)', async () => {
    expectFailure(
      await harness.getList('orders', { select: ['customer.name'] }, { app: ORDERS_ONLY }),
      1006,
      "select[0]: application 'app-orders-only' has no access to dataset 'customers'",
    );
  });
});

describe('paths that are not a related field', () => {
  it('refuses two levels, an unknown relation and an unknown field with what to send', async () => {
    expectFailure(
      await harness.getList('orders', { select: ['customer.name.first'] }),
      1001,
      "select[0]: 'customer.name.first' goes more than one level deep; a related field is named <relation>.<field>",
    );
    expectFailure(
      await harness.getList('orders', { where: { 'customers.name': 'Ada' } }),
      1001,
      "where.customers.name: unknown relation 'customers' in dataset 'orders' (its relations: 'customer'); did you mean 'customer'?",
    );
    expectFailure(
      await harness.getList('orders', { orderBy: [{ 'customer.nmae': 'asc' }] }),
      1001,
      "orderBy[0].customer.nmae: unknown field 'nmae' in dataset 'customers'; did you mean 'name'?",
    );
  });

  it('refuses a related field in the suffix filters, which take this dataset’s fields only', async () => {
    const res = await harness.getList('orders', { 'customer.name': 'Ada' });
    expect(res.body).toMatchObject({ success: false, errorCode: 1001 });
    expect(res.body.errorMsg).toMatch(/^customer\.name: unknown field or filter in dataset 'orders'/);
  });
});
