/**
 * The embedded engine: SQLite (sql.js, WASM) in a worker thread. A WASM statement runs synchronously and cannot
 * be interrupted from JavaScript, so the time limit is enforced from outside: when a statement runs past it the
 * worker is terminated, which really stops it, and the next query starts a fresh worker. Between queries the
 * worker stays warm and keeps the table sets it loaded (keyed by `EngineTable.key`), so a repeated query on
 * unchanged data only runs the statement.
 *
 * Read-only by three locks: only statements that start with SELECT, WITH or VALUES run; the database is set to
 * `PRAGMA query_only` after the tables are loaded (a write then fails with "attempt to write a readonly
 * database", for instance `WITH x AS (...) DELETE ...`); and one statement per request. sql.js exposes no
 * `sqlite3_stmt_readonly`, hence the keyword check, which also stops `PRAGMA query_only = OFF` and `ATTACH`
 * (both allowed under query_only). Refusals are `SqlStatementError`s (answered as `execSuccess: false`): the
 * statement is at fault, exactly as with a syntax error, and the caller's request itself was valid.
 */
import { Worker } from 'node:worker_threads';
import { InternalError, QueryTimeoutError } from '../contract/errors';
import { locateSqlAssets, type SqlAssetPaths } from './bundle-assets';
import { compilePlaceholders, orderParams } from './placeholders';
import {
  type EngineTable,
  type QueryEngine,
  type QueryRequest,
  type QueryResult,
  READ_ONLY_MESSAGE,
  type ResultRow,
  SINGLE_STATEMENT_MESSAGE,
  SqlStatementError,
  type SqlValue,
} from './query-engine';
import { firstKeyword, hasSeveralStatements } from './sql-lexer';

export interface SqlJsEngineOptions {
  /** Rows the worker keeps loaded across queries (least recently used sets go first). Default 400,000. */
  maxCachedRows?: number;
  /** Time allowed to load tables into a new worker database before giving up (2001). Default 20,000 ms. */
  loadTimeoutMs?: number;
  /** Where the worker and sql.js files are; found next to the code or in node_modules by default. */
  assets?: SqlAssetPaths;
  /**
   * Memory one worker may use for SQLite (its loaded tables and the running statement), and again for its
   * JavaScript heap (result rows). Past it the statement ends as `execSuccess: false` and the worker is
   * replaced, so the memory returns. Default 512 MB.
   */
  memoryLimitMb?: number;
}

/** Why a statement stopped when its worker ran out of memory (answered as `execSuccess: false`). */
export function memoryLimitMessage(limitMb: number): string {
  return `the query needed more than its memory limit of ${limitMb} MB and was stopped; narrow it or aggregate in fewer rows`;
}

const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES']);

interface WorkerTable {
  name: string;
  key?: string;
  columns: EngineTable['columns'];
  rows?: EngineTable['rows'];
}

type WorkerReply =
  | { id: number; type: 'need-rows' }
  | { id: number; type: 'started' }
  | { id: number; type: 'result'; rows: ResultRow[] }
  | { id: number; type: 'error'; kind: 'statement' | 'write' | 'memory' | 'internal'; message: string };

export class SqlJsEngine implements QueryEngine {
  private readonly maxCachedRows: number;
  private readonly loadTimeoutMs: number;
  private readonly assets: SqlAssetPaths;
  private readonly memoryLimitMb: number;
  private worker: Worker | undefined;
  private started = 0;
  private nextId = 1;
  /** One statement at a time: the worker is single-threaded, and a queued query's clock must not run. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: SqlJsEngineOptions = {}) {
    this.maxCachedRows = options.maxCachedRows ?? 400_000;
    this.loadTimeoutMs = options.loadTimeoutMs ?? 20_000;
    this.assets = options.assets ?? locateSqlAssets();
    this.memoryLimitMb = options.memoryLimitMb ?? 512;
  }

  /** Workers started so far: 1 after the first query, one more after each query that had to be stopped. */
  get workersStarted(): number {
    return this.started;
  }

  /** Starts the worker and compiles the WASM now (e.g. during a Lambda's init phase) instead of on first use. */
  async warm(): Promise<void> {
    await this.run({ tables: [], sql: 'SELECT 1', params: {}, timeoutMs: this.loadTimeoutMs });
  }

