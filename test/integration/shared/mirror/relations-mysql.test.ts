/**
 * docs/interface.md §21 on the mysql engine (§20): a condition or a sort on a related field that the read budget
 * cannot serve runs on MariaDB (the local twin of MySQL 8) over the mirror, where the embedded setup answers 2001
 * to the same requests over the same records (test/integration/shared/query/get-list/relations-budget.test.ts):
 * the right page and the exact total, the caller's grant on the related dataset applied (hidden fields unnameable,
 * rows outside its row filter never matched), the caller's own write seen by its next list.
 */
import path from 'node:path';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';
import { FIXTURES_DIR } from '../../../support/paths';
import { BY_NAME, GOLD_AMOUNT_3, GOLD_BY_NAME, loadRelatedRecords, SOUTH_OR_C0 } from '../../../support/relations-load';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const CONFIG = path.join(FIXTURES_DIR, 'relations-config.json');
const NARROW: AppCredentials = {
  appCode: 'app-narrow',
  accessKey: 'ak-narrow-application',
  secret: 'sk-narrow-secret-value',
};

const O_ORDERS: AppCredentials = {
  appCode: 'app-o-orders',
  accessKey: 'ak-o-orders-application',
  secret: 'sk-o-orders-secret-value',
};

const rows = (body: { data: { tableData: { id: string }[] } }) => body.data.tableData.map(({ id: _id, ...row }) => row);

describeWithMariaDb('related conditions and sorts past the read budget on MySQL (MariaDB)', () => {
  let mariadb: MariaDb;
  let harness: ServiceHarness;
  let unlinked: string[];

  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
    harness = new ServiceHarness(CONFIG, { sources: true, sqlEngine: mariadb.engineUrl('mirror') });
    await harness.start();
    unlinked = await loadRelatedRecords(harness);
  }, 180_000);
  afterAll(async () => {
    await harness?.stop();
    await mariadb?.stop();
  });

  it('answers the page and the exact total of a condition matching 1,050 related records', async () => {
    const res = await harness.getList('orders', { ...GOLD_BY_NAME, page: 2 });
    expect(res.body).toMatchObject({ success: true });
    expect(res.body.data.paging).toEqual({ currentPage: 2, pageSize: 3, totalCount: 1050 });
    expect(rows(res.body)).toEqual([
      { item: 'o1046', customer: { name: 'C1046' } },
      { item: 'o1045', customer: { name: 'C1045' } },
      { item: 'o1044', customer: { name: 'C1044' } },
    ]);
    expect(res.body.data.tableColumns).toEqual([
      { title: 'id', dataIndex: 'id' },
      { title: 'item', dataIndex: 'item' },
      { title: 'customer.Name', dataIndex: 'customer.name' },
    ]);
  });

  it('sorts by a related field past the budget, records without a related record where nulls go', async () => {
    const sorted = BY_NAME;
    const first = await harness.getList('orders', sorted);
    expect(first.body.data.paging.totalCount).toBe(1102);
    // Ties (no related record) by id, in the last key's direction.
    expect(first.body.data.tableData.map((row: { id: string }) => row.id).slice(0, 2)).toEqual([...unlinked].sort());
    expect(rows(first.body)).toEqual([
      expect.objectContaining({ customer: null }),
      expect.objectContaining({ customer: null }),
      { item: 'o0', customer: { name: 'C0000' } },
      { item: 'o1', customer: { name: 'C0001' } },
    ]);
    const last = await harness.getList('orders', { ...sorted, currentPage: 276 });
    expect(last.body.data.paging.totalCount).toBe(1102);
    expect(rows(last.body)).toEqual([
      { item: 'o1098', customer: { name: 'C1098' } },
      { item: 'o1099', customer: { name: 'C1099' } },
    ]);
    const past = await harness.getList('orders', { ...sorted, currentPage: 400 });
    expect(past.body.data).toMatchObject({ tableData: [], paging: { currentPage: 400, totalCount: 1102 } });
  });

  it("applies the caller's grant on the related dataset: its rows only, its fields only", async () => {
    // Customers of the south are outside app-narrow's row filter: the condition never holds through them.
    const either = SOUTH_OR_C0;
    const narrow = await harness.getList('orders', either, { app: NARROW });
    expect(narrow.body.data.paging.totalCount).toBe(500);
    expect(rows(narrow.body)).toEqual([
      { item: 'o998', customer: { name: 'C0998', region: 'north' } },
      { item: 'o996', customer: { name: 'C0996', region: 'north' } },
    ]);
    const main = await harness.getList('orders', either);
    expect(main.body.data.paging.totalCount).toBe(1050);
    expect(rows(main.body)).toEqual([
      { item: 'o1099', customer: { name: 'C1099', region: 'south' } },
      { item: 'o1097', customer: { name: 'C1097', region: 'south' } },
    ]);
    // A sort by a related record the caller may not read puts it where nulls go: south customers sort as null.
    const sortedNarrow = await harness.getList(
      'orders',
      { orderBy: [{ 'customer.name': 'desc' }], select: ['item', 'customer.name'], pageSize: 2, currentPage: 276 },
      { app: NARROW },
    );
    expect(sortedNarrow.body.data.paging.totalCount).toBe(1102);
    expect(rows(sortedNarrow.body)).toEqual([
      { item: expect.stringMatching(/^(o\d*[13579]|x-.*)$/), customer: null },
      { item: expect.stringMatching(/^(o\d*[13579]|x-.*)$/), customer: null },
    ]);
    // Fields its grant hides are unknown names, in a condition and in a sort alike.
    for (const paramMap of [
      { where: { 'customer.tier': 'gold' } },
      { where: { 'customer.email': { $startWith: 'c' } } },
      { orderBy: [{ 'customer.email': 'desc' }] },
    ]) {
      expect((await harness.getList('orders', paramMap, { app: NARROW })).body).toMatchObject({
        success: false,
        errorCode: 1001,
      });
    }
  });

  it("applies the caller's row filter on the listed dataset", async () => {
    // app-o-orders reads the orders whose item sorts before 'p': not the two without a customer.
    const res = await harness.getList('orders', BY_NAME, { app: O_ORDERS });
    expect(res.body.data.paging.totalCount).toBe(1100);
    expect(rows(res.body)).toEqual([
      { item: 'o0', customer: { name: 'C0000' } },
      { item: 'o1', customer: { name: 'C0001' } },
      { item: 'o2', customer: { name: 'C0002' } },
      { item: 'o3', customer: { name: 'C0003' } },
    ]);
  });

  it('answers as the join in memory does where that serves the list', async () => {
    const res = await harness.getList('orders', GOLD_AMOUNT_3);
    expect(res.body.data.paging.totalCount).toBe(105);
    expect(rows(res.body)).toEqual([
      { item: 'o1043', customer: { name: 'C1043' } },
      { item: 'o1033', customer: { name: 'C1033' } },
      { item: 'o1023', customer: { name: 'C1023' } },
    ]);
  });

  it("sees the caller's own write, and rows of the server's own table", async () => {
    const customer = await harness.create('customers', { name: 'Z-new', tier: 'gold', region: 'north' });
    const order = await harness.create('orders', { item: 'z', amount: 1, customer_id: customer.body.data.id });
    const res = await harness.getList('orders', GOLD_BY_NAME);
    expect(res.body.data.paging.totalCount).toBe(1051);
    expect(res.body.data.tableData[0]).toEqual({ id: order.body.data.id, item: 'z', customer: { name: 'Z-new' } });
  });
});
