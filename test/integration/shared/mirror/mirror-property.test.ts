/**
 * docs/interface.md §20, the mirror's law: whatever order the change log's events arrive in, however often they
 * are replayed, with a backfill of the stored records running beside them and the writer killed at any
 * statement and restarted from what it saved, the mirror ends equal to the records themselves (an in-memory
 * oracle of the writes). Against MariaDB, through the mirror's own writer and feed (shared/mirror/), over the MySQL
 * protocol and through the RDS Data API (its twin, test/support/data-api-twin/).
 */
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import { encodeTime } from 'ulid';
import type { FieldConfig } from '../../../../shared/catalog/schema';
import { dataApiSession } from '../../../../shared/mirror/data-api-session';
import type { ChangeLogReader } from '../../../../shared/mirror/mirror-feed';
import { MirrorFeed } from '../../../../shared/mirror/mirror-feed';
import { MirrorTables, type SqlSession } from '../../../../shared/mirror/mirror-tables';
import { poolOf, sessionOf } from '../../../../shared/mirror/mysql-connection';
import type { StoredChange } from '../../../../shared/storage/event-store';
import { RESOURCE_ARN, startTwinFixture, WRITER_SECRET_ARN } from '../../../support/data-api-twin/twin-fixture';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';

const FIELDS: FieldConfig[] = [
  { name: 'a', type: 'string' },
  { name: 'n', type: 'integer' },
  { name: 'b', type: 'boolean' },
];
const DATASET = { datasetCode: 'things', fields: FIELDS };
const SETTLE_MS = 50;

type Values = { a: string | null; n: number | null; b: boolean | null };
interface Stored {
  revision: number;
  values: Values;
}

const values = fc.record({
  a: fc.option(fc.string({ maxLength: 6 }), { nil: null }),
  n: fc.option(fc.integer({ min: -1_000, max: 1_000 }), { nil: null }),
  b: fc.option(fc.boolean(), { nil: null }),
});
const step = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), id: fc.integer({ min: 0, max: 7 }), values }),
  fc.record({ kind: fc.constant('round' as const) }),
  fc.record({ kind: fc.constant('kill' as const), after: fc.integer({ min: 0, max: 12 }) }),
);
const scenario = fc.record({
  existing: fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), values), { maxLength: 6 }),
  steps: fc.array(step, { minLength: 1, maxLength: 30 }),
  seed: fc.integer(),
});

/** A session that fails every statement after its budget: the writer killed at that point. */
function killable(inner: SqlSession, budget: number | undefined): SqlSession {
  let left = budget ?? Number.POSITIVE_INFINITY;
  return {
    async execute(sql, values) {
      if (left <= 0) throw new Error('killed');
      left -= 1;
      return inner.execute(sql, values);
    },
  };
}

/** Fresh mirror databases, each reached through one session, on a server started for the suite. */
interface Sessions {
  fresh(): Promise<SqlSession>;
  stop(): Promise<void>;
}

