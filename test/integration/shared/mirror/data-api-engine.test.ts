/**
 * docs/interface.md §20 in a deployment: custom SQL on Aurora MySQL through the RDS Data API, here through the
 * Data API twin (test/support/data-api-twin/) over MariaDB. The mirror is written through the Data API as the
 * writer user (MirrorTables over dataApiSession); queries run as the query user: MySQL's own answers and errors,
 * the time limit enforced on the server, results over the Data API's 1 MiB per call read whole, past 10 MB 1001,
 * and an auto-paused cluster waited for within the limit.
 */
import { InvalidParameterError, QueryTimeoutError } from '../../../../shared/contract/errors';
import { DataApiQueryEngine } from '../../../../shared/mirror/data-api-query-engine';
import { dataApiSession } from '../../../../shared/mirror/data-api-session';
import { MirrorStateWait } from '../../../../shared/mirror/mirror-state-wait';
import { MirrorTables } from '../../../../shared/mirror/mirror-tables';
import { MAX_RESULT_BYTES } from '../../../../shared/operations/mirror-statement';
import type { MirrorQueryRequest } from '../../../../shared/sql/mirror-engine';
import { SqlStatementError } from '../../../../shared/sql/query-engine';
import { lastPositionAt } from '../../../../shared/storage/event-store';
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
    { name: 'note', type: 'text' as const },
  ],
};
const T = '2024-01-01 00:00:00';
/** Rows of about 4 KB: 300 of them are over 1 MiB, 3,000 over 10 MB. */
const LONG_NOTE = 'n'.repeat(4_000);

