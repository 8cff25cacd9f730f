/**
 * `das sql status --stage <stage>` (docs/interface.md §20) as an operator runs it against a deployment: the stage's
 * query secret found by its name in Secrets Manager (mocked at the SDK client: there is no local twin of it), the
 * cluster's ARN built from it, and the mirror read through the real RDS Data API client from the Data API twin over
 * MariaDB, which knows only that cluster and the query user's secret: per dataset the rows, the change log position
 * applied and the lag. A stage on the embedded engine, a stage that is not there and a wrong --stage each answer one
 * line and a non-zero exit.
 */
import {
  DescribeSecretCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { ulid } from 'ulid';
import { runSql } from '../../../../bin/cli/sql-command';
import { runDas } from '../../../../packages/client/src/cli/das';
import { MirrorTables } from '../../../../shared/mirror/mirror-tables';
import { parseMysqlUrl, poolOf, sessionOf } from '../../../../shared/mirror/mysql-connection';
import { DataApiTwin } from '../../../support/data-api-twin/data-api-twin';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';

const QUERY_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:data-access-service/dev/sql/query-Ab12Cd';
const CLUSTER_ARN = 'arn:aws:rds:eu-west-1:123456789012:cluster:data-access-service-dev-sql';
const APPLIED_AT = '2026-12-05T10:00:00.000Z';
const POSITION = ulid(Date.parse(APPLIED_AT));
const T = '2026-12-05 09:00:00';

const secrets = mockClient(SecretsManagerClient);
const saved = { ...process.env };

async function das(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = {
    out: (text: string) => {
      out += text;
    },
    err: (text: string) => {
      err += text;
    },
    env: {},
  };
  // The command as `das` runs it: its exit code, and a failure printed as das prints it.
  const sql = { synopsis: 'sql status', summary: 'the MySQL mirror', run: runSql };
  const code = await runDas(['sql', 'status', ...args], io, { commands: { sql } });
  return { code, out, err };
}

describeWithMariaDb('das sql status --stage', () => {
  let mariadb: MariaDb;
  let twin: DataApiTwin;
  let caughtUpAt: number;

  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
    const db = mariadb.connection;
    await db.query('CREATE DATABASE mirror CHARACTER SET utf8mb4');
    // As the deployment makes it (shared/mirror/query-user.ts): it may read the mirror, not write it.
    await db.query("CREATE USER 'das_query'@'localhost' IDENTIFIED BY 'query-pw'");
    await db.query("GRANT SELECT, CREATE TEMPORARY TABLES ON mirror.* TO 'das_query'@'localhost'");
    // The mirror function's writes, straight to MariaDB.
    const target = parseMysqlUrl(mariadb.engineUrl('mirror'));
    const pool = poolOf(target, target, { connectionLimit: 1, init: [] });
    const tables = new MirrorTables(sessionOf(pool));
    const orders = { datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' as const }] };
    const customers = { datasetCode: 'customers', fields: [{ name: 'name', type: 'string' as const }] };
    await tables.prepare([orders, customers]);
    const row = (id: string, value: Record<string, unknown>) => ({
      id,
      revision: 1,
      item: { ...value, gmt_create: T, gmt_modified: T },
    });
    await tables.apply(orders, [row('o1', { customer: 'ann' }), row('o2', { customer: 'bob' }), row('o3', {})]);
    await tables.apply(customers, [row('c1', { name: 'Ann' })]);
    caughtUpAt = Date.now() - 42_000;
    await tables.saveFeed('orders', POSITION, caughtUpAt);
    await tables.saveBackfill('orders', { done: true, rows: 3 });
    await tables.saveBackfill('customers', { cursor: { id: 'c1' }, done: false, rows: 1 });
    await pool.end();

    twin = await DataApiTwin.start({
      socket: mariadb.socket,
      admin: { user: 'root', password: '' },
      resourceArn: CLUSTER_ARN,
      secrets: { [QUERY_SECRET_ARN]: { user: 'das_query', password: 'query-pw' } },
    });
    Object.assign(process.env, {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDSTAGE',
      AWS_SECRET_ACCESS_KEY: 'stage-secret',
      AWS_ENDPOINT_URL_RDS_DATA: twin.endpoint,
    });
  }, 120_000);

  beforeEach(() => {
    secrets.reset();
    secrets
      .on(DescribeSecretCommand)
      .rejects(
        new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} }),
      );
    secrets
      .on(DescribeSecretCommand, { SecretId: 'data-access-service/dev/sql/query' })
      .resolves({ ARN: QUERY_SECRET_ARN });
    secrets
      .on(DescribeSecretCommand, { SecretId: 'data-access-service/dev/default' })
      .resolves({ ARN: 'arn:dev-default' });
    secrets
      .on(DescribeSecretCommand, { SecretId: 'data-access-service/small/default' })
      .resolves({ ARN: 'arn:small-default' });
  });

  afterAll(async () => {
    process.env = saved;
    secrets.restore();
    await twin?.stop();
    await mariadb?.stop();
  });

  it('--json: per dataset the rows, the change log position applied and its time, the lag and the backfill', async () => {
    const run = await das('--stage', 'dev', '--json');
    expect([run.code, run.err]).toEqual([0, '']);
    const statuses = JSON.parse(run.out) as { lagSeconds: number }[];
    expect(statuses).toEqual([
      {
        datasetCode: 'customers',
        rows: 1,
        position: null,
        positionAt: null,
        lagSeconds: null,
        backfill: { done: false, rows: 1 },
      },
      {
        datasetCode: 'orders',
        rows: 3,
        position: POSITION,
        positionAt: APPLIED_AT,
        lagSeconds: expect.any(Number),
        backfill: { done: true, rows: 3 },
      },
    ]);
    // 42 s behind when written, plus the moments the test took since.
    expect(statuses[1]?.lagSeconds).toBeGreaterThanOrEqual(42);
    expect(statuses[1]?.lagSeconds).toBeLessThan(42 + (Date.now() - caughtUpAt - 42_000) / 1000 + 0.1);
    // Read as the query user, through the Data API only.
    expect(twin.calls.filter((call) => call.route !== '/Execute')).toEqual([]);
  });

  it('prints a line per dataset, naming the stage, its cluster and database', async () => {
    const run = await das('--stage', 'dev');
    expect([run.code, run.err]).toEqual([0, '']);
    const [title, customers, orders, end] = run.out.split('\n');
    expect([title, customers, end]).toEqual([
      "MySQL mirror at stage 'dev' (cluster data-access-service-dev-sql, database mirror):",
      'customers: 1 rows, not caught up yet, change log applied through none, backfill running (1 records so far)',
      '',
    ]);
    expect(orders).toMatch(
      /^orders: 3 rows, 4\d(\.\d)? s behind, change log applied through 2026-12-05T10:00:00\.000Z, backfill done$/,
    );
  });

  it('waits for a cluster resuming from a pause, and says so', async () => {
    twin.resumeFor(2);
    const run = await das('--stage', 'dev');
    expect(run.code).toBe(0);
    expect(run.err).toBe('The cluster is resuming after a pause (0 ACUs); waiting for it, a minute at most.\n');
    expect(run.out).toMatch(/^orders: 3 rows, /m);
  });

  it('a stage on the embedded engine has no mirror: one line, exit code 1', async () => {
    const run = await das('--stage', 'small');
    expect(run).toEqual({
      code: 1,
      out: '',
      err:
        "das sql status: stage 'small' runs custom SQL on the embedded engine (deployed with -c sqlEngine=embedded): " +
        'it has no MySQL mirror\n',
    });
  });

  it('a stage not deployed in this account and region: one line, exit code 1', async () => {
    const run = await das('--stage', 'nope');
    expect(run).toEqual({
      code: 1,
      out: '',
      err:
        "das sql status: no stage 'nope' is deployed in eu-west-1 with these credentials (no secret " +
        'data-access-service/nope/default); check --stage, AWS_REGION and AWS_PROFILE\n',
    });
  });

  it('refused by AWS: the error named in one line, exit code 1', async () => {
    secrets.on(DescribeSecretCommand, { SecretId: 'data-access-service/dev/sql/query' }).rejects(
      Object.assign(
        new Error(
          'User: arn:aws:iam::123456789012:user/ops is not authorized to perform: secretsmanager:DescribeSecret',
        ),
        {
          name: 'AccessDeniedException',
        },
      ),
    );
    const run = await das('--stage', 'dev');
    expect(run).toEqual({
      code: 1,
      out: '',
      err:
        "das sql status: stage 'dev': AccessDeniedException: User: arn:aws:iam::123456789012:user/ops is not " +
        'authorized to perform: secretsmanager:DescribeSecret\n',
    });
  });

  it('a stage name that cannot be one, or with --sql-engine too: usage, exit code 2', async () => {
    expect(await das('--stage', 'no stage')).toEqual({
      code: 2,
      out: '',
      err: 'das sql: --stage must be 1 to 64 letters, digits, "_" or "-"\nSee: das sql --help\n',
    });
    expect(await das('--stage', 'dev', '--sql-engine', mariadb.engineUrl('mirror'))).toEqual({
      code: 2,
      out: '',
      err: 'das sql: --sql-engine or --stage: a MySQL engine or a deployment, not both\nSee: das sql --help\n',
    });
  });
});
