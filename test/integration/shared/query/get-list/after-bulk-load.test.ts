/**
 * Usable at once after a bulk load (docs/interface.md §22): a dataset the configuration names while it holds no
 * records has its record count started at zero, so the first list after a batch-create load (no list before it)
 * reads the load's count entries and its page, never the whole partition: page 1 with its exact total costs what it
 * costs once the load has settled.
 */
import path from 'node:path';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));

beforeAll(async () => {
  await harness.start();
  for (let batch = 0; batch < 5; batch++) {
    const paramList = Array.from({ length: 1000 }, (_, k) => ({ name: `bulk-${batch}-${k}`, qty: k % 7, price: k }));
    const res = await harness.batchCreate('items', paramList);
    expect(res.body.success).toBe(true);
  }
}, 120_000);
afterAll(() => harness.stop());

function lastList(): number {
  return harness.logLines.filter((line) => line.operation === 'get-list').at(-1)?.readUnits as number;
}

it('the first list after a load of 5,000 records answers page 1 with its exact total in a few read units', async () => {
  const res = await harness.getList('items', { pageSize: 20 });
  expect(res.status).toBe(200);
  expect(res.body.data.paging.totalCount).toBe(5000);
  expect(res.body.data.tableData).toHaveLength(20);
  // The page's 20 records and the five batches' count entries: 2.5 read units. Reading the partition to count it, as
  // a dataset's first count did, took 585.5 for these 5,000 records, and grew with them.
  expect(lastList()).toBeLessThanOrEqual(5);
  const again = await harness.getList('items', { pageSize: 20 });
  expect(again.body.data.paging.totalCount).toBe(5000);
  expect(lastList()).toBeLessThanOrEqual(5);
}, 60_000);
