/** docs/interface.md §8 over HTTP: registered queries through the real pipeline, engine and record store (dynalite). */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, parseConfig } from '../../../../shared/catalog-store/load-config';
import { formatTimestamp } from '../../../../shared/records/timestamps';
import { expectFailure, failureWith } from '../../../support/failure-envelope';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const SQL_APP: AppCredentials = {
  appCode: 'app-sql',
  accessKey: 'ak-sql-application-01',
  secret: 'sk-sql-secret-value',
};
const OTHER_APP: AppCredentials = {
  appCode: 'app-neighbour',
  accessKey: 'ak-neighbour-application',
  secret: 'sk-neighbour-secret-value',
};

/** The two-row staff dataset joined with itself `times` times: 2^times rows. */
function staffCrossJoin(times: number): string {
  return Array.from({ length: times }, (_, i) => `staff s${i}`).join(', ');
}

const config = {
  // NOW() is read in this zone: nine hours from UTC, so a statement that read UTC would be seen.
  timeZone: 'Asia/Tokyo',
  applications: [
    {
      appCode: SQL_APP.appCode,
      accessKey: SQL_APP.accessKey,
      signingSecret: SQL_APP.secret,
      grants: [
        { datasetCode: 'orders', operations: ['read', 'create'] },
        { datasetCode: 'customers', operations: ['read', 'create'] },
        { datasetCode: 'staff', operations: ['read'], readFields: ['name', 'dept'] },
        { datasetCode: 'regional', operations: ['read'], readFields: ['region'], rowFilter: { region: 'EU' } },
      ],
    },
    {
      appCode: OTHER_APP.appCode,
      accessKey: OTHER_APP.accessKey,
      signingSecret: OTHER_APP.secret,
      grants: [
        { datasetCode: 'staff', operations: ['read', 'create'] },
        { datasetCode: 'regional', operations: ['read', 'create'] },
        { datasetCode: 'secrets', operations: ['read', 'create'] },
      ],
    },
  ],
  datasets: [
    {
      appCode: SQL_APP.appCode,
      datasetCode: 'orders',
      fields: [
        { name: 'customer', type: 'string', required: true },
        { name: 'region', type: 'enum', options: ['EU', 'US', 'APAC'] },
        { name: 'amount', type: 'number' },
        { name: 'paid', type: 'boolean' },
        { name: 'meta', type: 'json' },
      ],
    },
    {
      appCode: SQL_APP.appCode,
      datasetCode: 'customers',
      fields: [{ name: 'name', type: 'string', required: true }],
    },
    {
      appCode: OTHER_APP.appCode,
      datasetCode: 'staff',
      fields: [
        { name: 'name', type: 'string' },
        { name: 'dept', type: 'string' },
        { name: 'salary', type: 'number' },
      ],
    },
    {
      appCode: OTHER_APP.appCode,
      datasetCode: 'regional',
      fields: [
        { name: 'region', type: 'string' },
        { name: 'code', type: 'string' },
      ],
    },
    { appCode: OTHER_APP.appCode, datasetCode: 'secrets', fields: [{ name: 'value', type: 'string' }] },
  ],
  queries: [
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'totals-by-region',
      id: 101,
      sql: 'SELECT region, count(*) AS orders, sum(amount) AS total FROM orders WHERE amount >= #{minAmount} GROUP BY region ORDER BY region',
      params: { minAmount: { type: 'number', required: true } },
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'totals-by-customer',
      sql: 'SELECT c.name, count(*) AS orders, sum(o.amount) AS total FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.name ORDER BY c.name',
      datasets: ['orders', 'customers'],
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'orders-of-region',
      sql: "SELECT amount, paid, meta->>'$.channel' AS channel FROM orders WHERE region = #{region} AND (#{paid} IS NULL OR paid = #{paid}) ORDER BY amount LIMIT #{limit}",
      params: {
        region: { type: 'string', required: true },
        paid: { type: 'boolean' },
        limit: { type: 'integer', required: true },
      },
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'runaway',
      // 2^40 rows to count: it never ends by itself.
      sql: `SELECT count(*) AS n FROM ${staffCrossJoin(40)}`,
      timeoutMs: 300,
    },
    { appCode: SQL_APP.appCode, sqlCode: 'staff-all', sql: 'SELECT * FROM staff ORDER BY name' },
    { appCode: SQL_APP.appCode, sqlCode: 'staff-salaries', sql: 'SELECT name, salary FROM staff' },
    { appCode: SQL_APP.appCode, sqlCode: 'regional-all', sql: 'SELECT * FROM regional ORDER BY id' },
    { appCode: SQL_APP.appCode, sqlCode: 'regional-codes', sql: 'SELECT code FROM regional' },
    { appCode: SQL_APP.appCode, sqlCode: 'peek-secrets', sql: 'SELECT value FROM secrets' },
    { appCode: SQL_APP.appCode, sqlCode: 'listed-secrets', sql: 'SELECT 1 AS one', datasets: ['secrets'] },
    { appCode: OTHER_APP.appCode, sqlCode: 'neighbour-secrets', id: 202, sql: 'SELECT value FROM secrets' },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'slow-count',
      // 2^24 rows to count: several seconds of work for the engine (so that the quick query, sent 300 ms after it,
      // finishes first even on a loaded machine), well inside its limit.
      sql: `SELECT count(*) AS n FROM ${staffCrossJoin(24)}`,
      timeoutMs: 25_000,
    },
    { appCode: OTHER_APP.appCode, sqlCode: 'neighbour-staff-count', sql: 'SELECT count(*) AS n FROM staff' },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'orders-by-customer-name',
      sql: 'SELECT c.name, count(*) AS orders, sum(amount) AS total FROM orders JOIN (SELECT id AS customer, name FROM customers) AS c USING (customer) GROUP BY customer ORDER BY c.name',
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'staff-same-salary',
      sql: 'SELECT a.name FROM staff a JOIN staff b USING (salary)',
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'counting',
      sql: 'WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < #{upTo}) SELECT count(*) AS numbers, sum(i) AS total FROM n',
      params: { upTo: { type: 'integer', required: true } },
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'runaway-recursion',
      // Each round makes four rows of each row: 4^59 rows before its own end, far below 1000 rounds.
      sql: 'WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c, staff s0, staff s1 WHERE x < 60) SELECT count(*) AS n FROM c',
      timeoutMs: 300,
    },
    { appCode: SQL_APP.appCode, sqlCode: 'clock', sql: 'SELECT NOW() AS now, CURDATE() AS today' },
  ],
};

