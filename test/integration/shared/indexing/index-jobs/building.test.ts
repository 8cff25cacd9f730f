/**
 * While a newly indexed field's index is being built (docs/interface.md §17), a list the planner cannot serve
 * within the read budget without it answers 2001 saying the index is being built and how far it has come; once
 * the build is complete the same list is served through the index. Over HTTP, the index job driven page by page.
 */
import path from 'node:path';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { expectFailure } from '../../../../support/failure-envelope';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';

// Read once, when the first request builds the container's ports: this file's server has a tiny budget.
process.env.LIST_READ_BUDGET = '2';
const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');
const live = new LiveConfiguration(FIXTURE, { pageSize: 10, recordsPerSegment: 100 });

beforeAll(async () => {
  await live.start();
  const note = 'x'.repeat(3000);
  for (let i = 0; i < 30; i++) {
    const created = await live.harness.create('orders', { customer: `c-${i}`, items: i % 4, note });
    expect(created.body.success).toBe(true);
  }
}, 120_000);
afterAll(async () => {
  await live.stop();
  delete process.env.LIST_READ_BUDGET;
});

it('answers 2001 with the build’s progress until the index is complete, then serves the list through it', async () => {
  const next = structuredClone(loadConfigFile(FIXTURE));
  const items = next.datasets[0]?.fields.find((field) => field.name === 'items');
  if (!items) throw new Error('the fixture has an items field');
  items.indexed = true;
  const plan = await live.apply(next);
  expect(plan.datasets[0]?.indexesToBuild).toEqual([{ field: 'items', records: 30 }]);

  const building = async (percent: number) => {
    const answer = await live.harness.getList('orders', { items: 1 });
    expectFailure(answer, 2001);
    expect(answer.body.errorMsg).toBe(
      `the query would read more than 2 capacity units: the index of 'items' is being built (${percent}% done). ` +
        'Until the index is complete, add a condition on an indexed field, or try again later',
    );
  };
  // Its job has not started: nothing processed yet.
  await building(0);
  // The job starts, then its one segment reads one page of 10 of the 30 records.
  expect(await live.stepIndexJobs()).toBe(true);
  expect(await live.stepIndexJobs()).toBe(true);
  await building(33);

  await live.runIndexJobs();
  const served = await live.harness.getList('orders', { items: 1, pageSize: 100 });
  expect(served.body.success).toBe(true);
  expect(served.body.data.paging.totalCount).toBe(8);
  expect(served.body.data.tableData.map((record: { customer: string }) => record.customer)).toEqual([
    'c-29',
    'c-25',
    'c-21',
    'c-17',
    'c-13',
    'c-9',
    'c-5',
    'c-1',
  ]);
});
