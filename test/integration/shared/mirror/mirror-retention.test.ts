/**
 * docs/totals-and-changes.md, "A mirror stopped past the retention", against MariaDB: a mirror that resumes from a
 * position older than what the change log still holds copies the dataset again before it counts as caught up, so
 * the changes the change log no longer has are not silently missing; a mirror stopped for less does not read the
 * records at all. The clock jumps by days; the change log drops what has expired, as TTL and its local twin do.
 */
import type mysql from 'mysql2/promise';
import { encodeTime } from 'ulid';
import { runSql } from '../../../../bin/cli/sql-command';
import type { FieldConfig } from '../../../../shared/catalog/schema';
import { QueryTimeoutError } from '../../../../shared/contract/errors';
import { type ChangeLogReader, MirrorFeed } from '../../../../shared/mirror/mirror-feed';
import { runMirror } from '../../../../shared/mirror/mirror-run';
import { MirrorTables, type SqlSession } from '../../../../shared/mirror/mirror-tables';
import { poolOf, sessionOf } from '../../../../shared/mirror/mysql-connection';
import type { StoredChange } from '../../../../shared/storage/event-store';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const RETENTION_DAYS = 30;
const FIELDS: FieldConfig[] = [
  { name: 'a', type: 'string' },
  { name: 'n', type: 'integer' },
];
const DATASET = { datasetCode: 'things', fields: FIELDS };

/**
 * The records, their change log (expiring as TTL does) and the clock, which a test moves on by days from `offset`
 * (ms from now: a test that ends at the real time can ask `das sql status`, which reads the real clock).
 */
function world(start = 0) {
  let offset = start;
  const now = () => Date.now() + offset;
  const store = new Map<string, { revision: number; a: string; n: number }>();
  let events: StoredChange[] = [];
  let sequence = 0;
  const recordReads: string[] = [];
  const item = (id: string) => {
    const stored = store.get(id) as { revision: number; a: string; n: number };
    return {
      a: stored.a,
      n: stored.n,
      '@sk': id,
      '@rev': stored.revision,
      gmt_create: '2024-01-01 00:00:00',
      gmt_modified: '2024-01-01 00:00:00',
    };
  };
  const write = (id: string, a: string, n: number) => {
    const revision = (store.get(id)?.revision ?? 0) + 1;
    store.set(id, { revision, a, n });
    const at = now();
    sequence += 1;
    events.push({
      datasetCode: 'things',
      id,
      revision,
      kind: revision === 1 ? 'created' : 'updated',
      occurredAt: at,
      actor: { appCode: 'app', userId: null },
      requestId: 'r',
      item: item(id),
      position: `${encodeTime(at, 10)}${String(sequence).padStart(16, '0')}`,
    });
  };
  const log: ChangeLogReader = {
    settleMs: 10,
    async read(_code, range, limit) {
      const page = events.filter(
        (e) => (range.after === undefined || e.position > range.after) && e.position <= range.through,
      );
      return { changes: page.slice(0, limit), more: page.length > limit };
    },
  };
  const records = {
    async readRecords(_code: string, _range: unknown, startAfter: Record<string, unknown> | undefined, limit: number) {
      recordReads.push(startAfter === undefined ? '(first)' : String(startAfter.id));
      const ids = [...store.keys()].sort().filter((id) => startAfter === undefined || id > String(startAfter.id));
      const pageIds = ids.slice(0, limit);
      const last = pageIds.at(-1);
      const items = pageIds.map(item);
      return ids.length > limit && last ? { items, next: { id: last } } : { items };
    },
  };
  return {
    now,
    write,
    log,
    records,
    recordReads,
    /** Days pass; the change log then holds only the changes younger than its retention. */
    pass(ms: number) {
      offset += ms;
      events = events.filter((e) => e.occurredAt + RETENTION_DAYS * DAY > now());
    },
    eventCount: () => events.length,
  };
}

