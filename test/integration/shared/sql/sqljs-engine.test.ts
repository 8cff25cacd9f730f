import { QueryTimeoutError } from '../../../../shared/contract/errors';
import {
  type EngineTable,
  READ_ONLY_MESSAGE,
  SINGLE_STATEMENT_MESSAGE,
  SqlStatementError,
} from '../../../../shared/sql/query-engine';
import { SqlJsEngine } from '../../../../shared/sql/sqljs-engine';

const orders: EngineTable = {
  name: 'orders',
  key: 'orders@1',
  columns: [
    { name: 'id', type: 'ANY' },
    { name: 'customer', type: 'TEXT' },
    { name: 'region', type: 'TEXT' },
    { name: 'amount', type: 'REAL' },
    { name: 'paid', type: 'INTEGER' },
    { name: 'day', type: 'TEXT' },
    { name: 'meta', type: 'TEXT' },
  ],
  rows: [
    ['o1', 'c1', 'EU', 10, 1, '2024-01-05', '{"channel":"web"}'],
    ['o2', 'c2', 'US', 20, 0, '2024-02-01', '{"channel":"shop"}'],
    ['o3', 'c1', 'EU', 5.5, 1, '2024-03-10', null],
    ['o4', 'c3', 'APAC', 7, 0, '2024-03-11', '{"channel":"web"}'],
  ],
};

const customers: EngineTable = {
  name: 'customers',
  key: 'customers@1',
  columns: [
    { name: 'id', type: 'ANY' },
    { name: 'name', type: 'TEXT' },
  ],
  rows: [
    ['c1', 'Ann'],
    ['c2', 'Bob'],
    ['c3', 'Cy'],
  ],
};

const engine = new SqlJsEngine();
afterAll(() => engine.close());

function run(sql: string, params: Record<string, string | number | boolean | null> = {}, tables = [orders]) {
  return engine.run({ tables, sql, params, timeoutMs: 5000 });
}

async function statementError(sql: string, tables = [orders]): Promise<string> {
  const error = await run(sql, {}, tables).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SqlStatementError);
  return (error as Error).message;
}

