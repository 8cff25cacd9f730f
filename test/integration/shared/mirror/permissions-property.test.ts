/**
 * docs/interface.md §6, §8 and §20: on MySQL the mirror's tables hold every field and every row, so what keeps
 * hidden fields and rows from a caller is the rewrite alone (shared/sql-dialect/mysql-render.ts with the SELECT of
 * shared/sql/mirror-scope.ts). The same property as the embedded engine's (test/support/permission-queries.ts):
 * queries reach for hidden fields through subqueries, WITH, UNION, JOINs and JSON paths; rendering refuses each
 * that names a hidden field, and every other, run on MariaDB over tables that hold the hidden columns and rows
 * with a marker in each, answers no marker, on MariaDB itself and through the Data API engine. The caller's row filter hides rows too: a marker row of staff
 * (dept 'sec') and of teams (dept 'SEC') that no query may reach.
 */
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import { type ReadableTable, rowFilterScope } from '../../../../shared/access/permissions';
import { Catalog } from '../../../../shared/catalog/catalog';
import { DataApiQueryEngine } from '../../../../shared/mirror/data-api-query-engine';
import { MAX_RESULT_BYTES } from '../../../../shared/operations/mirror-statement';
import { mirrorSource } from '../../../../shared/sql/mirror-scope';
import { DialectError, datasetTable, renderMysqlQuery, UnknownNameError } from '../../../../shared/sql-dialect/dialect';
import { QUERY_SECRET_ARN, RESOURCE_ARN, startTwinFixture } from '../../../support/data-api-twin/twin-fixture';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';
import { HIDDEN, MARKER, query, STAFF, TEAMS } from '../../../support/permission-queries';
import { clock } from '../../../support/statement-clock';

const catalog = new Catalog({
  applications: [],
  datasets: [
    { appCode: 'app', datasetCode: 'staff', fields: STAFF },
    { appCode: 'app', datasetCode: 'teams', fields: TEAMS },
  ],
} as unknown as ConstructorParameters<typeof Catalog>[0]);
const views: Record<string, ReadableTable> = {
  staff: { datasetCode: 'staff', fields: STAFF.filter((f) => !HIDDEN.has(f.name)), rowFilter: { dept: 'ops' } },
  teams: { datasetCode: 'teams', fields: TEAMS.filter((f) => !HIDDEN.has(f.name)), rowFilter: { dept: 'OPS' } },
};
const caller = new Map([
  ['staff', datasetTable({ datasetCode: 'staff', fields: STAFF }, true, new Set(['name', 'dept']))],
  ['teams', datasetTable({ datasetCode: 'teams', fields: TEAMS }, true, new Set(['dept']))],
]);

/** A server with an empty mirror database: `db` writes it (as root), `run` runs a query as custom SQL would. */
interface Server {
  db: mysql.Connection;
  database: string;
  run(sql: string): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

/** The MySQL error number of a failure: mysql2's `errno`, or the engine's `MySQL error <n>: …`. */
function mysqlErrorNumber(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown }).errno;
  if (typeof errno === 'number') return errno;
  const match = /^MySQL error (\d+): /.exec(String((error as Error).message));
  return match ? Number(match[1]) : undefined;
}

