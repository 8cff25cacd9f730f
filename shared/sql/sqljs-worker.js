// @ts-check
/**
 * The worker thread that runs custom SQL in sql.js (SQLite compiled to WASM). It lives in its own thread so
 * that a runaway statement can be stopped the only way a synchronous WASM loop can be: by terminating the
 * thread (see sqljs-engine.ts). Plain CommonJS on purpose: a worker starts from a file that Node runs as is,
 * and this one must start the same way under jest, under tsx and next to a single-file Lambda bundle.
 * sql.js and its .wasm are found through the paths in `workerData`, so the worker needs no node_modules.
 *
 * Messages in:  { id, tables: [{ name, key?, columns, rows? }], sql, params, readOnly, maxRows?, cancel }
 *               (`cancel`: a SharedArrayBuffer whose first Int32 the engine sets to 1 when it stops waiting)
 * Messages out: { id, type: 'need-rows' }   the tables are not loaded here; send them again with rows
 *               { id, type: 'loaded' }      loaded, but the engine stopped waiting: the statement is not run
 *               { id, type: 'started' }     tables ready, the statement starts now (its time limit starts)
 *               { id, type: 'result', rows }
 *               { id, type: 'error', kind: 'statement' | 'write' | 'memory' | 'internal', message }
 */

const { parentPort, workerData } = require('node:worker_threads');

if (!parentPort) throw new Error('sqljs-worker.js runs only as a worker thread');
const port = parentPort;

/** @type {{ sqlJsPath: string, wasmPath: string, functionsPath: string, maxCachedRows: number, memoryLimitBytes: number }} */
const options = workerData;
const initSqlJs = require(options.sqlJsPath);
// MySQL's functions, comparisons and aggregates, which registered queries are rendered to call.
const mysqlFunctions = require(options.functionsPath);
// SQLite's hard heap limit is process-wide: it bounds the loaded tables and the running statement together.
// Past it an allocation fails with SQLITE_NOMEM ("out of memory"): the statement stops, and the engine
// replaces this worker so that the WASM memory it grew is given back.
const ready = initSqlJs({ locateFile: () => options.wasmPath }).then((/** @type {any} */ SQL) => {
  const db = new SQL.Database();
  db.run(`PRAGMA hard_heap_limit = ${Math.floor(options.memoryLimitBytes)}`);
  db.close();
  return SQL;
});

const OUT_OF_MEMORY = 'out of memory';

/**
 * Loaded table sets, least recently used first. A set is one database holding exactly the tables of one
 * query, so a statement can never name a table the caller was not given.
 * @type {Map<string, { db: any, rows: number }>}
 */
const databases = new Map();
let cachedRows = 0;

const SQLITE_WRITE_REFUSED = 'attempt to write a readonly database';

port.on('message', (message) => {
  ready.then(
    (/** @type {any} */ SQL) => handle(SQL, message),
    (/** @type {unknown} */ error) =>
      port.postMessage({ id: message.id, type: 'error', kind: 'internal', message: String(error) }),
  );
});

/** @param {any} SQL @param {any} message */
function handle(SQL, message) {
  const { id } = message;
  let database;
  let temporary = false;
  try {
    const setKey = tableSetKey(message.tables);
    const cached = setKey === undefined ? undefined : databases.get(setKey);
    if (cached) {
      databases.delete(/** @type {string} */ (setKey));
      databases.set(/** @type {string} */ (setKey), cached);
      database = cached.db;
    } else {
      if (message.tables.some((/** @type {any} */ table) => table.rows === undefined)) {
        port.postMessage({ id, type: 'need-rows' });
        return;
      }
      database = loadTables(SQL, message.tables);
      if (setKey === undefined) temporary = true;
      else remember(setKey, database, countRows(message.tables));
    }
  } catch (error) {
    if (database && temporary) database.close();
    const memory = error instanceof Error && error.message.startsWith(OUT_OF_MEMORY);
    port.postMessage({ id, type: 'error', kind: memory ? 'memory' : 'internal', message: describe(error) });
    return;
  }
  // The engine gave up waiting for this load (its query answered 2001): the tables stay loaded for the next query,
  // and the statement is not run.
  if (message.cancel && Atomics.load(new Int32Array(message.cancel), 0) === 1) {
    if (temporary) database.close();
    port.postMessage({ id, type: 'loaded' });
    return;
  }
  port.postMessage({ id, type: 'started' });
  try {
    port.postMessage({ id, type: 'result', rows: runStatement(database, message) });
  } catch (error) {
    port.postMessage({ id, type: 'error', ...classify(error) });
  } finally {
    if (temporary) database.close();
  }
}

