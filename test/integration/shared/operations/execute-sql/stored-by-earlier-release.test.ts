/**
 * A configuration an earlier release applied, whose queries today's check refuses (a function custom SQL no longer
 * accepts, a grouping MySQL 8 refuses): the functions that run no SQL read it and serve, and execute-sql answers
 * each such query as a statement that fails, in the words `das config validate` refuses it with, while the other
 * queries run. Over HTTP, the configuration stored as a deploy stores it.
 */
import path from 'node:path';
import { ConfigError, loadConfigFile, parseConfig } from '../../../../../shared/catalog-store/load-config';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';
import { MAIN_APP } from '../../../../support/service-harness';

const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');
const live = new LiveConfiguration(FIXTURE);

const SLEEPY =
  "query 'sleepy' uses the function SLEEP() at character 8, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)";
const NOT_GROUPED =
  "query 'not-grouped': Expression #2 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'orders.customer' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by at character 16";

/** The fixture with two queries today's check refuses, as an earlier release stored it (its check let them in). */
function storedByEarlierRelease() {
  const config = structuredClone(loadConfigFile(FIXTURE));
  config.queries = [
    ...(config.queries ?? []),
    { appCode: MAIN_APP.appCode, sqlCode: 'sleepy', sql: 'SELECT SLEEP(1) FROM orders' },
    {
      appCode: MAIN_APP.appCode,
      sqlCode: 'not-grouped',
      sql: 'SELECT region, customer, COUNT(*) AS n FROM orders GROUP BY region',
    },
  ];
  return config;
}

const executeSql = (sqlCode: string) =>
  live.harness.call('/api/custom/executeSql', { sqlCode }, { app: MAIN_APP, datasetCode: null });

beforeAll(async () => {
  await live.start();
  expect((await live.harness.create('orders', { customer: 'Ann', region: 'EU', amount: 5 })).body.success).toBe(true);
  await live.apply(storedByEarlierRelease());
}, 120_000);
afterAll(() => live.stop());

it('is refused where an operator writes it, with every refused query by path', () => {
  let problems: unknown;
  try {
    parseConfig(storedByEarlierRelease());
  } catch (error) {
    problems = error instanceof ConfigError ? error.problems : error;
  }
  expect(problems).toEqual([
    { path: 'queries[1].sql', message: SLEEPY },
    { path: 'queries[2].sql', message: NOT_GROUPED },
  ]);
});

it('serves the operations that run no SQL', async () => {
  const list = await live.harness.getList('orders');
  expect(list.status).toBe(200);
  expect(list.body.data.tableData.map((row: Record<string, unknown>) => row.customer)).toEqual(['Ann']);
});

it.each([
  ['sleepy', SLEEPY],
  ['not-grouped', NOT_GROUPED],
])('answers the query %s as a statement that fails, naming what refuses it', async (sqlCode, message) => {
  const answer = await executeSql(sqlCode);
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ success: true, msg: null, data: { execSuccess: false, execError: message } });
});

it('runs the queries the check accepts', async () => {
  const answer = await executeSql('all-orders');
  expect(answer.body.data.execSuccess).toBe(true);
  expect(answer.body.data.execResult.map((row: Record<string, unknown>) => row.customer)).toEqual(['Ann']);
});