describe('SqlJsEngine', () => {
  it('runs an aggregate with GROUP BY and a bound parameter', async () => {
    const result = await run(
      'SELECT region, count(*) AS orders, sum(amount) AS total FROM orders WHERE amount >= #{min} GROUP BY region ORDER BY region',
      { min: 6 },
    );
    expect(result.rows).toEqual([
      { region: 'APAC', orders: 1, total: 7 },
      { region: 'EU', orders: 1, total: 10 },
      { region: 'US', orders: 1, total: 20 },
    ]);
  });

  it('joins two tables', async () => {
    const result = await run(
      'SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.name ORDER BY total DESC',
      {},
      [orders, customers],
    );
    expect(result.rows).toEqual([
      { name: 'Bob', total: 20 },
      { name: 'Ann', total: 15.5 },
      { name: 'Cy', total: 7 },
    ]);
  });

  it('binds values, so an injection attempt in a parameter matches nothing', async () => {
    const result = await run('SELECT id FROM orders WHERE region = #{region}', { region: "EU' OR '1'='1" });
    expect(result.rows).toEqual([]);
    const union = await run('SELECT id FROM orders WHERE region = #{region}', {
      region: "x' UNION SELECT name FROM customers --",
    });
    expect(union.rows).toEqual([]);
  });

  it('binds booleans as 1/0 and null as NULL', async () => {
    const paid = await run('SELECT id FROM orders WHERE paid = #{paid} ORDER BY id', { paid: false });
    expect(paid.rows).toEqual([{ id: 'o2' }, { id: 'o4' }]);
    const unset = await run('SELECT count(*) AS n FROM orders WHERE #{region} IS NULL OR region = #{region}', {
      region: null,
    });
    expect(unset.rows).toEqual([{ n: 4 }]);
  });

  it('lets statements use JSON text and compare dates as text', async () => {
    const result = await run(
      "SELECT id FROM orders WHERE json_extract(meta, '$.channel') = 'web' AND day >= #{from} ORDER BY id",
      { from: '2024-02-01' },
    );
    expect(result.rows).toEqual([{ id: 'o4' }]);
  });

  it('returns blobs as hexadecimal text', async () => {
    expect((await run("SELECT x'00ff' AS b")).rows).toEqual([{ b: '00FF' }]);
  });

  it('reports the engine’s own message for a failing statement', async () => {
    expect(await statementError('SELECT nope FROM orders')).toBe('no such column: nope');
    expect(await statementError('SELEC 1')).toBe('near "SELEC": syntax error');
    expect(await statementError('SELECT * FROM customers')).toBe('no such table: customers');
  });

  it.each([
    'DELETE FROM orders',
    "INSERT INTO orders (id) VALUES ('x')",
    "UPDATE orders SET amount = 0 WHERE region = 'EU'",
    'DROP TABLE orders',
    'CREATE TEMP TABLE t (a)',
    'WITH gone AS (SELECT id FROM orders) DELETE FROM orders WHERE id IN (SELECT id FROM gone)',
    'PRAGMA query_only = OFF',
    "ATTACH ':memory:' AS other",
    '  /* hidden */ delete from orders',
  ])('refuses a statement that would write: %s', async (sql) => {
    expect(await statementError(sql)).toBe(READ_ONLY_MESSAGE);
  });

  it('leaves the data unchanged after refused writes', async () => {
    expect((await run('SELECT count(*) AS n, sum(amount) AS total FROM orders')).rows).toEqual([{ n: 4, total: 42.5 }]);
  });

  it('refuses several statements in one text', async () => {
    expect(await statementError('SELECT 1; SELECT 2')).toBe(SINGLE_STATEMENT_MESSAGE);
    expect(await statementError('SELECT 1; DELETE FROM orders')).toBe(SINGLE_STATEMENT_MESSAGE);
    expect((await run('SELECT 1 AS one; -- done')).rows).toEqual([{ one: 1 }]);
  });

  it('fails a result larger than maxRows instead of cutting it off', async () => {
    const error = await engine
      .run({ tables: [orders], sql: 'SELECT id FROM orders', params: {}, timeoutMs: 5000, maxRows: 3 })
      .catch((e: unknown) => e);
    expect(error).toEqual(new SqlStatementError('the query returns more than 3 rows; add a LIMIT or narrow it'));
    const fits = await engine.run({
      tables: [orders],
      sql: 'SELECT id FROM orders',
      params: {},
      timeoutMs: 5000,
      maxRows: 4,
    });
    expect(fits.rows).toHaveLength(4);
  });

  it('reuses a loaded table with the same key and reloads one with a new key', async () => {
    const v1: EngineTable = { name: 'notes', key: 'notes@1', columns: [{ name: 'n', type: 'INTEGER' }], rows: [[1]] };
    expect((await run('SELECT sum(n) AS s FROM notes', {}, [v1])).rows).toEqual([{ s: 1 }]);
    // Same key, other rows: the engine trusts the key and does not look at the rows again.
    const sameKey: EngineTable = { ...v1, rows: [[1], [2]] };
    expect((await run('SELECT sum(n) AS s FROM notes', {}, [sameKey])).rows).toEqual([{ s: 1 }]);
    const v2: EngineTable = { ...v1, key: 'notes@2', rows: [[1], [2]] };
    expect((await run('SELECT sum(n) AS s FROM notes', {}, [v2])).rows).toEqual([{ s: 3 }]);
    const { key: _key, ...unkeyed } = { ...v1, rows: [[5]] };
    expect((await run('SELECT sum(n) AS s FROM notes', {}, [unkeyed])).rows).toEqual([{ s: 5 }]);
  });

  it('loads every row of a table whose size is not a multiple of the insert batch', async () => {
    const numbers: EngineTable = {
      name: 'numbers',
      key: 'numbers@1',
      columns: [
        { name: 'n', type: 'INTEGER' },
        { name: 'label', type: 'TEXT' },
      ],
      rows: Array.from({ length: 123 }, (_, i) => [i + 1, `#${i + 1}`]),
    };
    const result = await run(
      'SELECT count(*) AS c, sum(n) AS s, min(label) AS first, max(n) AS last FROM numbers',
      {},
      [numbers],
    );
    expect(result.rows).toEqual([{ c: 123, s: 7626, first: '#1', last: 123 }]);
  });

  it('stops a runaway statement at its time limit and answers the next query from a fresh worker', async () => {
    const startedBefore = engine.workersStarted;
    const started = Date.now();
    const error = await engine
      .run({
        tables: [orders],
        sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
        params: {},
        timeoutMs: 300,
      })
      .catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toEqual(new QueryTimeoutError('the query ran longer than its limit of 300 ms and was stopped'));
    expect((error as QueryTimeoutError).code).toBe(2001);
    // Stopped, not left to finish: the statement above never ends on its own. The bound is generous on purpose.
    expect(elapsed).toBeLessThan(5000);

    const after = await run('SELECT count(*) AS n FROM orders');
    expect(after.rows).toEqual([{ n: 4 }]);
    expect(engine.workersStarted).toBe(startedBefore + 1);
  });

  it('runs queries sent at the same time one after another', async () => {
    const results = await Promise.all([
      run('SELECT count(*) AS n FROM orders'),
      run('SELECT count(*) AS n FROM customers', {}, [customers]),
      run('SELECT max(amount) AS m FROM orders'),
    ]);
    expect(results.map((r) => r.rows)).toEqual([[{ n: 4 }], [{ n: 3 }], [{ m: 20 }]]);
  });
});