function describeMirror(name: string, connect: () => Promise<Sessions>): void {
  describeWithMariaDb(name, () => {
    let sessions: Sessions;
    beforeAll(async () => {
      sessions = await connect();
    }, 120_000);
    afterAll(async () => {
      await sessions?.stop();
    });
    const freshSession = () => sessions.fresh();

    it('ends equal to the records after replays, reordering, an overlapping backfill and kills', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ existing, steps, seed }) => {
          const session = await freshSession();
          const random = fc.sample(fc.integer({ min: 0, max: 1_000 }), { numRuns: 10_000, seed });
          let draw = 0;
          const next = (n: number) => (random[draw++ % random.length] ?? 0) % n;
          let clock = 1_700_000_000_000;
          let sequence = 0;
          const oracle = new Map<string, Stored>();
          const events: StoredChange[] = [];
          const item = (id: string, stored: Stored) => ({
            ...stored.values,
            '@sk': id,
            '@rev': stored.revision,
            gmt_create: '2024-01-01 00:00:00',
            gmt_modified: '2024-01-01 00:00:00',
          });
          const write = (id: string, v: Values, logged: boolean) => {
            const stored = { revision: (oracle.get(id)?.revision ?? 0) + 1, values: v };
            oracle.set(id, stored);
            if (!logged) return;
            clock += 1 + next(5);
            // Positions in time order, some taken a little before now (an event written late, within the settle window).
            const at = clock - next(SETTLE_MS);
            sequence += 1;
            events.push({
              datasetCode: DATASET.datasetCode,
              id,
              revision: stored.revision,
              kind: stored.revision === 1 ? 'created' : 'updated',
              occurredAt: at,
              actor: { appCode: 'app', userId: null },
              requestId: 'r',
              item: item(id, stored),
              position: `${encodeTime(at, 10)}${String(sequence).padStart(16, '0')}`,
            });
          };
          // Records stored before the mirror existed, their events long expired: only the backfill has them.
          for (const [id, v] of existing) write(`r${id}`, v, false);

          const log: ChangeLogReader = {
            settleMs: SETTLE_MS,
            async read(_code, range, limit) {
              const sorted = [...events].sort((x, y) => (x.position < y.position ? -1 : 1));
              const page = sorted.filter(
                (e) => (range.after === undefined || e.position > range.after) && e.position <= range.through,
              );
              const changes = page.slice(0, limit);
              const last = changes.at(-1);
              // Replays of events already applied, and the page in another order (its last position kept last).
              const replayed = next(3) === 0 && sorted.length > 0 ? [sorted[next(sorted.length)] as StoredChange] : [];
              const shuffled = [...replayed, ...changes.slice(0, -1)].sort(() => next(3) - 1);
              return { changes: last ? [...shuffled, last] : shuffled, more: page.length > limit };
            },
          };
          const records = {
            async readRecords(
              _code: string,
              _range: unknown,
              startAfter: Record<string, unknown> | undefined,
              limit: number,
            ) {
              const ids = [...oracle.keys()]
                .sort()
                .filter((id) => startAfter === undefined || id > String(startAfter.id));
              const pageIds = ids.slice(0, limit);
              const items = pageIds.map((id) => item(id, oracle.get(id) as Stored));
              const last = pageIds.at(-1);
              return ids.length > limit && last ? { items, next: { id: last } } : { items };
            },
          };
          const startFeed = (budget: number | undefined) => {
            const feed = new MirrorFeed({
              tables: new MirrorTables(killable(session, budget)),
              datasets: async () => [DATASET],
              events: log,
              logged: async () => undefined,
              changeRetentionDays: async () => 30,
              backfill: { records, recordsPerSecond: 0, pageSize: 2 },
              idleMs: 3_600_000,
              onError: () => undefined,
              now: () => clock,
            });
            feed.start();
            return feed;
          };
          let feed = startFeed(undefined);
          for (const action of steps) {
            if (action.kind === 'write') write(`r${action.id}`, action.values, true);
            else if (action.kind === 'round') await feed.round();
            else {
              await feed.stop();
              feed = startFeed(action.after);
              await feed.round();
            }
          }
          await feed.stop();
          // Restarted for good: rounds until the backfill is done and everything logged is applied.
          clock += SETTLE_MS + 1;
          feed = startFeed(undefined);
          const tables = new MirrorTables(session);
          for (let i = 0; i < 100; i++) {
            await feed.round();
            if ((await tables.state(DATASET.datasetCode))?.backfillDone) break;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          await feed.round();
          await feed.stop();
          const rows = await session.execute('SELECT id, a, n, b, revision FROM things ORDER BY id');
          const expected = [...oracle.entries()]
            .sort(([x], [y]) => (x < y ? -1 : 1))
            .map(([id, stored]) => ({
              id,
              a: stored.values.a,
              n: stored.values.n,
              b: stored.values.b === null ? null : stored.values.b ? 1 : 0,
              revision: stored.revision,
            }));
          expect(rows).toEqual(expected);
        }),
        { numRuns: 40 },
      );
    }, 300_000);

    it('adds the column of a field added in place, widens an integer field become a number, and keeps the rows', async () => {
      const session = await freshSession();
      const tables = new MirrorTables(session);
      await tables.prepare([DATASET]);
      const row = { id: 'x', revision: 1, item: { a: 'kept', n: 1, b: true, gmt_create: '2024-01-01 00:00:00' } };
      await tables.apply(DATASET, [row]);
      const grown = { datasetCode: 'things', fields: [...FIELDS, { name: 'note', type: 'text' as const }] };
      await tables.prepare([grown]);
      await tables.apply(grown, [{ id: 'y', revision: 1, item: { a: 'new', note: 'hello' } }]);
      // An older revision of x arriving late changes nothing.
      await tables.apply(grown, [{ id: 'x', revision: 1, item: { a: 'stale', note: 'stale' } }]);
      expect(await session.execute('SELECT id, a, note, revision FROM things ORDER BY id')).toEqual([
        { id: 'x', a: 'kept', note: null, revision: 1 },
        { id: 'y', a: 'new', note: 'hello', revision: 1 },
      ]);
      // An integer field become a number (docs/interface.md §17): its column takes fractions from then on.
      const widened = {
        datasetCode: 'things',
        fields: grown.fields.map((f) => (f.name === 'n' ? { ...f, type: 'number' as const } : f)),
      };
      await tables.prepare([widened]);
      await tables.apply(widened, [{ id: 'y', revision: 2, item: { a: 'new', n: 2.5, note: 'hello' } }]);
      expect(await session.execute('SELECT id, n FROM things ORDER BY id')).toEqual([
        { id: 'x', n: 1 },
        { id: 'y', n: 2.5 },
      ]);
    });
  });
}

describeMirror('the MySQL mirror', async () => {
  const mariadb = await MariaDb.start('UTC');
  const pools: mysql.Pool[] = [];
  let databases = 0;
  return {
    async fresh() {
      databases += 1;
      const database = `mirror_${databases}`;
      await mariadb.connection.query(`CREATE DATABASE ${database}`);
      const pool = poolOf(
        { user: 'root', password: '', socketPath: mariadb.socket, database },
        { user: 'root', password: '' },
        { connectionLimit: 2, init: ["SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'"] },
      );
      pools.push(pool);
      return sessionOf(pool);
    },
    async stop() {
      await Promise.all(pools.map((pool) => pool.end()));
      await mariadb.stop();
    },
  };
});

// The same law with every statement an RDS Data API call (a deployment's writer), through the Data API twin.
describeMirror('the MySQL mirror written through the Data API', async () => {
  const fixture = await startTwinFixture();
  let databases = 0;
  return {
    async fresh() {
      databases += 1;
      const database = `mirror_${databases}`;
      await fixture.mariadb.connection.query(`CREATE DATABASE ${database}`);
      await fixture.mariadb.connection.query(`GRANT ALL ON ${database}.* TO 'das_writer'@'localhost'`);
      return dataApiSession({
        client: fixture.client,
        resourceArn: RESOURCE_ARN,
        secretArn: WRITER_SECRET_ARN,
        database,
      });
    },
    stop: () => fixture.stop(),
  };
});