describeWithMariaDb('custom SQL through the Data API', () => {
  let fixture: TwinFixture;
  let engine: DataApiQueryEngine;
  let tables: MirrorTables;

  const request = (sql: string, values: MirrorQueryRequest['values'] = [], more: Partial<MirrorQueryRequest> = {}) => ({
    sql,
    values,
    datasets: ['orders'],
    startedAt: Date.now(),
    timeZone: 'UTC',
    timeoutMs: 20_000,
    statedLimitMs: 20_000,
    maxBytes: MAX_RESULT_BYTES,
    ...more,
  });

  beforeAll(async () => {
    fixture = await startTwinFixture();
    tables = new MirrorTables(
      dataApiSession({
        client: fixture.client,
        resourceArn: RESOURCE_ARN,
        secretArn: WRITER_SECRET_ARN,
        database: fixture.database,
      }),
    );
    await tables.prepare([ORDERS]);
    const row = (n: number, note: string) => ({
      id: `o${String(n).padStart(5, '0')}`,
      revision: 1,
      item: { customer: `c${n % 3}`, amount: n, note, gmt_create: T, gmt_modified: T },
    });
    await tables.apply(ORDERS, [row(1, 'first'), row(2, 'second'), row(3, 'third')]);
    await tables.apply(
      ORDERS,
      Array.from({ length: 3_000 }, (_, i) => row(100 + i, LONG_NOTE)),
    );
    engine = new DataApiQueryEngine({
      client: fixture.client,
      resourceArn: RESOURCE_ARN,
      secretArn: QUERY_SECRET_ARN,
      database: fixture.database,
      // Every write here is in the mirror before the queries start (the feed's wait is mirror-feed.test.ts's).
      feed: { caughtUp: async () => undefined },
      resumePollMs: 50,
    });
  }, 180_000);
  afterAll(async () => {
    await fixture?.stop();
  });

  it('answers a query with its parameters bound, as the query user', async () => {
    const result = await engine.run(
      request('SELECT id, customer, amount FROM orders WHERE amount < ? ORDER BY amount DESC', [3]),
    );
    expect(result).toEqual({
      rows: [
        { id: 'o00002', customer: 'c2', amount: 2 },
        { id: 'o00001', customer: 'c1', amount: 1 },
      ],
    });
  });

  it("answers a statement MySQL fails in MySQL's own words", async () => {
    await expect(engine.run(request('SELECT (SELECT id FROM orders) AS x'))).rejects.toEqual(
      new SqlStatementError('MySQL error 1242: Subquery returns more than 1 row'),
    );
    await expect(engine.run(request("INSERT INTO orders (id, revision) VALUES ('x', 1)"))).rejects.toThrow(
      /^MySQL error 1142: INSERT command denied to user 'das_query'@'localhost' for table `das_mirror`.`orders`$/,
    );
  });

  it('stops a statement at its time limit on the server (2001), and the next query runs', async () => {
    const slow =
      'WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c, orders s0 WHERE x < 40) SELECT count(*) AS n FROM c';
    const started = Date.now();
    await expect(engine.run(request(slow, [], { timeoutMs: 500, statedLimitMs: 500 }))).rejects.toEqual(
      new QueryTimeoutError('the query ran longer than its limit of 500 ms and was stopped'),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    const running = await fixture.mariadb.connection.query(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'WITH RECURSIVE c (x)%'",
    );
    expect(running[0]).toEqual([{ n: 0 }]);
    expect((await engine.run(request('SELECT COUNT(*) AS n FROM orders'))).rows).toEqual([{ n: 3_003 }]);
  });

  it("answers 2001 when the Data API's own statement limit stops the statement", async () => {
    fixture.twin.limitStatements(300);
    try {
      await expect(
        engine.run(
          request(
            'WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c, orders s0 WHERE x < 40) SELECT count(*) AS n FROM c',
          ),
        ),
      ).rejects.toEqual(new QueryTimeoutError('the query ran longer than its limit of 20000 ms and was stopped'));
    } finally {
      fixture.twin.limitStatements(45_000);
    }
  });

  it('reads a result larger than one Data API response (1 MiB) whole, in the order of the statement', async () => {
    const before = fixture.twin.calls.length;
    const result = await engine.run(
      request('SELECT id, note FROM orders WHERE amount >= ? ORDER BY id DESC LIMIT 600', [100]),
    );
    expect(result.rows).toHaveLength(600);
    expect(result.rows[0]).toEqual({ id: 'o03099', note: LONG_NOTE });
    expect(result.rows[599]).toEqual({ id: 'o02500', note: LONG_NOTE });
    expect(result.rows.map((row) => row.id)).toEqual(
      Array.from({ length: 600 }, (_, i) => `o${String(3_099 - i).padStart(5, '0')}`),
    );
    expect(Buffer.byteLength(JSON.stringify(result.rows))).toBeGreaterThan(2 * 1024 * 1024);
    // Refused whole by the Data API, then run once into a temporary table and read in pages under 1 MiB.
    const statements = fixture.twin.calls.slice(before).flatMap((call) => (call.sql ? [call.sql] : []));
    expect(statements.filter((sql) => sql.includes('FROM orders WHERE amount >= :p1'))).toHaveLength(2);
    expect(statements.filter((sql) => /^CREATE TEMPORARY TABLE `das_result_\w+`/.test(sql))).toHaveLength(1);
    expect(statements.filter((sql) => /^SELECT \* FROM `das_result_\w+`/.test(sql)).length).toBeGreaterThanOrEqual(5);
  });

  it('answers 1001 for a result over 10 MB, and nothing of it', async () => {
    await expect(engine.run(request('SELECT id, note FROM orders'))).rejects.toEqual(
      new InvalidParameterError(
        'the query answers more than the 10 MB a response may carry: select fewer rows (LIMIT, WHERE) or fewer columns',
      ),
    );
  });

  it('waits for a cluster resuming from a pause within the limit, and answers', async () => {
    fixture.twin.resumeFor(3);
    const before = fixture.twin.calls.length;
    const result = await engine.run(request('SELECT customer FROM orders WHERE id = ?', ['o00003']));
    expect(result.rows).toEqual([{ customer: 'c0' }]);
    expect(fixture.twin.calls.slice(before, before + 4).map((call) => call.route)).toEqual([
      '/BeginTransaction',
      '/BeginTransaction',
      '/BeginTransaction',
      '/BeginTransaction',
    ]);
  });

  it('answers 2001 with Retry-After when the cluster does not resume within the limit', async () => {
    fixture.twin.resumeFor(1_000);
    try {
      const failure = await engine
        .run(request('SELECT 1 AS one', [], { timeoutMs: 400, statedLimitMs: 400 }))
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(QueryTimeoutError);
      expect(failure).toMatchObject({
        message:
          "the MySQL engine is resuming after a pause and did not answer within the query's limit of 400 ms; try again shortly",
        retryAfterSeconds: 15,
      });
    } finally {
      fixture.twin.resumeFor(0);
    }
  });

  it("waits for the mirror's writer (elsewhere in a deployment) through its bookkeeping rows, or answers how far behind it is", async () => {
    const wait = new MirrorStateWait(
      { client: fixture.client, resourceArn: RESOURCE_ARN, secretArn: QUERY_SECRET_ARN, database: fixture.database },
      50,
    );
    const since = Date.now();
    await tables.saveBackfill('orders', { done: true, rows: 3_003 });
    await tables.saveFeed('orders', undefined, since - 60_000);
    await expect(wait.caughtUp(['orders'], since, Date.now() + 300, 300)).rejects.toThrow(
      /^the MySQL mirror did not catch up with the writes made before this query within its limit of 300 ms \(dataset 'orders' is 6[01] s behind\); try again shortly$/,
    );
    await expect(wait.caughtUp(['teams'], since, Date.now() + 200, 200)).rejects.toThrow(
      "the MySQL mirror did not catch up with the writes made before this query within its limit of 200 ms (dataset 'teams' is still being copied into it); try again shortly",
    );
    // A round that began after the query started is saved while it waits: it answers.
    const waited = wait.caughtUp(['orders'], since, Date.now() + 5_000, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await tables.saveFeed('orders', undefined, since + 1);
    await expect(waited).resolves.toBeUndefined();
  });

  it('waits while a dataset is copied again after a stop past the retention, whatever rounds it applies, naming the lag', async () => {
    const wait = new MirrorStateWait(
      { client: fixture.client, resourceArn: RESOURCE_ARN, secretArn: QUERY_SECRET_ARN, database: fixture.database },
      50,
    );
    const since = Date.now();
    await tables.restartBackfill('orders', {
      position: lastPositionAt(since - 60_000),
      reason: 'the mirror stopped at the change log position of …',
      staleSince: since - 31 * 86_400_000,
    });
    // A round that began after the query started: not enough while the copy runs.
    await tables.saveFeed('orders', lastPositionAt(since), since + 1);
    await expect(wait.caughtUp(['orders'], since, Date.now() + 300, 300)).rejects.toThrow(
      /\(dataset 'orders' is 26784\d\d s behind and being copied into it again, its changes since then no longer in the change log\); try again shortly$/,
    );
    const waited = wait.caughtUp(['orders'], since, Date.now() + 5_000, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await tables.saveBackfill('orders', { done: true, rows: 3_003 });
    await expect(waited).resolves.toBeUndefined();
    expect(await tables.state('orders')).toMatchObject({ backfillDone: true, staleSince: 0 });
    expect((await tables.state('orders'))?.backfillReason).toBeUndefined();
  });
});