describe('memory limit', () => {
  const small = new SqlJsEngine({ memoryLimitMb: 32 });
  afterAll(() => small.close());
  const query = (sql: string) => small.run({ tables: [], sql, params: {}, timeoutMs: 10_000 });

  it('stops a statement past the limit as a statement error, and replaces the worker so the memory returns', async () => {
    expect((await query('SELECT length(randomblob(1000000)) AS n')).rows).toEqual([{ n: 1000000 }]);
    const startedBefore = small.workersStarted;
    const error = await query('SELECT length(randomblob(64000000)) AS n').catch((e: unknown) => e);
    expect(error).toEqual(
      new SqlStatementError(
        'the query needed more than its memory limit of 32 MB and was stopped; narrow it or aggregate in fewer rows',
      ),
    );
    expect((await query('SELECT 41 + 1 AS n')).rows).toEqual([{ n: 42 }]);
    expect(small.workersStarted).toBe(startedBefore + 1);
  });
});

describe('idle workers', () => {
  it('terminates a worker left idle for its idle time, and the next query starts a fresh one that answers', async () => {
    const idle = new SqlJsEngine({ threads: 1, idleMs: 200 });
    try {
      const count = () =>
        idle.run({ tables: [orders], sql: 'SELECT count(*) AS n FROM orders', params: {}, timeoutMs: 10_000 });
      expect((await count()).rows).toEqual([{ n: 4 }]);
      expect(idle.workersRunning).toBe(1);
      expect(idle.workersStarted).toBe(1);
      for (let waited = 0; idle.workersRunning > 0 && waited < 4_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(idle.workersRunning).toBe(0);
      // The table set went with the worker: the fresh one asks for the rows again and answers the same.
      expect((await count()).rows).toEqual([{ n: 4 }]);
      expect(idle.workersStarted).toBe(2);
      expect(idle.workersRunning).toBe(1);
    } finally {
      await idle.close();
    }
  });

  it('keeps a worker that is used again within its idle time', async () => {
    const kept = new SqlJsEngine({ threads: 1, idleMs: 60_000 });
    try {
      const one = () =>
        kept.run({ tables: [orders], sql: 'SELECT min(amount) AS m FROM orders', params: {}, timeoutMs: 10_000 });
      expect((await one()).rows).toEqual([{ m: 5.5 }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await one()).rows).toEqual([{ m: 5.5 }]);
      expect(kept.workersStarted).toBe(1);
      expect(kept.workersRunning).toBe(1);
    } finally {
      await kept.close();
    }
  });
});

describe('queues per lane', () => {
  // About 1–2 s of work for the engine: long enough for other queries to come and go meanwhile.
  const SLOW =
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c';

  /** Runs a query and records, in `done`, the label when it answers. */
  function tracked(pool: SqlJsEngine, done: string[], label: string, lane: string, sql: string) {
    return pool.run({ tables: [], sql, params: {}, timeoutMs: 30_000, lane }).then((result) => {
      done.push(label);
      return result.rows;
    });
  }

  it('answers a quick query of one lane while another lane’s slow query runs', async () => {
    const pool = new SqlJsEngine({ threads: 2 });
    try {
      // Two threads warm, so the quick query below does not wait for a worker to start.
      await Promise.all([tracked(pool, [], 'w1', 'warm-1', 'SELECT 1'), tracked(pool, [], 'w2', 'warm-2', 'SELECT 1')]);
      expect(pool.threadsStarted).toBe(2);
      const done: string[] = [];
      const results = await Promise.all([
        tracked(pool, done, 'a-slow', 'app-a', SLOW),
        tracked(pool, done, 'b-quick', 'app-b', 'SELECT 42 AS n'),
      ]);
      expect(results).toEqual([[{ n: 3000000 }], [{ n: 42 }]]);
      expect(done).toEqual(['b-quick', 'a-slow']);
    } finally {
      await pool.close();
    }
  });

  it('runs one lane’s queries one after another, in the order they came, even with threads free', async () => {
    const pool = new SqlJsEngine({ threads: 3 });
    try {
      const done: string[] = [];
      const results = await Promise.all([
        tracked(pool, done, 'first-slow', 'app-a', SLOW),
        tracked(pool, done, 'second-quick', 'app-a', 'SELECT 2 AS n'),
      ]);
      expect(results).toEqual([[{ n: 3000000 }], [{ n: 2 }]]);
      expect(done).toEqual(['first-slow', 'second-quick']);
      // The lane never ran two at once, so one thread was enough.
      expect(pool.threadsStarted).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('serves waiting lanes in turn when threads are scarce, so a busy lane does not starve another', async () => {
    const pool = new SqlJsEngine({ threads: 1 });
    try {
      const done: string[] = [];
      await Promise.all([
        tracked(pool, done, 'a1', 'app-a', 'SELECT 1'),
        tracked(pool, done, 'a2', 'app-a', 'SELECT 2'),
        tracked(pool, done, 'a3', 'app-a', 'SELECT 3'),
        tracked(pool, done, 'b1', 'app-b', 'SELECT 4'),
        tracked(pool, done, 'c1', 'app-c', 'SELECT 5'),
      ]);
      expect(done).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    } finally {
      await pool.close();
    }
  });

  it('drops a query that waited past its wait limit, unrun, and runs the lane’s next one', async () => {
    const pool = new SqlJsEngine({ threads: 2 });
    try {
      const done: string[] = [];
      const slow = tracked(pool, done, 'slow', 'app-a', SLOW);
      // Behind a statement of a second or more, a 10 ms wait limit always runs out.
      const dropped = pool
        .run({ tables: [], sql: 'SELECT 1 AS n', params: {}, timeoutMs: 5000, lane: 'app-a', waitLimitMs: 10 })
        .catch((e: unknown) => e);
      const after = tracked(pool, done, 'after', 'app-a', 'SELECT 3 AS n');
      expect(await dropped).toEqual(
        new QueryTimeoutError('the query waited longer than its request may take and was not run'),
      );
      expect(await Promise.all([slow, after])).toEqual([[{ n: 3000000 }], [{ n: 3 }]]);
      expect(done).toEqual(['slow', 'after']);
    } finally {
      await pool.close();
    }
  });

  it('starts no second thread for queries that never overlap', async () => {
    const pool = new SqlJsEngine({ threads: 4 });
    try {
      for (const lane of ['app-a', 'app-b', 'app-c']) {
        await pool.run({ tables: [], sql: 'SELECT 1 AS n', params: {}, timeoutMs: 5000, lane });
      }
      expect(pool.threadsStarted).toBe(1);
      expect(pool.workersStarted).toBe(1);
    } finally {
      await pool.close();
    }
  });
});
