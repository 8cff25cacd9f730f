/**
 * The TypeScript client against the real local server, with a related dataset's fields (docs/interface.md §21):
 * `select`, `where` and `orderBy` take `<relation>.<field>`, and the related fields come back nested.
 */
import path from 'node:path';
import { createClient, type DataAccessClient } from '../../../../../../packages/client/src';
import { FIXTURES_DIR } from '../../../../../support/paths';
import { MAIN_APP, ServiceHarness } from '../../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'));
let client: DataAccessClient;

beforeAll(async () => {
  await harness.start();
  client = createClient({
    baseUrl: `${harness.url}/`,
    appCode: MAIN_APP.appCode,
    accessKey: MAIN_APP.accessKey,
    signingSecret: MAIN_APP.secret,
  });
}, 60_000);
afterAll(() => harness.stop());

interface Order {
  item: string;
  customer: { name: string | null } | null;
}

it('getList selects, filters and sorts by a related field, nested in the answer', async () => {
  const ada = await client.create('customers', { name: 'Ada', tier: 'gold' });
  const bob = await client.create('customers', { name: 'Bob', tier: 'silver' });
  await client.create('orders', { item: 'pen', customer_id: bob.id });
  await client.create('orders', { item: 'ink', customer_id: ada.id });
  await client.create('orders', { item: 'cap' });
  const list = await client.getList<Order>('orders', {
    select: ['item', 'customer.name'],
    orderBy: [{ 'customer.name': 'desc' }],
  });
  expect(list.tableData.map(({ item, customer }) => ({ item, customer }))).toEqual([
    { item: 'pen', customer: { name: 'Bob' } },
    { item: 'ink', customer: { name: 'Ada' } },
    { item: 'cap', customer: null },
  ]);
  expect(list.tableColumns.at(-1)).toEqual({ title: 'customer.Name', dataIndex: 'customer.name' });
  const gold = await client.getList<Order>('orders', { select: ['item'], where: { 'customer.tier': 'gold' } });
  expect(gold.tableData.map((row) => row.item)).toEqual(['ink']);
});
