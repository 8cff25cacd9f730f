/**
 * A hook's `context.client.sql` in a deployment whose custom SQL runs on Aurora (composition/hooked-handler.ts,
 * docs/interface.md §15 and §20): the handlers of create and get-list, with the environment the stack gives them
 * (`SQL_ENGINE=aurora`, the cluster, the query secret), run a hook's query through the Data API as the query user,
 * once the mirror's bookkeeping row says it holds the writes made before the query, and answer MySQL's own errors.
 * The twin over MariaDB stands for the Data API; the SDK client of the container is pointed at it as
 * `AWS_ENDPOINT_URL_RDS_DATA` would point it. The mirror holds rows of its own that the record store does not, so an
 * answer shows which engine ran the query.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dataApiSession } from '../../../../shared/mirror/data-api-session';
import { STATE_TABLE } from '../../../../shared/mirror/mirror-names';
import { MirrorTables } from '../../../../shared/mirror/mirror-tables';
import {
  QUERY_SECRET_ARN,
  RESOURCE_ARN,
  startTwinFixture,
  type TwinFixture,
  WRITER_SECRET_ARN,
} from '../../../support/data-api-twin/twin-fixture';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const APP: AppCredentials = { appCode: 'app-hooks', accessKey: 'ak-hook-sql-0000001', secret: 'sk-hook-sql-secret' };
const FIELDS = [
  { name: 'customer', type: 'string' as const },
  { name: 'amount', type: 'number' as const },
];
const CONFIG = {
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      grants: [{ datasetCode: 'orders', operations: ['read', 'create'] }],
    },
  ],
  datasets: [{ appCode: APP.appCode, datasetCode: 'orders', fields: FIELDS }],
  queries: [
    { appCode: APP.appCode, sqlCode: 'order-count', sql: 'SELECT COUNT(*) AS n, SUM(amount) AS total FROM orders' },
    // MySQL fails a scalar subquery that returns more than one row (1242).
    { appCode: APP.appCode, sqlCode: 'one-id', sql: 'SELECT (SELECT id FROM orders) AS x' },
  ],
  functions: [
    {
      appCode: APP.appCode,
      name: 'with-count',
      source:
        "export default async function withCount(order, context) { return { ...order, counted: await context.client.sql.execute('order-count', {}) }; }",
    },
    {
      appCode: APP.appCode,
      name: 'with-one-id',
      source:
        "export default async function withOneId(list, context) { return { ...list, oneId: await context.client.sql.execute('one-id', {}) }; }",
    },
  ],
  hooks: [
    { datasetCode: 'orders', operation: 'create', node: 'after', function: 'with-count' },
    { datasetCode: 'orders', operation: 'get-list', node: 'after', function: 'with-one-id' },
  ],
};
const T = '2024-01-01 00:00:00';

describeWithMariaDb("a hook's context.client.sql on a stage whose custom SQL runs on Aurora", () => {
  let fixture: TwinFixture;
  let harness: ServiceHarness;
  const saved = { ...process.env };

  /** The statements the twin ran since `from`, as the query user sent them. */
  const statementsSince = (from: number) =>
    fixture.twin.calls.slice(from).flatMap((call) => (call.route === '/Execute' && call.sql ? [call.sql] : []));

  beforeAll(async () => {
    fixture = await startTwinFixture();
    const tables = new MirrorTables(
      dataApiSession({
        client: fixture.client,
        resourceArn: RESOURCE_ARN,
        secretArn: WRITER_SECRET_ARN,
        database: fixture.database,
      }),
    );
    const orders = { datasetCode: 'orders', fields: FIELDS };
    await tables.prepare([orders]);
    const row = (id: string, amount: number) => ({
      id,
      revision: 1,
      item: { customer: `c-${id}`, amount, gmt_create: T, gmt_modified: T },
    });
    // Two orders in the mirror only: the record store has none of them.
    await tables.apply(orders, [row('m1', 10), row('m2', 20)]);
    // The mirror's writer has had a round that began after every query below starts, its backfill done.
    await tables.saveFeed('orders', undefined, Date.now() + 600_000);
    await tables.saveBackfill('orders', { done: true, rows: 2 });
    const twinCallsBefore = fixture.twin.calls.length;

    // A hooked function's environment on an Aurora stage (lib/operation-function.ts), its SDK pointed at the twin.
    Object.assign(process.env, {
      SQL_ENGINE: 'aurora',
      SQL_CLUSTER_ARN: RESOURCE_ARN,
      SQL_DATABASE: fixture.database,
      SQL_QUERY_SECRET_ARN: QUERY_SECRET_ARN,
      SQL_WRITER_SECRET_ARN: WRITER_SECRET_ARN,
      AWS_ENDPOINT_URL_RDS_DATA: fixture.twin.endpoint,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDTWIN',
      AWS_SECRET_ACCESS_KEY: 'twin-secret',
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'hook-sql-aurora-'));
    const configFile = path.join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(CONFIG));
    harness = new ServiceHarness(configFile, { sources: true });
    await harness.start();
    expect(fixture.twin.calls.length).toBe(twinCallsBefore);
  }, 180_000);
  afterAll(async () => {
    await harness?.stop();
    process.env = saved;
    await fixture?.stop();
  });

  it('in get-one, with no hook that queries: nothing reaches the Data API', async () => {
    const from = fixture.twin.calls.length;
    const res = await harness.getOne('orders', 'no-such-order', { app: APP });
    expect(res.body.success).toBe(false);
    expect(fixture.twin.calls.length).toBe(from);
  });

  it("in create's after hook: runs on Aurora as the query user, after the mirror says it holds the caller's write", async () => {
    const from = fixture.twin.calls.length;
    const res = await harness.create('orders', { customer: 'Ada', amount: 5 }, { app: APP });
    if (res.body.success !== true) expect(res.body).toEqual({ success: true });
    // The mirror's two orders, not the store's one: the embedded engine would answer { n: 1, total: 5 }.
    expect(res.body.data.counted).toEqual({ execSuccess: true, execResult: [{ n: 2, total: 30 }] });
    const statements = statementsSince(from);
    // The wait for the mirror (its bookkeeping row) comes before the statement, which reads the mirror's table.
    const waited = statements.findIndex((sql) => sql.includes(STATE_TABLE));
    const ran = statements.findIndex((sql) => /COUNT\(\*\)/.test(sql));
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(ran).toBeGreaterThan(waited);
    expect(statements[ran]).toContain(`${fixture.database}`);
  });

  it("in get-list's after hook: a statement MySQL fails answers MySQL's own error (1242)", async () => {
    const from = fixture.twin.calls.length;
    const res = await harness.getList('orders', {}, { app: APP });
    if (res.body.success !== true) expect(res.body).toEqual({ success: true });
    expect(res.body.data.oneId).toEqual({
      execSuccess: false,
      execError: 'MySQL error 1242: Subquery returns more than 1 row',
    });
    expect(statementsSince(from).some((sql) => sql.includes('SELECT id FROM'))).toBe(true);
  });
});