const configFile = path.join(os.tmpdir(), `sql-execute-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(config));
const harness = new ServiceHarness(configFile);

function executeSql(body: Record<string, unknown>, app: AppCredentials = SQL_APP) {
  return harness.call('/api/custom/executeSql', body, { app, datasetCode: null });
}

async function created(datasetCode: string, paramMap: Record<string, unknown>, app = SQL_APP): Promise<string> {
  const res = await harness.create(datasetCode, paramMap, { app });
  expect(res.body.success).toBe(true);
  return res.body.data.id as string;
}

beforeAll(async () => {
  await harness.start();
  const ann = await created('customers', { name: 'Ann' });
  const bob = await created('customers', { name: 'Bob' });
  await created('orders', { customer: ann, region: 'EU', amount: 10, paid: true, meta: { channel: 'web' } });
  await created('orders', { customer: ann, region: 'EU', amount: 5.5, paid: false, meta: { channel: 'shop' } });
  await created('orders', { customer: bob, region: 'US', amount: 20, paid: true });
  await created('orders', { customer: bob, region: 'APAC', amount: 2 });
  await created('staff', { name: 'Zoe', dept: 'ops', salary: 9000 }, OTHER_APP);
  await created('staff', { name: 'Yan', dept: 'dev', salary: 8000 }, OTHER_APP);
  await created('regional', { region: 'EU', code: 'e1' }, OTHER_APP);
  await created('regional', { region: 'US', code: 'u1' }, OTHER_APP);
  await created('regional', { region: 'EU', code: 'e2' }, OTHER_APP);
  await created('secrets', { value: 'the neighbour’s secret' }, OTHER_APP);
});
afterAll(async () => {
  await harness.stop();
  rmSync(configFile, { force: true });
});

describe('execute-sql', () => {
  it('accepts a dataset header when it is signed, and refuses one that is not', async () => {
    const body = { sqlCode: 'totals-by-region', params: { minAmount: 5 } };
    const signed = await harness.call('/api/custom/executeSql', body, { app: SQL_APP, datasetCode: 'orders' });
    expect(signed.status).toBe(200);
    expect(signed.body.data.execSuccess).toBe(true);
    const unsigned = await harness.call('/api/custom/executeSql', body, {
      app: SQL_APP,
      datasetCode: null,
      headers: { 'X-Dataset-Code': 'orders' },
    });
    expectFailure(unsigned, 1002);
  });

  it("answers NOW() and CURDATE() in the configuration's time zone, at the request's moment", async () => {
    const before = Date.now();
    const res = await executeSql({ sqlCode: 'clock' });
    const after = Date.now();
    expect(res.body.data).toEqual({
      execSuccess: true,
      execResult: [{ now: expect.any(String), today: expect.any(String) }],
    });
    const { now, today } = res.body.data.execResult[0] as { now: string; today: string };
    // Between the two readings of the clock around the request, as Tokyo reads them.
    expect(now >= formatTimestamp(new Date(before), 'Asia/Tokyo')).toBe(true);
    expect(now <= formatTimestamp(new Date(after), 'Asia/Tokyo')).toBe(true);
    expect(today).toBe(now.slice(0, 10));
  });

  it('runs an aggregate with GROUP BY and a parameter', async () => {
    const res = await executeSql({ sqlCode: 'totals-by-region', params: { minAmount: 5 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      msg: null,
      data: {
        execSuccess: true,
        execResult: [
          { region: 'EU', orders: 2, total: 15.5 },
          { region: 'US', orders: 1, total: 20 },
        ],
      },
    });
  });

  it('finds a query by its numeric id and accepts a numeric string for a number parameter', async () => {
    const res = await executeSql({ id: 101, params: { minAmount: '1' } });
    expect(res.body.data).toEqual({
      execSuccess: true,
      execResult: [
        { region: 'APAC', orders: 1, total: 2 },
        { region: 'EU', orders: 2, total: 15.5 },
        { region: 'US', orders: 1, total: 20 },
      ],
    });
  });

  it('joins two datasets', async () => {
    const res = await executeSql({ sqlCode: 'totals-by-customer' });
    expect(res.body.data).toEqual({
      execSuccess: true,
      execResult: [
        { name: 'Ann', orders: 2, total: 15.5 },
        { name: 'Bob', orders: 2, total: 22 },
      ],
    });
  });

  it('binds booleans, integers and absent optional parameters, and reads JSON fields with ->>', async () => {
    const all = await executeSql({ sqlCode: 'orders-of-region', params: { region: 'eu', limit: 10 } });
    expect(all.body.data.execResult).toEqual([
      { amount: 5.5, paid: 0, channel: 'shop' },
      { amount: 10, paid: 1, channel: 'web' },
    ]);
    const paid = await executeSql({ sqlCode: 'orders-of-region', params: { region: 'EU', paid: true, limit: 1 } });
    expect(paid.body.data.execResult).toEqual([{ amount: 10, paid: 1, channel: 'web' }]);
  });

  it('answers 1001 for a negative LIMIT parameter', async () => {
    const res = await executeSql({ sqlCode: 'orders-of-region', params: { region: 'EU', limit: -1 } });
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: "parameter 'limit' must be 0 or more (it is a LIMIT)" });
  });

  it.each([
    ["EU' OR '1'='1"],
    ["EU' UNION SELECT name, 1, 1 FROM customers --"],
    ['EU; DELETE FROM orders'],
  ])('treats an injection attempt in a parameter as a plain value: %s', async (region) => {
    const res = await executeSql({ sqlCode: 'orders-of-region', params: { region, limit: 10 } });
    expect(res.body.data).toEqual({ execSuccess: true, execResult: [] });
  });

  it.each([
    [{ sqlCode: 'totals-by-region' }, "parameter 'minAmount' is required"],
    [
      { sqlCode: 'totals-by-region', params: { minAmount: 1, region: 'EU' } },
      "parameter 'region' is not declared by this query",
    ],
    [{ sqlCode: 'totals-by-region', params: { minAmount: 'lots' } }, "parameter 'minAmount' expects a number"],
    [{ sqlCode: 'orders-of-region', params: { region: 'EU', limit: 1.5 } }, "parameter 'limit' expects an integer"],
    [
      { sqlCode: 'orders-of-region', params: { region: 'EU', paid: 'yes', limit: 1 } },
      "parameter 'paid' expects a boolean (true or false)",
    ],
    [{ sqlCode: 'totals-by-region', params: [5] }, 'params must be an object of parameter names to values'],
  ])('answers 1001 for missing, undeclared and mistyped parameters: %j', async (body, message) => {
    const res = await executeSql(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: message });
  });

  it('answers 1001 for an unknown code, an unknown id and no code at all', async () => {
    expect((await executeSql({ sqlCode: 'no-such-query' })).body).toEqual({
      ...failureWith(1001),
      errorMsg: "query 'no-such-query' not found",
    });
    expect((await executeSql({ id: 999 })).body).toEqual({
      ...failureWith(1001),
      errorMsg: 'query with id 999 not found',
    });
    expect((await executeSql({})).body).toEqual({
      ...failureWith(1001),
      errorMsg: 'sqlCode (or a numeric id) is required',
    });
  });

  it('does not find another application’s query, by code or by id', async () => {
    expect((await executeSql({ sqlCode: 'neighbour-secrets' })).body).toEqual({
      ...failureWith(1001),
      errorMsg: "query 'neighbour-secrets' not found",
    });
    expect((await executeSql({ id: 202 })).body).toEqual({
      ...failureWith(1001),
      errorMsg: 'query with id 202 not found',
    });
    // The owner runs it fine.
    const own = await executeSql({ sqlCode: 'neighbour-secrets' }, OTHER_APP);
    expect(own.body.data).toEqual({ execSuccess: true, execResult: [{ value: 'the neighbour’s secret' }] });
  });

  it.each([
    ['broken', 'SELECT nope FROM orders', "query 'broken': Unknown column 'nope' in 'field list' at character 8"],
    [
      'wipe',
      'DELETE FROM orders',
      "query 'wipe' uses the statement DELETE (queries are read-only: SELECT or WITH ... SELECT) at character 1, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)",
    ],
    [
      'sneaky-wipe',
      'WITH doomed AS (SELECT id FROM orders) DELETE FROM orders WHERE id IN (SELECT id FROM doomed)',
      "query 'sneaky-wipe': syntax error at 'DELETE' (SELECT expected) at character 40",
    ],
    [
      'two-statements',
      'SELECT 1; DELETE FROM orders',
      "query 'two-statements' uses more than one statement (only one SELECT is allowed) at character 11, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)",
    ],
    [
      'not-grouped',
      'SELECT region, customer, count(*) AS n FROM orders GROUP BY region',
      "query 'not-grouped': Expression #2 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'orders.customer' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by at character 16",
    ],
  ])('refuses at load a query that MySQL 8 refuses or that could only fail or write (%s), naming it', (sqlCode, sql, message) => {
    const refused = { ...config, queries: [...config.queries, { appCode: SQL_APP.appCode, sqlCode, sql }] };
    let problems: unknown;
    try {
      parseConfig(refused);
    } catch (error) {
      problems = error instanceof ConfigError ? error.problems : error;
    }
    expect(problems).toEqual([{ path: `queries[${config.queries.length}].sql`, message }]);
  });

  it('shows a dataset only with the fields its grant lets the application read', async () => {
    const all = await executeSql({ sqlCode: 'staff-all' });
    expect(all.body.data.execSuccess).toBe(true);
    expect(all.body.data.execResult.map((row: Record<string, unknown>) => Object.keys(row))).toEqual([
      ['id', 'name', 'dept', 'gmt_create', 'gmt_modified'],
      ['id', 'name', 'dept', 'gmt_create', 'gmt_modified'],
    ]);
    expect(all.body.data.execResult.map((row: Record<string, unknown>) => [row.name, row.dept])).toEqual([
      ['Yan', 'dev'],
      ['Zoe', 'ops'],
    ]);
    const hidden = await executeSql({ sqlCode: 'staff-salaries' });
    expect(hidden.body.data).toEqual({ execSuccess: false, execError: "Unknown column 'salary' in 'field list'" });
  });

  it('shows a dataset under readFields and a row filter exactly as get-list shows it', async () => {
    const res = await executeSql({ sqlCode: 'regional-all' });
    const list = await harness.getList('regional', { ytSortList: [{ id: 'asc' }] }, { app: SQL_APP });
    expect(list.body.data.paging.totalCount).toBe(2);
    expect(res.body.data).toEqual({ execSuccess: true, execResult: list.body.data.tableData });
    expect(res.body.data.execResult.map((row: Record<string, unknown>) => Object.keys(row))).toEqual([
      ['id', 'region', 'gmt_create', 'gmt_modified'],
      ['id', 'region', 'gmt_create', 'gmt_modified'],
    ]);
    expect(res.body.data.execResult.map((row: Record<string, unknown>) => row.region)).toEqual(['EU', 'EU']);
    const hidden = await executeSql({ sqlCode: 'regional-codes' });
    expect(hidden.body.data).toEqual({ execSuccess: false, execError: "Unknown column 'code' in 'field list'" });
  });

  it('does not show a dataset the application has no grant for', async () => {
    const peek = await executeSql({ sqlCode: 'peek-secrets' });
    expect(peek.body.data).toEqual({ execSuccess: false, execError: "Table 'secrets' doesn't exist" });
    const listed = await executeSql({ sqlCode: 'listed-secrets' });
    expect(listed.body).toEqual({
      ...failureWith(1006),
      errorMsg: "application 'app-sql' may not read dataset 'secrets'",
    });
  });

  it('stops a runaway query at its time limit (2001) and serves the next query', async () => {
    const started = Date.now();
    const res = await executeSql({ sqlCode: 'runaway' });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      ...failureWith(2001),
      errorMsg: 'the query ran longer than its limit of 300 ms and was stopped',
    });
    // The statement never ends by itself; the bound is generous on purpose (timings are not what is tested).
    expect(elapsed).toBeLessThan(10_000);
    const next = await executeSql({ sqlCode: 'totals-by-region', params: { minAmount: 100 } });
    expect(next.body.data).toEqual({ execSuccess: true, execResult: [] });
  });

  it('merges the columns of JOIN ... USING and groups by the merged one', async () => {
    const res = await executeSql({ sqlCode: 'orders-by-customer-name' });
    expect(res.body.data).toEqual({
      execSuccess: true,
      execResult: [
        { name: 'Ann', orders: 2, total: 15.5 },
        { name: 'Bob', orders: 2, total: 22 },
      ],
    });
    const hidden = await executeSql({ sqlCode: 'staff-same-salary' });
    expect(hidden.body.data).toEqual({ execSuccess: false, execError: "Unknown column 'salary' in 'from clause'" });
  });

  it('runs a recursive WITH query up to 1000 rounds and answers MySQL 8’s error past them', async () => {
    const within = await executeSql({ sqlCode: 'counting', params: { upTo: 1000 } });
    expect(within.body.data).toEqual({ execSuccess: true, execResult: [{ numbers: 1000, total: 500500 }] });
    const past = await executeSql({ sqlCode: 'counting', params: { upTo: 1001 } });
    expect(past.status).toBe(200);
    expect(past.body).toEqual({
      success: true,
      msg: null,
      data: {
        execSuccess: false,
        execError:
          'MySQL error 3636: Recursive query aborted after 1001 iterations. Try increasing @@cte_max_recursion_depth to a larger value.',
      },
    });
  });

  it('stops a recursive WITH query that grows past its time limit before its 1000th round (2001)', async () => {
    const res = await executeSql({ sqlCode: 'runaway-recursion' });
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      ...failureWith(2001),
      errorMsg: 'the query ran longer than its limit of 300 ms and was stopped',
    });
    const next = await executeSql({ sqlCode: 'counting', params: { upTo: 3 } });
    expect(next.body.data).toEqual({ execSuccess: true, execResult: [{ numbers: 3, total: 6 }] });
  });

  it('answers another application’s quick query while one application’s slow query runs', async () => {
    const done: string[] = [];
    const slow = executeSql({ sqlCode: 'slow-count' }).then((res) => {
      done.push('slow query of app-sql');
      return res;
    });
    // Sent once the slow statement is under way (it runs for a second or more), so that a shared queue would
    // hold the quick query behind it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const quick = await executeSql({ sqlCode: 'neighbour-staff-count' }, OTHER_APP);
    done.push('quick query of app-neighbour');
    expect(quick.body.data).toEqual({ execSuccess: true, execResult: [{ n: 2 }] });
    expect((await slow).body.data).toEqual({ execSuccess: true, execResult: [{ n: 16777216 }] });
    expect(done).toEqual(['quick query of app-neighbour', 'slow query of app-sql']);
  });

  it('sees a record written just before the query', async () => {
    const customer = await created('customers', { name: 'Cy' });
    await created('orders', { customer, region: 'US', amount: 1 });
    const res = await executeSql({ sqlCode: 'totals-by-region', params: { minAmount: 1 } });
    expect(res.body.data.execResult).toEqual([
      { region: 'APAC', orders: 1, total: 2 },
      { region: 'EU', orders: 2, total: 15.5 },
      { region: 'US', orders: 2, total: 21 },
    ]);
  });

  // Last: it adds records that the expectations above do not count.
  it('reuses a loaded dataset until a write changes it, then sees the write', async () => {
    const lines = () => harness.logLines.filter((line) => line.operation === 'execute-sql');
    await executeSql({ sqlCode: 'totals-by-customer' });
    const warm = await executeSql({ sqlCode: 'totals-by-customer' });
    // Only the two datasets' versions are read (one consistent read each); no record is read again.
    expect(lines().at(-1)).toMatchObject({ requestId: warm.headers.get('x-request-id'), readUnits: 2 });
    const carl = await created('customers', { name: 'Carl' });
    await created('orders', { customer: carl, region: 'US', amount: 7 });
    const after = await executeSql({ sqlCode: 'totals-by-customer' });
    expect(after.body.data.execResult).toEqual([
      { name: 'Ann', orders: 2, total: 15.5 },
      { name: 'Bob', orders: 2, total: 22 },
      { name: 'Carl', orders: 1, total: 7 },
      { name: 'Cy', orders: 1, total: 1 },
    ]);
    expect(Number(lines().at(-1)?.readUnits)).toBeGreaterThan(2);
  });
});
