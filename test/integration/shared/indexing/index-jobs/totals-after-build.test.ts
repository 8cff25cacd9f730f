/**
 * Exact totals of a field indexed under stored records (docs/interface.md §17, docs/totals-and-changes.md): 20
 * orders written, `items` made indexed, more writes while its index is built (a create before the job reads the
 * records, an update part-way), the build completed; then a list with one condition on `items` answers the exact
 * total of every record, not only of the writes since the index was made, and so does a list after later writes.
 * Over HTTP, the index job driven page by page.
 */
import path from 'node:path';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';

const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');
const live = new LiveConfiguration(FIXTURE, { pageSize: 4, recordsPerSegment: 100 });
const ids: string[] = [];

beforeAll(async () => {
  await live.start();
  // items 0, 1, 2, 3, 0, 1, ...: five records of each value.
  for (let i = 0; i < 20; i++) {
    const created = await live.harness.create('orders', { customer: `c-${i}`, items: i % 4 });
    expect(created.body.success).toBe(true);
    ids.push(created.body.data.id);
  }
}, 120_000);
afterAll(() => live.stop());

async function totalOf(paramMap: Record<string, unknown>): Promise<{ total: number; customers: string[] }> {
  const answer = await live.harness.getList('orders', { ...paramMap, pageSize: 100 });
  expect(answer.body.errorMsg).toBeUndefined();
  return {
    total: answer.body.data.paging.totalCount,
    customers: answer.body.data.tableData.map((record: { customer: string }) => record.customer),
  };
}

it('a field indexed under stored records answers exact totals once its build is complete, and after later writes', async () => {
  const next = structuredClone(loadConfigFile(FIXTURE));
  const items = next.datasets[0]?.fields.find((field) => field.name === 'items');
  if (!items) throw new Error('the fixture has an items field');
  items.indexed = true;
  const plan = await live.apply(next);
  expect(plan.datasets[0]?.indexesToBuild).toEqual([{ field: 'items', records: 20 }]);

  // Written under the new configuration before the job reads anything: its change item counts it for the build.
  const early = await live.harness.create('orders', { customer: 'early', items: 1 });
  expect(early.body.success).toBe(true);
  // The job starts and reads one page of 4 records; then c-2 (items 2) becomes items 1.
  expect(await live.stepIndexJobs()).toBe(true);
  expect(await live.stepIndexJobs()).toBe(true);
  const moved = await live.harness.update('orders', { id: ids[2], items: 1 });
  expect(moved.body.success).toBe(true);
  await live.runIndexJobs();

  expect(await totalOf({ items: 1 })).toEqual({
    total: 7,
    customers: ['early', 'c-17', 'c-13', 'c-9', 'c-5', 'c-2', 'c-1'],
  });
  expect((await totalOf({ items: 2 })).total).toBe(4);
  expect((await totalOf({ items_start: 2 })).total).toBe(9);
  expect((await totalOf({ items_is_null: true })).total).toBe(0);

  // Later writes: two creates and an update that moves c-1 from 1 to 3.
  for (const customer of ['late-1', 'late-2']) {
    const created = await live.harness.create('orders', { customer, items: 1 });
    expect(created.body.success).toBe(true);
  }
  const later = await live.harness.update('orders', { id: ids[1], items: 3 });
  expect(later.body.success).toBe(true);
  expect(await totalOf({ items: 1 })).toEqual({
    total: 8,
    customers: ['late-2', 'late-1', 'early', 'c-17', 'c-13', 'c-9', 'c-5', 'c-2'],
  });
  expect((await totalOf({ items: 3 })).total).toBe(6);
  expect((await totalOf({ items_start: 2 })).total).toBe(10);
}, 120_000);
