/**
 * get-list's MySQL engine in a deployment on Aurora (composition/lazy-mirror-engine.ts): made from the environment
 * alone, it loads the Data API engine on its first statement and answers as that engine does, through the Data API
 * as the query user, once the mirror's bookkeeping row says it holds the writes made before the query (the twin
 * over MariaDB; the SDK client of the container pointed at it as `AWS_ENDPOINT_URL_RDS_DATA` would point it).
 */
import { lazyDeployedMirrorEngine } from '../../../../shared/composition/lazy-mirror-engine';
import { dataApiSession } from '../../../../shared/mirror/data-api-session';
import { MirrorTables } from '../../../../shared/mirror/mirror-tables';
import { MAX_RESULT_BYTES } from '../../../../shared/operations/mirror-statement';
import type { MirrorQueryRequest } from '../../../../shared/sql/mirror-engine';
import {
  QUERY_SECRET_ARN,
  RESOURCE_ARN,
  startTwinFixture,
  type TwinFixture,
  WRITER_SECRET_ARN,
} from '../../../support/data-api-twin/twin-fixture';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';

const ORDERS = {
  datasetCode: 'orders',
  fields: [
    { name: 'customer', type: 'string' as const },
    { name: 'amount', type: 'number' as const },
  ],
};
const T = '2024-01-01 00:00:00';

describeWithMariaDb('the Aurora engine get-list loads on its first statement', () => {
  let fixture: TwinFixture;
  const saved = { ...process.env };

  const request = (sql: string): MirrorQueryRequest => ({
    sql,
    values: [],
    datasets: ['orders'],
    startedAt: Date.now(),
    timeZone: 'UTC',
    timeoutMs: 10_000,
    statedLimitMs: 10_000,
    maxBytes: MAX_RESULT_BYTES,
  });

  beforeAll(async () => {
    fixture = await startTwinFixture();
    // A function's environment as the stack gives it (environment.ts reads it whole), its SDK pointed at the twin.
    Object.assign(process.env, {
      RECORDS_TABLE: 'data-access-service-dev-records',
      CATALOG_TABLE: 'data-access-service-dev-catalog',
      QUOTA_TABLE: 'data-access-service-dev-quota',
      KEY_STORE: 'secrets-manager',
      SECRET_PREFIX: 'data-access-service/dev/apps/',
      DEFAULT_SECRET_ID: 'data-access-service/dev/default',
      AWS_ENDPOINT_URL_RDS_DATA: fixture.twin.endpoint,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDTWIN',
      AWS_SECRET_ACCESS_KEY: 'twin-secret',
    });
    const tables = new MirrorTables(
      dataApiSession({
        client: fixture.client,
        resourceArn: RESOURCE_ARN,
        secretArn: WRITER_SECRET_ARN,
        database: fixture.database,
      }),
    );
    await tables.prepare([ORDERS]);
    const row = (n: number) => ({
      id: `o${n}`,
      revision: 1,
      item: { customer: `c${n}`, amount: n * 10, gmt_create: T, gmt_modified: T },
    });
    await tables.apply(ORDERS, [row(1), row(2)]);
    // The mirror's writer has had a round that began after every query below starts, its backfill done.
    await tables.saveFeed('orders', undefined, Date.now() + 600_000);
    await tables.saveBackfill('orders', { done: true, rows: 2 });
  }, 180_000);
  afterAll(async () => {
    process.env = saved;
    await fixture?.stop();
  });

  it('names its database at once, and answers a statement through the Data API as the query user', async () => {
    const engine = lazyDeployedMirrorEngine({
      clusterArn: RESOURCE_ARN,
      database: fixture.database,
      querySecretArn: QUERY_SECRET_ARN,
      writerSecretArn: WRITER_SECRET_ARN,
    });
    expect(engine.database).toBe('das_mirror');
    expect(await engine.run(request('SELECT id, amount FROM orders ORDER BY id'))).toEqual({
      rows: [
        { id: 'o1', amount: 10 },
        { id: 'o2', amount: 20 },
      ],
    });
    await expect(engine.run(request("INSERT INTO orders (id, revision) VALUES ('x', 1)"))).rejects.toThrow(
      /^MySQL error 1142: INSERT command denied to user 'das_query'@'localhost'/,
    );
  });
});
