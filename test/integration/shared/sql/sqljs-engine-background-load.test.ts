/**
 * docs/interface.md §20: loading a query's tables into the engine that outlives its limit goes on in the worker.
 * The query answers 2001 with a retry time; the worker keeps the tables and skips the statement, and the lane's
 * next query waits for the load and runs on the same worker without loading anything again.
 */
import { QueryTimeoutError } from '../../../../shared/contract/errors';
import type { EngineTable } from '../../../../shared/sql/query-engine';
import { SqlJsEngine } from '../../../../shared/sql/sqljs-engine';

const ROWS = 300_000;
const big: EngineTable = {
  name: 'events',
  key: 'events@1',
  columns: [
    { name: 'id', type: 'ANY' },
    { name: 'kind', type: 'TEXT' },
    { name: 'n', type: 'INTEGER' },
  ],
  rows: Array.from({ length: ROWS }, (_, i) => [`e${i}`, i % 2 ? 'odd' : 'even', i]),
};

// 300,000 rows take SQLite about a second to load on a quiet 2-core machine: far past a 50 ms limit, on any machine.
const engine = new SqlJsEngine({ loadTimeoutMs: 50, threads: 2 });
afterAll(() => engine.close());

it('answers 2001 with a retry time when loading outlives its limit, and the next query finds the tables loaded', async () => {
  await engine.warm();
  const query = { tables: [big], sql: 'SELECT kind, COUNT(*) AS n FROM events GROUP BY kind ORDER BY kind' };
  const first = engine.run({ ...query, params: {}, timeoutMs: 5_000, lane: 'app' });
  await expect(first).rejects.toEqual(
    new QueryTimeoutError(
      "loading the query's data into the engine (300,000 rows) took longer than 50 ms; it goes on: retry in 1 s",
      1,
    ),
  );
  await expect(first).rejects.toMatchObject({ retryAfterSeconds: 1 });
  // The lane's next query waits for the load on its thread: the worker that loaded the tables runs it.
  const second = await engine.run({ ...query, params: {}, timeoutMs: 5_000, lane: 'app' });
  expect(second.rows).toEqual([
    { kind: 'even', n: ROWS / 2 },
    { kind: 'odd', n: ROWS / 2 },
  ]);
  expect(engine.workersStarted).toBe(1);
  expect(engine.threadsStarted).toBe(1);
}, 60_000);
