/**
 * An index built over stored records answers an equality's exact total from per-value totals, reading a few
 * units whatever the number of matches (docs/totals-and-changes.md): 400 orders written, `items` made indexed,
 * writes before the job reads anything (a create, an update that moves a record, a batch) and while it scans (an
 * update of a record it has read, one of a record it has not), the build completed; then with a read budget of 3
 * units for the keys, which counting 300 index keys would exceed (that list would answer 2001), lists on `items`
 * answer their exact totals reading at most 10 units in all (the 5 records of the page included), and so after a
 * later create. Over HTTP, the index job driven page by page.
 */
import path from 'node:path';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';

process.env.LIST_READ_BUDGET = '3';
const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');
const live = new LiveConfiguration(FIXTURE, { pageSize: 50, recordsPerSegment: 200 });
const ids: string[] = [];

beforeAll(async () => {
  await live.start();
  // items 0, 0, 0, 1, 0, 0, 0, 1, ...: 300 records of 0 and 100 of 1.
  for (let batch = 0; batch < 2; batch++) {
    const paramList = Array.from({ length: 200 }, (_, k) => {
      const i = batch * 200 + k;
      return { customer: `c-${i}`, items: i % 4 === 3 ? 1 : 0 };
    });
    const created = await live.harness.batchCreate('orders', paramList);
    expect(created.body.success).toBe(true);
    ids.push(...(created.body.data as string[]));
  }
}, 120_000);
afterAll(async () => {
  await live.stop();
  delete process.env.LIST_READ_BUDGET;
});

async function totalOf(paramMap: Record<string, unknown>): Promise<{ total: number; readUnits: number }> {
  const answer = await live.harness.getList('orders', { ...paramMap, pageSize: 5 });
  expect(answer.body.errorMsg).toBeUndefined();
  const line = live.harness.logLines.filter((l) => l.operation === 'get-list').at(-1);
  return { total: answer.body.data.paging.totalCount, readUnits: line?.readUnits as number };
}

it('answers exact totals of an index built over 400 stored records within a few read units', async () => {
  const next = structuredClone(loadConfigFile(FIXTURE));
  const items = next.datasets[0]?.fields.find((field) => field.name === 'items');
  if (!items) throw new Error('the fixture has an items field');
  items.indexed = true;
  const plan = await live.apply(next);
  expect(plan.datasets[0]?.indexesToBuild).toEqual([{ field: 'items', records: 400 }]);

  // Before the job reads anything: a create (0), c-5 moved from 0 to 1, a batch (0, 0, 1).
  expect((await live.harness.create('orders', { customer: 'early', items: 0 })).body.success).toBe(true);
  expect((await live.harness.update('orders', { id: ids[5], items: 1 })).body.success).toBe(true);
  const batch = await live.harness.batchCreate('orders', [
    { customer: 'b-1', items: 0 },
    { customer: 'b-2', items: 0 },
    { customer: 'b-3', items: 1 },
  ]);
  expect(batch.body.success).toBe(true);
  // The job starts and reads a page of 50 records; then c-0 (read) becomes 1 and c-398 (not read yet) becomes 2.
  expect(await live.stepIndexJobs()).toBe(true);
  expect(await live.stepIndexJobs()).toBe(true);
  expect((await live.harness.update('orders', { id: ids[0], items: 1 })).body.success).toBe(true);
  expect((await live.harness.update('orders', { id: ids[398], items: 2 })).body.success).toBe(true);
  await live.runIndexJobs();

  // 0: 300 + early + b-1 + b-2 − c-5 − c-0 − c-398 = 300; 1: 100 + c-5 + b-3 + c-0 = 103; 2: c-398.
  const zero = await totalOf({ items: 0 });
  expect(zero.total).toBe(300);
  expect(zero.readUnits).toBeLessThanOrEqual(10);
  expect((await totalOf({ items: 1 })).total).toBe(103);
  expect((await totalOf({ items: 2 })).total).toBe(1);
  expect((await totalOf({ items_start: 1 })).total).toBe(104);
  expect((await totalOf({ items_is_null: true })).total).toBe(0);

  expect((await live.harness.create('orders', { customer: 'late', items: 0 })).body.success).toBe(true);
  const later = await totalOf({ items: 0 });
  expect(later.total).toBe(301);
  expect(later.readUnits).toBeLessThanOrEqual(10);
}, 120_000);
