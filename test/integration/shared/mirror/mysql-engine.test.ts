/**
 * docs/interface.md §20 over HTTP: `npm start -- --sql-engine mysql://…` runs registered queries on MariaDB (the
 * local twin of MySQL 8), over the mirror the server keeps from the change log: MySQL's own answers and errors,
 * the caller's fields and rows only, parameters bound, a query that reads its own writes, the time limit
 * enforced by the server, and a query user that may only SELECT.
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runSql } from '../../../../bin/cli/sql-command';
import { expectFailure } from '../../../support/failure-envelope';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';
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

const config = {
  applications: [
    {
      appCode: SQL_APP.appCode,
      accessKey: SQL_APP.accessKey,
      signingSecret: SQL_APP.secret,
      grants: [
        { datasetCode: 'orders', operations: ['read', 'create', 'update'] },
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
  ],
  queries: [
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'totals-by-region',
      sql: 'SELECT region, count(*) AS orders, sum(amount) AS total FROM orders WHERE amount >= #{minAmount} GROUP BY region ORDER BY region',
      params: { minAmount: { type: 'number', required: true } },
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'orders-of-customer',
      sql: "SELECT customer, amount, paid, JSON_UNQUOTE(JSON_EXTRACT(meta, '$.channel')) AS channel FROM orders WHERE customer = #{customer} ORDER BY amount",
      params: { customer: { type: 'string', required: true } },
    },
    { appCode: SQL_APP.appCode, sqlCode: 'count-orders', sql: 'SELECT count(*) AS n FROM orders' },
    { appCode: SQL_APP.appCode, sqlCode: 'first-order', sql: 'SELECT (SELECT id FROM orders) AS x' },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'bad-json',
      sql: "SELECT JSON_EXTRACT(customer, '$.a') AS v FROM orders",
    },
    { appCode: SQL_APP.appCode, sqlCode: 'staff-all', sql: 'SELECT * FROM staff ORDER BY name' },
    { appCode: SQL_APP.appCode, sqlCode: 'staff-salaries', sql: 'SELECT name, salary FROM staff' },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'staff-through-with',
      sql: 'WITH s AS (SELECT * FROM staff) SELECT s.* FROM s ORDER BY name',
    },
    { appCode: SQL_APP.appCode, sqlCode: 'regional-all', sql: 'SELECT * FROM regional ORDER BY region' },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'regional-union',
      sql: 'SELECT region FROM regional UNION ALL SELECT r.region FROM regional r JOIN regional q ON q.id = r.id',
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'huge',
      // 2^14 rows of 1,000 characters: 16 MB of answer, more than a response may carry.
      sql: `SELECT a.name, REPEAT('x', 1000) AS pad FROM ${Array.from({ length: 14 }, (_, i) => `staff s${i}`).join(', ')}, staff a`,
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'large',
      // 2^12 rows of 1,000 characters: 4 MB, answered whole.
      sql: `SELECT REPEAT('x', 1000) AS pad FROM ${Array.from({ length: 12 }, (_, i) => `staff s${i}`).join(', ')}`,
    },
    {
      appCode: SQL_APP.appCode,
      sqlCode: 'runaway',
      // Each round makes four rows of each row: 4^59 rows before its own end.
      sql: 'WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c, staff s0, staff s1 WHERE x < 60) SELECT count(*) AS n FROM c',
      timeoutMs: 500,
    },
  ],
};

describeWithMariaDb('custom SQL on MySQL (MariaDB)', () => {
  const configFile = path.join(os.tmpdir(), `sql-mysql-${process.pid}.json`);
  let mariadb: MariaDb;
  let harness: ServiceHarness;

  const executeSql = (body: Record<string, unknown>) =>
    harness.call('/api/custom/executeSql', body, { app: SQL_APP, datasetCode: null });

  async function created(datasetCode: string, paramMap: Record<string, unknown>, app = SQL_APP): Promise<string> {
    const res = await harness.create(datasetCode, paramMap, { app });
    expect(res.body.success).toBe(true);
    return res.body.data.id as string;
  }

  beforeAll(async () => {
    writeFileSync(configFile, JSON.stringify(config));
    mariadb = await MariaDb.start('UTC');
    harness = new ServiceHarness(configFile, { sources: true, sqlEngine: mariadb.engineUrl('mirror') });
    await harness.start();
    await created('orders', { customer: 'ann', region: 'EU', amount: 10, paid: true, meta: { channel: 'web' } });
    await created('orders', { customer: 'ann', region: 'EU', amount: 5.5, paid: false, meta: { channel: 'shop' } });
    await created('orders', { customer: 'bob', region: 'US', amount: 20, paid: true });
    await created('orders', { customer: 'bob', region: 'APAC', amount: 2 });
    await created('staff', { name: 'Zoe', dept: 'ops', salary: 9000 }, OTHER_APP);
    await created('staff', { name: 'Yan', dept: 'dev', salary: 8000 }, OTHER_APP);
    await created('regional', { region: 'EU', code: 'e1' }, OTHER_APP);
    await created('regional', { region: 'US', code: 'u1' }, OTHER_APP);
    await created('regional', { region: 'eu', code: 'e2' }, OTHER_APP);
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    await mariadb?.stop();
    rmSync(configFile, { force: true });
  });

  it('answers an aggregate with GROUP BY and a bound parameter as MySQL does', async () => {
    const res = await executeSql({ sqlCode: 'totals-by-region', params: { minAmount: 5 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      execSuccess: true,
      execResult: [
        { region: 'EU', orders: 2, total: 15.5 },
        { region: 'US', orders: 1, total: 20 },
      ],
    });
  });

  it('binds a parameter as a value, never as SQL', async () => {
    const res = await executeSql({ sqlCode: 'orders-of-customer', params: { customer: "ann' OR '1'='1" } });
    expect(res.body.data).toEqual({ execSuccess: true, execResult: [] });
    const ann = await executeSql({ sqlCode: 'orders-of-customer', params: { customer: 'ann' } });
    expect(ann.body.data).toEqual({
      execSuccess: true,
      execResult: [
        { customer: 'ann', amount: 5.5, paid: 0, channel: 'shop' },
        { customer: 'ann', amount: 10, paid: 1, channel: 'web' },
      ],
    });
  });

  it("sees the caller's own write made just before the query, creates and updates alike", async () => {
    const before = await executeSql({ sqlCode: 'count-orders' });
    const count = before.body.data.execResult[0].n as number;
    const id = await created('orders', { customer: 'cy', region: 'US', amount: 1 });
    const after = await executeSql({ sqlCode: 'count-orders' });
    expect(after.body.data).toEqual({ execSuccess: true, execResult: [{ n: count + 1 }] });
    const updated = await harness.update('orders', { id, amount: 7 }, { app: SQL_APP });
    expect(updated.body.success).toBe(true);
    const read = await executeSql({ sqlCode: 'orders-of-customer', params: { customer: 'cy' } });
    expect(read.body.data).toEqual({
      execSuccess: true,
      execResult: [{ customer: 'cy', amount: 7, paid: null, channel: null }],
    });
  });

  it("answers MySQL's own errors: a scalar subquery of several rows (1242), JSON that is not JSON (MariaDB: NULL)", async () => {
    const several = await executeSql({ sqlCode: 'first-order' });
    expect(several.body.data).toEqual({
      execSuccess: false,
      execError: 'MySQL error 1242: Subquery returns more than 1 row',
    });
    const json = await executeSql({ sqlCode: 'bad-json' });
    // MariaDB answers NULL with a warning (4038) where MySQL 8 fails with 3141: the server's answer is the answer.
    expect(json.body.data.execSuccess).toBe(true);
    expect(json.body.data.execResult.length).toBeGreaterThanOrEqual(4);
    expect(json.body.data.execResult.filter((row: { v: unknown }) => row.v !== null)).toEqual([]);
  });

  it('shows only the fields the grant shows, through *, WITH and an unknown-column answer for a hidden one', async () => {
    const all = await executeSql({ sqlCode: 'staff-all' });
    expect(all.body.data.execResult.map((row: Record<string, unknown>) => Object.keys(row))).toEqual([
      ['id', 'name', 'dept', 'gmt_create', 'gmt_modified'],
      ['id', 'name', 'dept', 'gmt_create', 'gmt_modified'],
    ]);
    expect(all.body.data.execResult.map((row: Record<string, unknown>) => row.name)).toEqual(['Yan', 'Zoe']);
    const through = await executeSql({ sqlCode: 'staff-through-with' });
    expect(through.body.data.execResult).toEqual(all.body.data.execResult);
    const hidden = await executeSql({ sqlCode: 'staff-salaries' });
    expect(hidden.body.data).toEqual({
      execSuccess: false,
      execError: expect.stringMatching(/unknown column 'salary'/i),
    });
  });

  it("shows only the rows inside the grant's row filter, compared exactly (not 'eu'), through UNION and JOIN", async () => {
    const all = await executeSql({ sqlCode: 'regional-all' });
    expect(all.body.data.execResult.map((row: Record<string, unknown>) => [row.region, Object.keys(row)])).toEqual([
      ['EU', ['id', 'region', 'gmt_create', 'gmt_modified']],
    ]);
    const union = await executeSql({ sqlCode: 'regional-union' });
    expect(union.body.data).toEqual({ execSuccess: true, execResult: [{ region: 'EU' }, { region: 'EU' }] });
  });

  it('stops a statement at its time limit on the server (2001), and the next query runs', async () => {
    const started = Date.now();
    const res = await executeSql({ sqlCode: 'runaway' });
    expectFailure(res, 2001, /limit of 500 ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
    const processes = await mariadb.connection.query(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'WITH RECURSIVE c (x)%'",
    );
    expect((processes[0] as { n: number }[])[0]?.n).toBe(0);
    const next = await executeSql({ sqlCode: 'count-orders' });
    expect(next.body.data.execSuccess).toBe(true);
  });

  it('answers a result whole up to 10 MB, and 1001 past it rather than cut short', async () => {
    const large = await executeSql({ sqlCode: 'large' });
    expect(large.body.data.execSuccess).toBe(true);
    expect(large.body.data.execResult).toHaveLength(4096);
    const huge = await executeSql({ sqlCode: 'huge' });
    expectFailure(huge, 1001, /more than the 10 MB a response may carry/);
    const next = await executeSql({ sqlCode: 'count-orders' });
    expect(next.body.data.execSuccess).toBe(true);
  });

  it('das sql status: per dataset the rows, the change log position applied and the lag', async () => {
    const count = (await executeSql({ sqlCode: 'count-orders' })).body.data.execResult[0].n as number;
    let out = '';
    const io = {
      out: (text: string) => {
        out += text;
      },
      err: () => undefined,
      env: {},
    };
    await runSql(['status', '--sql-engine', mariadb.engineUrl('mirror'), '--json'], io);
    const statuses = JSON.parse(out) as { datasetCode: string; rows: number; lagSeconds: number; positionAt: string }[];
    expect(statuses.map((s) => [s.datasetCode, s.rows])).toEqual([
      ['orders', count],
      ['regional', 3],
      ['staff', 2],
    ]);
    for (const status of statuses) {
      expect(status.lagSeconds).toBeLessThan(30);
      expect(Date.parse(status.positionAt)).toBeLessThan(Date.now());
      expect(status).toMatchObject({ backfill: { done: true } });
    }
    out = '';
    await runSql(['status', '--sql-engine', mariadb.engineUrl('mirror')], io);
    expect(out).toMatch(
      /^MySQL mirror at mysql:\/\/root@socket .*\/mirror:\norders: \d+ rows, [\d.]+ s behind, change log applied through \d{4}-/,
    );
  });

  it('runs queries as a user that may only SELECT the mirror tables', async () => {
    const [grants] = await mariadb.connection.query("SHOW GRANTS FOR 'das_query'@'localhost'");
    const lines = (grants as Record<string, string>[]).map((row) => Object.values(row)[0] ?? '');
    expect(lines.filter((line) => !line.startsWith('GRANT USAGE')).sort()).toEqual([
      'GRANT SELECT ON `mirror`.`orders` TO `das_query`@`localhost`',
      'GRANT SELECT ON `mirror`.`regional` TO `das_query`@`localhost`',
      'GRANT SELECT ON `mirror`.`staff` TO `das_query`@`localhost`',
    ]);
  });
});