/** @param {any[]} tables @returns {string | undefined} */
function tableSetKey(tables) {
  if (tables.some((table) => typeof table.key !== 'string')) return undefined;
  return tables
    .map((table) => JSON.stringify([table.name, table.key]))
    .sort()
    .join('\n');
}

/** @param {any[]} tables */
function countRows(tables) {
  return tables.reduce((sum, table) => sum + table.rows.length, 0);
}

/** @param {any} SQL @param {any[]} tables */
function loadTables(SQL, tables) {
  const db = new SQL.Database();
  try {
    mysqlFunctions.register(db);
    db.run('BEGIN');
    for (const table of tables) {
      const columns = table.columns
        .map((/** @type {any} */ c) => (c.type === 'ANY' ? quote(c.name) : `${quote(c.name)} ${c.type}`))
        .join(', ');
      db.run(`CREATE TABLE ${quote(table.name)} (${columns})`);
      insertRows(db, table);
    }
    db.run('COMMIT');
    // From here on nothing can change the loaded data: writes fail with "attempt to write a readonly database".
    db.run('PRAGMA query_only = ON');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Inserts rows many at a time: each statement step crosses from JavaScript into WASM and back, so one
 * statement per batch of rows loads about twice as fast as one per row. Batches stay under 999 bound values,
 * SQLite's most conservative parameter limit.
 * @param {any} db @param {any} table
 */
function insertRows(db, table) {
  const width = table.columns.length;
  const batch = Math.max(1, Math.min(50, Math.floor(999 / width)));
  const tuple = `(${table.columns.map(() => '?').join(', ')})`;
  const into = `INSERT INTO ${quote(table.name)} VALUES `;
  const many = db.prepare(into + Array(batch).fill(tuple).join(', '));
  const one = db.prepare(into + tuple);
  try {
    const rows = table.rows;
    let i = 0;
    for (; i + batch <= rows.length; i += batch) many.run(rows.slice(i, i + batch).flat());
    for (; i < rows.length; i += 1) one.run(rows[i]);
  } finally {
    many.free();
    one.free();
  }
}

/** Keeps a loaded set, dropping the least recently used ones beyond the row bound (never the newest). */
function remember(/** @type {string} */ key, /** @type {any} */ db, /** @type {number} */ rows) {
  databases.set(key, { db, rows });
  cachedRows += rows;
  for (const [oldKey, entry] of databases) {
    if (cachedRows <= options.maxCachedRows || oldKey === key) break;
    databases.delete(oldKey);
    cachedRows -= entry.rows;
    entry.db.close();
  }
}

/** @param {any} db @param {any} message */
function runStatement(db, message) {
  // Set again before every statement, in case anything ever switched it off.
  db.run('PRAGMA query_only = ON');
  const statement = db.prepare(message.sql);
  try {
    if (!message.readOnly) throw new WriteRefused();
    if (message.params.length > 0) statement.bind(message.params);
    const names = statement.getColumnNames();
    const rows = [];
    while (statement.step()) {
      if (message.maxRows !== undefined && rows.length >= message.maxRows) {
        throw new TooManyRows(message.maxRows);
      }
      const values = statement.get();
      /** @type {Record<string, unknown>} */
      const row = {};
      names.forEach((/** @type {string} */ name, /** @type {number} */ i) => {
        row[name] = toResultValue(values[i]);
      });
      rows.push(row);
    }
    return rows;
  } finally {
    statement.free();
  }
}

class WriteRefused extends Error {}

class TooManyRows extends Error {
  constructor(/** @type {number} */ limit) {
    super(`the query returns more than ${limit} rows; add a LIMIT or narrow it`);
  }
}

/** Blobs (only from blob literals or functions: tables hold none) come back as hex text, as SQLite's hex(). */
function toResultValue(/** @type {unknown} */ value) {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex').toUpperCase();
  return value;
}

/**
 * sql.js reports SQLite's own errors as plain `Error`s carrying sqlite3_errmsg; anything else (a WASM trap, a
 * TypeError) is ours and must not reach the caller.
 * @param {unknown} error
 */
function classify(error) {
  if (error instanceof WriteRefused) return { kind: 'write', message: 'write refused' };
  if (error instanceof TooManyRows) return { kind: 'statement', message: error.message };
  if (error instanceof RangeError) return { kind: 'memory', message: error.message };
  if (error instanceof Error && error.constructor === Error) {
    const message = error.message.split('\n')[0] ?? '';
    if (message.startsWith(OUT_OF_MEMORY)) return { kind: 'memory', message };
    if (message.startsWith(SQLITE_WRITE_REFUSED)) return { kind: 'write', message };
    return { kind: 'statement', message };
  }
  return { kind: 'internal', message: describe(error) };
}

function describe(/** @type {unknown} */ error) {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function quote(/** @type {string} */ name) {
  return `"${name.replaceAll('"', '""')}"`;
}
