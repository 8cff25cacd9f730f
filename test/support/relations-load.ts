/**
 * The records of the relations tests past the read budget (docs/interface.md §21; test/fixtures/relations-config.json),
 * loaded alike on the embedded setup (relations-budget.test.ts: 2001) and on MySQL (relations-mysql.test.ts: served):
 * 1,100 customers C0000…C1099, gold below 1,050, north when even; order o<i> links to customer i with amount i % 10;
 * two more orders link to nothing and to no record (their ids are answered, in creation order).
 */
import type { ServiceHarness } from './service-harness';

export async function loadRelatedRecords(harness: ServiceHarness): Promise<string[]> {
  const customers = Array.from({ length: 1100 }, (_, i) => ({
    name: `C${String(i).padStart(4, '0')}`,
    tier: i < 1050 ? 'gold' : 'silver',
    region: i % 2 === 0 ? 'north' : 'south',
    email: `c${i}@example.com`,
  }));
  const ids: string[] = [];
  for (const chunk of [customers.slice(0, 1000), customers.slice(1000)]) {
    const created = await harness.batchCreate('customers', chunk);
    expect(created.body.success).toBe(true);
    ids.push(...created.body.data);
  }
  const orders = ids.map((id, i) => ({ item: `o${i}`, amount: i % 10, customer_id: id }));
  for (const chunk of [orders.slice(0, 1000), orders.slice(1000)]) {
    expect((await harness.batchCreate('orders', chunk)).body.success).toBe(true);
  }
  const unlinked = await harness.batchCreate('orders', [
    { item: 'x-none', amount: 0 },
    { item: 'x-dangling', amount: 0, customer_id: '01DANGLINGCUSTOMER00000000' },
  ]);
  expect(unlinked.body.success).toBe(true);
  return unlinked.body.data;
}

/** A condition matching 1,050 customers (and orders) with a sort by a related field. */
export const GOLD_BY_NAME = {
  where: { 'customer.tier': 'gold' },
  orderBy: [{ 'customer.name': 'desc' }],
  select: ['item', 'customer.name'],
  pageSize: 3,
};

/** A sort by a related field alone, over all 1,102 orders. */
export const BY_NAME = { orderBy: [{ 'customer.name': 'asc' }], select: ['item', 'customer.name'], pageSize: 4 };

/**
 * Two conditions on one relation under `$or`: 1,050 customers (C0000…C0999 and the south), 500 of them in the
 * north, which app-narrow's row filter reaches.
 */
export const SOUTH_OR_C0 = {
  where: { $or: [{ 'customer.region': 'south' }, { 'customer.name': { $startWith: 'C0' } }] },
  orderBy: [{ 'customer.name': 'desc' }],
  select: ['item', 'customer.name', 'customer.region'],
  pageSize: 2,
};

/** A related condition and sort narrowed by a condition on the orders: 105 orders, joined in memory. */
export const GOLD_AMOUNT_3 = { ...GOLD_BY_NAME, where: { amount: 3, 'customer.tier': 'gold' } };
