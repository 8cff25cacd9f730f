/**
 * What a condition or a sort on a related field costs past the small cases (docs/interface.md §21,
 * docs/performance.md "Related fields"): a condition matching more than 100 related records is joined in memory,
 * a join takes at most 1000 records of the listed dataset, and past that the list answers 2001 naming the related
 * conditions and sorts, with what narrows it.
 */
import path from 'node:path';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'));

beforeAll(async () => {
  await harness.start();
  // 101 gold customers: more than a condition's ids can carry.
  const customers = Array.from({ length: 101 }, (_, i) => ({ name: `C${String(i).padStart(3, '0')}`, tier: 'gold' }));
  const created = await harness.batchCreate('customers', customers);
  expect(created.body.success).toBe(true);
  const ids: string[] = created.body.data;
  // 1001 orders, more than a join takes; the first 20 have an amount of 1000 or more.
  const orders = Array.from({ length: 1001 }, (_, i) => ({
    item: `o${i}`,
    amount: i < 20 ? 1000 + i : i % 7,
    customer_id: ids[i % ids.length],
  }));
  expect((await harness.batchCreate('orders', orders.slice(0, 1000))).body.success).toBe(true);
  expect((await harness.batchCreate('orders', orders.slice(1000))).body.success).toBe(true);
}, 120_000);
afterAll(() => harness.stop());

const JOIN_ADVICE =
  "a condition on a related field alone is served when it matches at most 100 related records, and a join of at most 1000 records of 'orders' otherwise: add a condition on a field of 'orders' that narrows the list";

it('refuses a sort by a related field over more records than a join takes, naming it (2001)', async () => {
  expectFailure(
    await harness.getList('orders', { orderBy: [{ 'customer.name': 'desc' }] }),
    2001,
    `the sort by 'customer.name': the other conditions match 1001 records, more than 1000 can be joined; ${JOIN_ADVICE}`,
  );
});

it('refuses a condition matching more than 100 related records when the join is too large too (2001)', async () => {
  expectFailure(
    await harness.getList('orders', { where: { 'customer.tier': 'gold' } }),
    2001,
    `the condition on 'customer.tier': the other conditions match 1001 records, more than 1000 can be joined; ${JOIN_ADVICE}`,
  );
});

it('serves both once a condition on the listed dataset narrows the join', async () => {
  const res = await harness.getList('orders', {
    where: { amount: { $gte: 1000 }, 'customer.tier': 'gold' },
    orderBy: [{ 'customer.name': 'desc' }],
    select: ['item', 'customer.name'],
    pageSize: 3,
  });
  expect(res.body.success).toBe(true);
  expect(res.body.data.paging.totalCount).toBe(20);
  expect(res.body.data.tableData.map(({ id: _id, ...row }: { id: string }) => row)).toEqual([
    { item: 'o19', customer: { name: 'C019' } },
    { item: 'o18', customer: { name: 'C018' } },
    { item: 'o17', customer: { name: 'C017' } },
  ]);
});
