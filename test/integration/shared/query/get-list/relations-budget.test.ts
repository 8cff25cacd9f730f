/**
 * What a condition or a sort on a related field costs past the small cases (docs/interface.md §21,
 * docs/performance.md "Related fields"), on a service without a MySQL engine: a condition matching more than 100
 * related records is joined in memory, a join takes at most 1000 records of the listed dataset, and past that the
 * list answers 2001 naming the related conditions and sorts, with what narrows it. The same requests are served
 * on MySQL (test/integration/shared/mirror/relations-mysql.test.ts).
 */
import path from 'node:path';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import {
  BY_NAME,
  GOLD_AMOUNT_3,
  GOLD_BY_NAME,
  loadRelatedRecords,
  SOUTH_OR_C0,
} from '../../../../support/relations-load';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'));
const NARROW: AppCredentials = {
  appCode: 'app-narrow',
  accessKey: 'ak-narrow-application',
  secret: 'sk-narrow-secret-value',
};

beforeAll(async () => {
  await harness.start();
  await loadRelatedRecords(harness);
}, 120_000);
afterAll(() => harness.stop());

const JOIN_ADVICE =
  "a condition on a related field alone is served when it matches at most 100 related records, and a join of at most 1000 records of 'orders' otherwise: add a condition on a field of 'orders' that narrows the list";

it('refuses a sort by a related field over more records than a join takes, naming it (2001)', async () => {
  expectFailure(
    await harness.getList('orders', BY_NAME),
    2001,
    `the sort by 'customer.name': the other conditions match 1102 records, more than 1000 can be joined; ${JOIN_ADVICE}`,
  );
});

it('refuses a condition matching more than 100 related records when the join is too large too (2001)', async () => {
  expectFailure(
    await harness.getList('orders', GOLD_BY_NAME),
    2001,
    "the condition on 'customer.tier' and the sort by 'customer.name': the other conditions match 1102 records, " +
      `more than 1000 can be joined; ${JOIN_ADVICE}`,
  );
  expectFailure(
    await harness.getList('orders', SOUTH_OR_C0, { app: NARROW }),
    2001,
    "the condition on 'customer.region' and the condition on 'customer.name' and the sort by 'customer.name': " +
      `the other conditions match 1102 records, more than 1000 can be joined; ${JOIN_ADVICE}`,
  );
});

it('serves both once a condition on the listed dataset narrows the join', async () => {
  const res = await harness.getList('orders', GOLD_AMOUNT_3);
  expect(res.body.success).toBe(true);
  expect(res.body.data.paging.totalCount).toBe(105);
  expect(res.body.data.tableData.map(({ id: _id, ...row }: { id: string }) => row)).toEqual([
    { item: 'o1043', customer: { name: 'C1043' } },
    { item: 'o1033', customer: { name: 'C1033' } },
    { item: 'o1023', customer: { name: 'C1023' } },
  ]);
});