  run(request: QueryRequest): Promise<QueryResult> {
    const result = this.queue.then(() => this.runNow(request));
    this.queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private async runNow(request: QueryRequest): Promise<QueryResult> {
    if (hasSeveralStatements(request.sql)) throw new SqlStatementError(SINGLE_STATEMENT_MESSAGE);
    const compiled = compilePlaceholders(request.sql);
    const params = orderParams(compiled, request.params).map(toSqlParam);
    const message = {
      tables: request.tables.map(
        ({ name, key, columns }): WorkerTable => (key === undefined ? { name, columns } : { name, key, columns }),
      ),
      sql: compiled.text,
      params,
      readOnly: READ_KEYWORDS.has(firstKeyword(compiled.text)),
      maxRows: request.maxRows,
    };
    const canReuse = request.tables.every((table) => table.key !== undefined);
    // Tables with keys go without rows first: the warm worker usually has them, and copying rows to a thread
    // is most of the cost of a warm query. It asks for them when it has not.
    let reply = await this.exchange(canReuse ? message : withRows(message, request.tables), request.timeoutMs);
    if (reply.type === 'need-rows') reply = await this.exchange(withRows(message, request.tables), request.timeoutMs);
    // A worker that asks twice has lost what it was just sent: a fault of ours, not the caller's.
    if (reply.type === 'need-rows') throw new InternalError('the SQL worker did not keep the tables it was sent');
    return { rows: reply.rows };
  }

  private exchange(
    message: object,
    timeoutMs: number,
  ): Promise<{ type: 'need-rows' } | { type: 'result'; rows: ResultRow[] }> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onFailure);
        worker.off('exit', onFailure);
        worker.unref();
      };
      const stop = (error: Error) => {
        finish();
        this.discard(worker);
        reject(error);
      };
      const limit = (ms: number, error: () => Error) => {
        clearTimeout(timer);
        timer = setTimeout(() => stop(error()), ms);
      };
      const onMessage = (reply: WorkerReply) => {
        if (reply.id !== id) return;
        if (reply.type === 'started') {
          limit(
            timeoutMs,
            () => new QueryTimeoutError(`the query ran longer than its limit of ${timeoutMs} ms and was stopped`),
          );
          return;
        }
        finish();
        if (reply.type === 'error' && reply.kind === 'memory') {
          // A worker that ran out keeps the WASM memory it grew: replace it so that the memory returns.
          this.discard(worker);
          reject(new SqlStatementError(memoryLimitMessage(this.memoryLimitMb)));
        } else if (reply.type === 'error') reject(toError(reply.kind, reply.message));
        else resolve(reply);
      };
      const onFailure = (cause: unknown) =>
        stop(
          (cause as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new SqlStatementError(memoryLimitMessage(this.memoryLimitMb))
            : new InternalError('the SQL worker stopped unexpectedly', { cause }),
        );
      limit(
        this.loadTimeoutMs,
        () => new QueryTimeoutError(`loading the query's data took longer than ${this.loadTimeoutMs} ms`),
      );
      worker.on('message', onMessage);
      worker.on('error', onFailure);
      worker.on('exit', onFailure);
      worker.ref();
      worker.postMessage({ id, ...message });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.assets.workerPath, {
      workerData: {
        sqlJsPath: this.assets.sqlJsPath,
        wasmPath: this.assets.wasmPath,
        maxCachedRows: this.maxCachedRows,
        memoryLimitBytes: this.memoryLimitMb * 1024 * 1024,
      },
      resourceLimits: { maxOldGenerationSizeMb: this.memoryLimitMb },
      // The worker is plain JavaScript: it needs none of the parent's loaders (tsx, jest's transform).
      execArgv: [],
    });
    // An idle warm worker must not keep the process alive; `exchange` refs it while a query is in flight.
    worker.unref();
    this.worker = worker;
    this.started += 1;
    return worker;
  }

  /** Drops a worker that was stopped or failed; the next query starts a fresh one. */
  private discard(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    void worker.terminate();
  }
}

function withRows(message: { tables: WorkerTable[] }, tables: readonly EngineTable[]): object {
  return { ...message, tables: message.tables.map((table, i) => ({ ...table, rows: tables[i]?.rows ?? [] })) };
}

function toSqlParam(value: SqlValue | boolean): SqlValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

function toError(kind: 'statement' | 'write' | 'memory' | 'internal', message: string): Error {
  if (kind === 'write') return new SqlStatementError(READ_ONLY_MESSAGE);
  if (kind === 'statement') return new SqlStatementError(message);
  return new InternalError(`the SQL worker failed: ${message}`);
}
