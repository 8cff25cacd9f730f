/**
 * The deployment's mirror function, against MariaDB (docs/interface.md §20; shared/mirror/mirror-run.ts and
 * query-user.ts): one run applies the change log and backfills stored records until its time is up, says how far
 * behind the mirror was, and fails as a whole only when every round failed; the query user it relies on is made
 * by the writer with the query secret's password, may SELECT the mirror and nothing else, and follows a new
 * password on the next deploy, waiting for a paused cluster to resume.
 */
import mysql from 'mysql2/promise';
import { encodeTime } from 'ulid';
import type { FieldConfig } from '../../../../shared/catalog/schema';
import type { ChangeLogReader } from '../../../../shared/mirror/mirror-feed';
import { runMirror } from '../../../../shared/mirror/mirror-run';
import { MirrorTables, type SqlSession } from '../../../../shared/mirror/mirror-tables';
import { poolOf, sessionOf } from '../../../../shared/mirror/mysql-connection';
import { ensureQueryUser, queryUserStatements } from '../../../../shared/mirror/query-user';
import type { StoredChange } from '../../../../shared/storage/event-store';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';

const FIELDS: FieldConfig[] = [
  { name: 'a', type: 'string' },
  { name: 'n', type: 'integer' },
];
const DATASET = { datasetCode: 'things', fields: FIELDS };

const item = (id: string, revision: number, a: string, n: number) => ({
  a,
  n,
  '@sk': id,
  '@rev': revision,
  gmt_create: '2024-01-01 00:00:00',
  gmt_modified: '2024-01-01 00:00:00',
});

describeWithMariaDb('a run of the mirror function', () => {
  let mariadb: MariaDb;
  const pools: mysql.Pool[] = [];
  let databases = 0;

  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
  }, 120_000);
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await mariadb?.stop();
  });

  async function freshDatabase(): Promise<{ database: string; session: SqlSession }> {
    databases += 1;
    const database = `run_${databases}`;
    await mariadb.connection.query(`CREATE DATABASE ${database}`);
    const pool = poolOf(
      { user: 'root', password: '', socketPath: mariadb.socket, database },
      { user: 'root', password: '' },
      { connectionLimit: 2, init: ["SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'"] },
    );
    pools.push(pool);
    return { database, session: sessionOf(pool) };
  }

  /** A change log of two events (one a record stored before, one new), and two records stored before the mirror. */
  function sources(now: number) {
    const event = (id: string, revision: number, a: string, n: number, at: number): StoredChange => ({
      datasetCode: 'things',
      id,
      revision,
      kind: revision === 1 ? 'created' : 'updated',
      occurredAt: at,
      actor: { appCode: 'app', userId: null },
      requestId: 'r',
      item: item(id, revision, a, n),
      position: `${encodeTime(at, 10)}${'0'.repeat(15)}${revision}`,
    });
    const events = [event('r1', 2, 'changed', 10, now - 30_000), event('r3', 1, 'new', 3, now - 20_000)];
    const log: ChangeLogReader = {
      settleMs: 10,
      async read(_code, range, limit) {
        const page = events.filter(
          (e) => (range.after === undefined || e.position > range.after) && e.position <= range.through,
        );
        return { changes: page.slice(0, limit), more: page.length > limit };
      },
    };
    const stored = [item('r1', 1, 'first', 1), item('r2', 1, 'second', 2)];
    const records = {
      async readRecords(_code: string, _range: unknown, startAfter: Record<string, unknown> | undefined) {
        const items = stored.filter((i) => startAfter === undefined || i['@sk'] > String(startAfter.id));
        return { items };
      },
    };
    return { log, records };
  }

  it('applies the change log and the backfill, and says the mirror was a round behind at worst', async () => {
    const { session } = await freshDatabase();
    const { log, records } = sources(Date.now());
    const entry = await runMirror({
      tables: new MirrorTables(session),
      datasets: async () => [DATASET],
      events: log,
      logged: async () => undefined,
      changeRetentionDays: async () => 30,
      backfill: { records, recordsPerSecond: 0 },
      runMs: 1_000,
      remainingMs: () => 60_000,
      marginMs: 1_000,
    });
    expect(await session.execute('SELECT id, a, n, revision FROM things ORDER BY id')).toEqual([
      { id: 'r1', a: 'changed', n: 10, revision: 2 },
      { id: 'r2', a: 'second', n: 2, revision: 1 },
      { id: 'r3', a: 'new', n: 3, revision: 1 },
    ]);
    expect(entry.rounds).toBeGreaterThanOrEqual(1);
    expect(entry.failedRounds).toBe(0);
    expect(entry.backfilling).toBe(0);
    expect(entry.lagSeconds).toBeGreaterThanOrEqual(0);
    expect(entry.lagSeconds).toBeLessThan(2);
    expect(entry.error).toBeUndefined();
    const state = await new MirrorTables(session).state('things');
    expect(state).toMatchObject({ backfillDone: true, backfillRows: 2 });
    expect(state?.caughtUpAt).toBeGreaterThan(Date.now() - 5_000);
  });

  it('ends its marginMs before the function would be stopped, whatever runMs says', async () => {
    const { session } = await freshDatabase();
    const { log, records } = sources(Date.now());
    const endsAt = Date.now() + 400;
    const started = Date.now();
    const entry = await runMirror({
      tables: new MirrorTables(session),
      datasets: async () => [DATASET],
      events: log,
      logged: async () => undefined,
      changeRetentionDays: async () => 30,
      backfill: { records, recordsPerSecond: 0 },
      runMs: 60_000,
      remainingMs: () => endsAt - Date.now() + 1_000,
      marginMs: 1_000,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(entry.rounds).toBeGreaterThanOrEqual(1);
  });

  it('reports every round failed, with the last error, when the mirror is out of reach', async () => {
    const { log, records } = sources(Date.now());
    const down: SqlSession = {
      async execute() {
        throw Object.assign(new Error('Communications link failure'), { name: 'DatabaseErrorException' });
      },
    };
    const entry = await runMirror({
      tables: new MirrorTables(down),
      datasets: async () => [DATASET],
      events: log,
      logged: async () => undefined,
      changeRetentionDays: async () => 30,
      backfill: { records, recordsPerSecond: 0 },
      runMs: 1_500,
      remainingMs: () => 60_000,
      marginMs: 1_000,
    });
    expect(entry.rounds).toBeGreaterThanOrEqual(1);
    expect(entry.failedRounds).toBe(entry.rounds);
    expect(entry.lagSeconds).toBeUndefined();
    expect(entry.error).toBe('DatabaseErrorException: Communications link failure');
  });
});

