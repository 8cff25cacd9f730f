/**
 * Exact totals of a list filtered by one indexed condition come from per-value totals, not from reading every
 * matching key: with a read budget of 3 units, an equality matching 600 of 1,000 records (about 5 units of
 * keys) and a range holding half of them are served with their exact totals, through batch creates, creates and
 * updates. Conditions on two indexed fields that both match too much answer 2001 naming both fields and the
 * narrowest one's count.
 */
import path from 'node:path';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

process.env.LIST_READ_BUDGET = '3';
const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));
const STATUSES = ['new', 'new', 'paid', 'new', 'shipped'];

beforeAll(async () => {
  await harness.start();
  for (let batch = 0; batch < 2; batch++) {
    const paramList = Array.from({ length: 500 }, (_, k) => {
      const i = batch * 500 + k;
      return { name: `item-${i}`, qty: i % 4, price: i, status: STATUSES[i % 5] };
    });
    const res = await harness.batchCreate('items', paramList);
    expect(res.body.success).toBe(true);
  }
}, 120_000);
afterAll(async () => {
  await harness.stop();
  delete process.env.LIST_READ_BUDGET;
});

function lastReadUnits(): number {
  const line = harness.logLines.filter((l) => l.operation === 'get-list').at(-1);
  return line?.readUnits as number;
}

describe('one indexed condition: the exact total without reading the matches', () => {
  it('an equality matching 600 of 1,000 records', async () => {
    const res = await harness.getList('items', { status: 'new', pageSize: 5 });
    expect(res.status).toBe(200);
    expect(res.body.data.paging.totalCount).toBe(600);
    expect(res.body.data.tableData).toHaveLength(5);
    expect(res.body.data.tableData.every((r: { status: string }) => r.status === 'new')).toBe(true);
    expect(lastReadUnits()).toBeLessThan(20);
  });

  it('an _in of two values, and a value nobody holds', async () => {
    const both = await harness.getList('items', { status_in: ['paid', 'shipped'], pageSize: 2 });
    expect(both.body.data.paging.totalCount).toBe(400);
    const none = await harness.getList('items', { qty: 7 });
    expect(none.body.data.paging.totalCount).toBe(0);
    expect(none.body.data.tableData).toEqual([]);
  });

  it('a range holding half of the records, sorted by its field', async () => {
    const res = await harness.getList('items', {
      price_start: 250,
      price_end: 749,
      ytSortList: [{ price: 'asc' }],
      pageSize: 3,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.paging.totalCount).toBe(500);
    expect(res.body.data.tableData.map((r: { price: number }) => r.price)).toEqual([250, 251, 252]);
  });

  it('stays exact through a create and updates that move records between values', async () => {
    const created = await harness.create('items', { name: 'late', qty: 1, price: 5000, status: 'new' });
    expect(created.body.success).toBe(true);
    const first = await harness.getList('items', { status: 'paid', pageSize: 1 });
    const id = first.body.data.tableData[0].id;
    expect((await harness.update('items', { id, status: 'new' })).body.success).toBe(true);
    // An update that changes nothing moves nothing.
    expect((await harness.update('items', { id, status: 'new' })).body.success).toBe(true);
    expect((await harness.getList('items', { status: 'new' })).body.data.paging.totalCount).toBe(602);
    expect((await harness.getList('items', { status: 'paid' })).body.data.paging.totalCount).toBe(199);
    expect((await harness.getList('items', { qty: 1 })).body.data.paging.totalCount).toBe(251);
  });
});

describe('conditions on two indexed fields', () => {
  it('start from the narrowest when it fits the budget', async () => {
    const res = await harness.getList('items', { status: 'new', name: 'item-3' });
    expect(res.status).toBe(200);
    expect(res.body.data.paging.totalCount).toBe(1);
    expect(res.body.data.tableData.map((r: { price: number }) => r.price)).toEqual([3]);
  });

  it('answer 2001 naming both fields when even the narrowest matches too many', async () => {
    // 200 shipped, 250 with qty 0: the shipped keys and then the qty keys come to about 4 units.
    const res = await harness.getList('items', { status: 'shipped', qty: 0 });
    expectFailure(res, 2001);
    expect(res.body.errorMsg).toBe(
      "the query would read more than 3 capacity units: no index serves 'qty' and 'status' together, and the narrowest, on 'status', matches 200 records; add a narrower condition on an indexed field",
    );
  });
});