describeWithMariaDb('a mirror stopped past the change log retention', () => {
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

  let lastDatabase = '';
  async function freshSession(): Promise<SqlSession> {
    databases += 1;
    const database = `retention_${databases}`;
    await mariadb.connection.query(`CREATE DATABASE ${database}`);
    const pool = poolOf(
      { user: 'root', password: '', socketPath: mariadb.socket, database },
      { user: 'root', password: '' },
      { connectionLimit: 2, init: ["SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'"] },
    );
    pools.push(pool);
    lastDatabase = database;
    return sessionOf(pool);
  }

  function feedOf(session: SqlSession, w: ReturnType<typeof world>, recordsPerSecond: number, again: string[] = []) {
    const feed = new MirrorFeed({
      tables: new MirrorTables(session),
      datasets: async () => [DATASET],
      events: w.log,
      logged: async () => undefined,
      changeRetentionDays: async () => RETENTION_DAYS,
      backfill: { records: w.records, recordsPerSecond, pageSize: 1 },
      idleMs: 3_600_000,
      onBackfillAgain: (code) => again.push(code),
      now: w.now,
    });
    feed.start();
    return feed;
  }

  /** What a query over the mirror does (mysql-query-engine.ts): wait for the writes before it, then read. */
  async function query(feed: MirrorFeed, session: SqlSession, now: () => number, limitMs: number) {
    const started = now();
    await feed.caughtUp(['things'], started, started + limitMs, limitMs);
    return session.execute('SELECT id, a, n, revision FROM things ORDER BY id');
  }

  /** `das sql status` of a database, as printed. */
  async function sqlStatus(database: string): Promise<string> {
    let out = '';
    const io = {
      out: (text: string) => {
        out += text;
      },
      err: () => undefined,
      env: {},
    };
    await runSql(['status', '--sql-engine', mariadb.engineUrl(database)], io);
    return out;
  }

  /** A mirror that copied r1 and r2, then stopped. */
  async function mirroredThenStopped(session: SqlSession, w: ReturnType<typeof world>) {
    w.write('r1', 'one', 1);
    w.write('r2', 'two', 2);
    const feed = feedOf(session, w, 0);
    expect(await query(feed, session, w.now, 10_000)).toEqual([
      { id: 'r1', a: 'one', n: 1, revision: 1 },
      { id: 'r2', a: 'two', n: 2, revision: 1 },
    ]);
    await feed.stop();
    w.recordReads.length = 0;
  }

  it('copies the dataset again on resume, answers 2001 until it is done, then every record as stored', async () => {
    const session = await freshSession();
    const w = world(-(31 * DAY + HOUR));
    await mirroredThenStopped(session, w);
    const stoppedAt = w.now();
    // Stopped 31 days: a record created and one updated on the first day, their changes expired since.
    w.pass(DAY);
    w.write('r3', 'three', 3);
    w.write('r1', 'one again', 11);
    w.pass(30 * DAY - 2 * HOUR);
    w.write('r2', 'two again', 22);
    w.pass(3 * HOUR);
    expect(w.eventCount()).toBe(1);

    const again: string[] = [];
    // Paced at two records a second, a page of one: the copy takes over a second.
    const feed = feedOf(session, w, 2, again);
    try {
      const right = query(feed, session, w.now, 300);
      await expect(right).rejects.toThrow(QueryTimeoutError);
      await expect(right).rejects.toThrow(
        /dataset 'things' is 26\d{5} s behind and being copied into it again, its changes since then no longer in the change log/,
      );
      expect(again).toEqual(['things']);
      const state = await new MirrorTables(session).state('things');
      expect(state?.backfillDone).toBe(false);
      expect(state?.backfillReason).toMatch(
        /^the mirror stopped at the change log position of 20\d\d-.*, and the change log keeps changes 30 days: the dataset is copied again from the records$/,
      );
      expect(Math.abs((state?.staleSince ?? 0) - stoppedAt)).toBeLessThan(5_000);
      expect(await sqlStatus(lastDatabase)).toMatch(
        /^things: [0-3] rows, 26\d{5}(\.\d)? s behind, change log applied through 20\d\d-[^,]*, backfill running again \(\d records so far\): the mirror stopped at the change log position of 20\d\d-.*, and the change log keeps changes 30 days: the dataset is copied again from the records$/m,
      );

      expect(await query(feed, session, w.now, 20_000)).toEqual([
        { id: 'r1', a: 'one again', n: 11, revision: 2 },
        { id: 'r2', a: 'two again', n: 22, revision: 2 },
        { id: 'r3', a: 'three', n: 3, revision: 1 },
      ]);
      expect(w.recordReads).toEqual(['(first)', 'r1', 'r2']);
      expect(await new MirrorTables(session).state('things')).toMatchObject({ backfillDone: true, staleSince: 0 });
      expect((await new MirrorTables(session).state('things'))?.backfillReason).toBeUndefined();
      // Caught up again: a later write arrives through the change log as before.
      w.write('r3', 'three again', 33);
      expect((await query(feed, session, w.now, 10_000)).at(-1)).toEqual({
        id: 'r3',
        a: 'three again',
        n: 33,
        revision: 2,
      });
      expect(again).toEqual(['things']);
    } finally {
      await feed.stop();
    }
  }, 60_000);

  it('carries on from its position, reading no record, when stopped just inside the retention', async () => {
    const session = await freshSession();
    const w = world();
    await mirroredThenStopped(session, w);
    // 29 days less an hour: an hour inside the rule (30 days less a day's margin).
    w.pass(DAY);
    w.write('r3', 'three', 3);
    w.write('r1', 'one again', 11);
    w.pass(28 * DAY - 2 * HOUR);
    w.write('r2', 'two again', 22);
    w.pass(HOUR);
    expect(w.eventCount()).toBe(5);
    const again: string[] = [];
    const feed = feedOf(session, w, 0, again);
    try {
      expect(await query(feed, session, w.now, 10_000)).toEqual([
        { id: 'r1', a: 'one again', n: 11, revision: 2 },
        { id: 'r2', a: 'two again', n: 22, revision: 2 },
        { id: 'r3', a: 'three', n: 3, revision: 1 },
      ]);
    } finally {
      await feed.stop();
    }
    expect(again).toEqual([]);
    expect(w.recordReads).toEqual([]);
    expect(await new MirrorTables(session).state('things')).toMatchObject({ backfillDone: true, backfillRows: 2 });
  });

  it("in a deployment's run too: the run copies the dataset again and its log line names it", async () => {
    const session = await freshSession();
    const w = world();
    await mirroredThenStopped(session, w);
    w.pass(DAY);
    w.write('r3', 'three', 3);
    w.pass(31 * DAY);
    expect(w.eventCount()).toBe(0);
    const entry = await runMirror({
      tables: new MirrorTables(session),
      datasets: async () => [DATASET],
      events: w.log,
      logged: async () => undefined,
      changeRetentionDays: async () => RETENTION_DAYS,
      backfill: { records: w.records, recordsPerSecond: 0, pageSize: 1 },
      runMs: 1_000,
      remainingMs: () => 60_000,
      marginMs: 1_000,
      now: w.now,
    });
    expect(entry.backfilledAgain).toEqual(['things']);
    expect(entry.backfilling).toBe(0);
    expect(await session.execute('SELECT id, a, n, revision FROM things ORDER BY id')).toEqual([
      { id: 'r1', a: 'one', n: 1, revision: 1 },
      { id: 'r2', a: 'two', n: 2, revision: 1 },
      { id: 'r3', a: 'three', n: 3, revision: 1 },
    ]);
  });

  it('adds the columns it needs to a bookkeeping table an earlier version made, keeping its rows', async () => {
    const session = await freshSession();
    await session.execute(
      'CREATE TABLE `das$mirror` (`dataset_code` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, ' +
        '`position` CHAR(26) CHARACTER SET ascii COLLATE ascii_bin NULL, `caught_up_at` BIGINT NOT NULL DEFAULT 0, ' +
        '`backfill_cursor` TEXT NULL, `backfill_done` TINYINT(1) NOT NULL DEFAULT 0, `backfill_rows` BIGINT NOT NULL DEFAULT 0)',
    );
    await session.execute(
      "INSERT INTO `das$mirror` (dataset_code, position, caught_up_at, backfill_done, backfill_rows) VALUES ('things', '01JEXAMPLE0000000000000000', 5, 1, 7)",
    );
    const tables = new MirrorTables(session);
    await tables.prepare([DATASET]);
    expect(await tables.state('things')).toEqual({
      position: '01JEXAMPLE0000000000000000',
      caughtUpAt: 5,
      backfillDone: true,
      backfillRows: 7,
      staleSince: 0,
    });
  });
});