describeWithMariaDb('the query user', () => {
  let mariadb: MariaDb;
  let pool: mysql.Pool;

  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
    await mariadb.connection.query('CREATE DATABASE mirror');
    await mariadb.connection.query('CREATE TABLE mirror.things (id VARCHAR(20) PRIMARY KEY, n INT)');
    await mariadb.connection.query("INSERT INTO mirror.things VALUES ('r1', 1)");
    await mariadb.connection.query('CREATE DATABASE other');
    await mariadb.connection.query('CREATE TABLE other.secrets (id INT)');
    pool = poolOf(
      { user: 'root', password: '', socketPath: mariadb.socket, database: 'mirror' },
      { user: 'root', password: '' },
      { connectionLimit: 2, init: [] },
    );
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    await mariadb?.stop();
  });

  const asQueryUser = (password: string) =>
    mysql.createConnection({ socketPath: mariadb.socket, user: 'das_query', password, database: 'mirror' });
  const make = (password: string, writer: SqlSession = sessionOf(pool)) =>
    ensureQueryUser({ writer, user: 'das_query', password, database: 'mirror', resumeWithinMs: 0 });

  it('may read the mirror, make temporary tables and nothing else, and follows a new password on the next deploy', async () => {
    await make('first-Pa55word');
    const reader = await asQueryUser('first-Pa55word');
    try {
      const [rows] = await reader.query('SELECT id, n FROM things');
      expect(rows).toEqual([{ id: 'r1', n: 1 }]);
      await expect(reader.query("INSERT INTO things VALUES ('r2', 2)")).rejects.toMatchObject({ errno: 1142 });
      await expect(reader.query('DROP TABLE things')).rejects.toMatchObject({ errno: 1142 });
      await expect(reader.query('SELECT * FROM other.secrets')).rejects.toMatchObject({ errno: 1142 });
      // A temporary table of its own session (a large result's pages), which shadows nothing it may write.
      await reader.query('CREATE TEMPORARY TABLE pages (n INT)');
      await reader.query('INSERT INTO pages VALUES (1)');
    } finally {
      await reader.end();
    }
    await make('second-Pa55word');
    await expect(asQueryUser('first-Pa55word')).rejects.toMatchObject({ errno: 1045 });
    const again = await asQueryUser('second-Pa55word');
    await again.end();
  });

  it('writes the password as a literal, escaped, since account statements take no bound values', () => {
    expect(queryUserStatements('das_query', "it's\\x", 'mirror')).toEqual([
      "CREATE USER IF NOT EXISTS 'das_query'@'%' IDENTIFIED BY 'it\\'s\\\\x'",
      "ALTER USER 'das_query'@'%' IDENTIFIED BY 'it\\'s\\\\x'",
      "GRANT SELECT, CREATE TEMPORARY TABLES ON `mirror`.* TO 'das_query'@'%'",
    ]);
  });

  it('waits for a paused cluster to resume, within its bound', async () => {
    let resuming = 2;
    const executed: string[] = [];
    const waking: SqlSession = {
      async execute(sql) {
        if (resuming > 0) {
          resuming -= 1;
          throw Object.assign(new Error('The database is resuming'), { name: 'DatabaseResumingException' });
        }
        executed.push(sql.split(' ')[0] as string);
        return [];
      },
    };
    let clock = 0;
    const sleeps: number[] = [];
    const options = {
      writer: waking,
      user: 'das_query',
      password: 'p',
      database: 'mirror',
      now: () => clock,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        clock += ms;
      },
    };
    await ensureQueryUser({ ...options, resumeWithinMs: 60_000 });
    expect(sleeps).toEqual([5_000, 5_000]);
    expect(executed).toEqual(['CREATE', 'ALTER', 'GRANT']);
    resuming = 5;
    clock = 0;
    await expect(ensureQueryUser({ ...options, resumeWithinMs: 10_000 })).rejects.toThrow('The database is resuming');
  });
});