function describePermissions(name: string, connect: () => Promise<Server>): void {
  describeWithMariaDb(name, () => {
    let server: Server;

    beforeAll(async () => {
      server = await connect();
      const db = server.db;
      await db.query(
        'CREATE TABLE staff (id VARCHAR(64) PRIMARY KEY, name MEDIUMTEXT, dept MEDIUMTEXT, salary DOUBLE, profile JSON, gmt_create DATETIME, gmt_modified DATETIME, revision BIGINT)',
      );
      await db.query(
        'CREATE TABLE teams (id VARCHAR(64) PRIMARY KEY, dept MEDIUMTEXT, budget BIGINT, gmt_create DATETIME, gmt_modified DATETIME, revision BIGINT)',
      );
      const t = '2024-01-01 00:00:00';
      for (const [id, name, dept, salary, note] of [
        ['s1', 'Ann', 'ops', 9_000_001, `${MARKER}ann`],
        ['s2', 'Bob', 'ops', 9_000_002, `${MARKER}bob`],
        ['s3', `${MARKER}row`, 'sec', 9_000_004, `${MARKER}row`],
      ]) {
        await db.query('INSERT INTO staff VALUES (?, ?, ?, ?, ?, ?, ?, 1)', [
          id,
          name,
          dept,
          salary,
          JSON.stringify({ note, salary }),
          t,
          t,
        ]);
      }
      await db.query('INSERT INTO teams VALUES (?, ?, ?, ?, ?, 1), (?, ?, ?, ?, ?, 1)', [
        't1',
        'OPS',
        9_000_003,
        t,
        t,
        `${MARKER}t2`,
        'SEC',
        9_000_005,
        t,
        t,
      ]);
      // The row filters are exact: their rows are there to be found (a filter that matched nothing would prove nothing).
      expect(rowFilterScope(views.staff?.rowFilter, catalog.dataset('staff') as never)).toBeDefined();
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('refuses every query that names a hidden field, and no other query answers a hidden value or row', async () => {
      let ran = 0;
      await fc.assert(
        fc.asyncProperty(query, async ({ sql, names }) => {
          const namesHidden = names.some((name) => HIDDEN.has(name));
          let statement: ReturnType<typeof renderMysqlQuery>;
          try {
            statement = renderMysqlQuery(
              { appCode: 'app', sqlCode: 'probe', sql },
              { table: (code) => caller.get(code), timeZone: 'UTC', now: clock(new Date(), 'UTC') },
              (code) => mirrorSource(server.database, views[code] as ReadableTable, catalog.dataset(code) as never),
            );
          } catch (error) {
            if (error instanceof DialectError && /ambiguous/.test(error.message)) return;
            expect(error).toBeInstanceOf(UnknownNameError);
            expect(namesHidden).toBe(true);
            return;
          }
          expect(namesHidden).toBe(false);
          let rows: Record<string, unknown>[];
          try {
            rows = await server.run(statement.sql);
          } catch (error) {
            // A statement MariaDB refuses (its own syntax differences, ->> for one) answers nothing at all.
            expect(mysqlErrorNumber(error)).toEqual(expect.any(Number));
            return;
          }
          ran += 1;
          const answer = JSON.stringify(rows);
          expect(answer).not.toContain(MARKER);
          expect(answer).not.toMatch(/900000[12345]/);
          expect(Object.keys(rows[0] ?? {}).some((column) => HIDDEN.has(column))).toBe(false);
        }),
        { numRuns: 300 },
      );
      // Most queries ran on the server: the property is about answers, not about refusals.
      expect(ran).toBeGreaterThan(100);
    }, 120_000);
  });
}

describePermissions('permissions through the MySQL syntax, on MySQL', async () => {
  const mariadb = await MariaDb.start('UTC');
  return {
    db: mariadb.connection,
    database: 'compat',
    async run(sql) {
      const [result] = await mariadb.connection.query(sql, []);
      return result as Record<string, unknown>[];
    },
    stop: () => mariadb.stop(),
  };
});

// The same property with the queries run by the Data API engine as the query user, through the Data API twin.
describePermissions('permissions through the MySQL syntax, on Aurora MySQL through the Data API', async () => {
  const fixture = await startTwinFixture();
  await fixture.mariadb.connection.query(`USE ${fixture.database}`);
  const engine = new DataApiQueryEngine({
    client: fixture.client,
    resourceArn: RESOURCE_ARN,
    secretArn: QUERY_SECRET_ARN,
    database: fixture.database,
    feed: { caughtUp: async () => undefined },
  });
  return {
    db: fixture.mariadb.connection,
    database: fixture.database,
    async run(sql) {
      const startedAt = Date.now();
      const result = await engine.run({
        sql,
        values: [],
        datasets: ['staff', 'teams'],
        startedAt,
        timeZone: 'UTC',
        timeoutMs: 10_000,
        statedLimitMs: 10_000,
        maxBytes: MAX_RESULT_BYTES,
      });
      return result.rows;
    },
    stop: () => fixture.stop(),
  };
});
