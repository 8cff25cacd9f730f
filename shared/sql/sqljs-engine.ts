/**
 * The embedded engine: SQLite (sql.js, WASM) in a worker thread. A WASM statement runs synchronously and cannot
 * be interrupted from JavaScript, so the time limit is enforced from outside: when a statement runs past it the
 * worker is terminated, which really stops it, and the next query starts a fresh worker. Between queries the
 * worker stays warm and keeps the table sets it loaded (keyed by `EngineTable.key`), so a repeated query on
 * unchanged data only runs the statement.
 *
 * A worker left idle for `idleMs` (by default the dataset cache's maximum age, 5 minutes) is terminated: every
 * table set it holds then belongs to a copy older than that age, which no query asks for again (a reload gets a
 * new key), and WASM memory never shrinks, so ending the worker is the only way to give it back. The next query
 * starts a fresh worker (its start and the WASM compile, docs/limits.md "Custom SQL memory", and the tables sent
 * with their rows, as for any new copy). The idle timer is unref'd: it never keeps the process alive; in a Lambda
 * container frozen between requests it fires at the first thaw after that time, and a container used within it
 * keeps its worker as before.
 *
 * Statements wait in a queue per application (`QueryRequest.lane`) and run on a small pool of such workers, one
 * application per worker at a time, so a slow statement delays only its own application's next ones
 * (docs/limits.md, "Custom SQL queues").
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
import { DEFAULT_COPY_MAX_AGE_MS } from './dataset-cache';
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
  /**
   * Most worker threads running statements at once, each for a different lane (application); each has its own
   * memory limit and its own loaded tables. Default 4 (DEFAULT_SQL_THREADS).
   */
  threads?: number;
  /**
   * How long a worker with nothing to run is kept (ms) before it is terminated and its memory returns; the next
   * query starts a fresh one. Default `DEFAULT_COPY_MAX_AGE_MS` (5 minutes): the dataset cache's copies live as
   * long, so the table sets a worker idle for longer holds can no longer be asked for.
   */
  idleMs?: number;
}

/** Threads of an engine by default: up to four applications' statements run at once. */
export const DEFAULT_SQL_THREADS = 4;

/** Why a statement stopped when its worker ran out of memory (answered as `execSuccess: false`). */
export function memoryLimitMessage(limitMb: number): string {
  return `the query needed more than its memory limit of ${limitMb} MB and was stopped; narrow it or aggregate in fewer rows`;
}

const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES']);

/** The least time a worker has to answer a message that sends tables by their keys alone (ms). */
const KEYS_ONLY_LIMIT_MS = 5_000;

interface WorkerTable {
  name: string;
  key?: string;
  columns: EngineTable['columns'];
  rows?: EngineTable['rows'];
}

type WorkerReply =
  | { id: number; type: 'need-rows' }
  | { id: number; type: 'started' }
  | { id: number; type: 'loaded' }
  | { id: number; type: 'result'; rows: ResultRow[] }
  | { id: number; type: 'error'; kind: 'statement' | 'write' | 'memory' | 'internal'; message: string };

/** A query waiting for its turn, with the promise its caller holds. */
interface Waiting {
  request: QueryRequest;
  /** `Date.now()` past which the query is dropped instead of run. */
  startBy: number;
  resolve: (result: QueryResult) => void;
  reject: (error: unknown) => void;
}

/** A thread of the pool: free or running one lane's query, and the lane it ran last (its tables are loaded there). */
interface Slot {
  thread: EngineThread;
  busy: boolean;
  lastLane?: string;
}

/**
 * The engine: a small pool of threads and a queue per lane (per application, `QueryRequest.lane`). A lane's
 * queries run one after another, in the order they came; different lanes run side by side, one thread each, so
 * one application's slow statement never holds up another's. When every thread is busy, free threads go to the
 * ready lanes in turn (round robin), so an application with many queries waiting does not starve another. Threads
 * start only when a query finds every started thread busy: a process that never runs two queries at once (a
 * Lambda container serves one request at a time) starts one, as before.
 */
export class SqlJsEngine implements QueryEngine {
  private readonly maxCachedRows: number;
  private readonly loadTimeoutMs: number;
  private readonly assets: SqlAssetPaths;
  private readonly memoryLimitMb: number;
  private readonly maxThreads: number;
  private readonly idleMs: number;
  private readonly slots: Slot[] = [];
  /** Queries waiting, per lane, in the order they came. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Lanes with a query on a thread now: their next query waits for it. */
  private readonly running = new Set<string>();
  /**
   * Lanes that have a query waiting and none running, in the order they get a thread: a lane joins at the back
   * when its first query comes, or when its running query ends and another of its queries is waiting.
   */
  private readonly ready: string[] = [];

  constructor(options: SqlJsEngineOptions = {}) {
    this.maxCachedRows = options.maxCachedRows ?? 400_000;
    this.loadTimeoutMs = options.loadTimeoutMs ?? 20_000;
    this.assets = options.assets ?? locateSqlAssets();
    this.memoryLimitMb = options.memoryLimitMb ?? 512;
    this.maxThreads = Math.max(1, Math.floor(options.threads ?? DEFAULT_SQL_THREADS));
    this.idleMs = options.idleMs ?? DEFAULT_COPY_MAX_AGE_MS;
  }

  /** Workers started so far, over all threads: one per thread that ran a query, one more per query stopped. */
  get workersStarted(): number {
    return this.slots.reduce((sum, slot) => sum + slot.thread.workersStarted, 0);
  }

  /** Threads started so far (at most `threads`). */
  get threadsStarted(): number {
    return this.slots.length;
  }

  /** Workers alive now: one per thread that ran a query within `idleMs` (or is running one). */
  get workersRunning(): number {
    return this.slots.filter((slot) => slot.thread.hasWorker).length;
  }

  /** Starts a worker and compiles the WASM now (e.g. during a Lambda's init phase) instead of on first use. */
  async warm(): Promise<void> {
    await this.run({ tables: [], sql: 'SELECT 1', params: {}, timeoutMs: this.loadTimeoutMs });
  }

  run(request: QueryRequest): Promise<QueryResult> {
    return new Promise((resolve, reject) => {
      const lane = request.lane ?? '';
      const startBy = Date.now() + (request.waitLimitMs ?? Number.POSITIVE_INFINITY);
      const job = { request, startBy, resolve, reject };
      const queue = this.waiting.get(lane);
      if (queue) queue.push(job);
      else this.waiting.set(lane, [job]);
      if (!this.running.has(lane) && !this.ready.includes(lane)) this.ready.push(lane);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.thread.close()));
  }

  /** Gives free threads to the ready lanes, in turn. */
  private dispatch(): void {
    for (let lane = this.ready[0]; lane !== undefined; lane = this.ready[0]) {
      if (this.slots.every((slot) => slot.busy) && this.slots.length >= this.maxThreads) return;
      this.ready.shift();
      const next = this.nextOf(lane);
      if (next) this.start(this.freeSlot(lane), lane, next);
    }
  }

  /** The lane's next query still worth running; those that waited past their limit are dropped on the way. */
  private nextOf(lane: string): Waiting | undefined {
    const queue = this.waiting.get(lane) ?? [];
    const now = Date.now();
    let next = queue.shift();
    while (next && next.startBy < now) {
      next.reject(new QueryTimeoutError('the query waited longer than its request may take and was not run'));
      next = queue.shift();
    }
    if (queue.length === 0) this.waiting.delete(lane);
    return next;
  }

  private start(slot: Slot, lane: string, job: Waiting): void {
    slot.busy = true;
    slot.lastLane = lane;
    this.running.add(lane);
    // The thread is free again before the caller hears the answer, so a query sent right after it finds it free.
    const release = () => {
      slot.busy = false;
      this.running.delete(lane);
      // Still waiting: the lane's turn comes again behind the lanes that were ready meanwhile.
      if (this.waiting.has(lane)) this.ready.push(lane);
      this.dispatch();
    };
    slot.thread.run(job.request).then(
      (result) => {
        release();
        job.resolve(result);
      },
      (error: unknown) => {
        // A load the worker goes on with keeps the thread (and the lane) until it ends: the lane's next query
        // waits for it there and finds the tables loaded.
        const loading = slot.thread.loading;
        if (!loading) release();
        job.reject(error);
        if (loading) void loading.then(release);
      },
    );
  }

  /**
   * A free thread for the lane (`dispatch` has checked there is one, or room for one): the one it ran on last
   * (its tables are likely still loaded there), else any started thread that is free, else a new one.
   */
  private freeSlot(lane: string): Slot {
    const free = this.slots.filter((slot) => !slot.busy);
    const found = free.find((slot) => slot.lastLane === lane) ?? free[0];
    if (found) return found;
    const slot: Slot = {
      thread: new EngineThread(this.maxCachedRows, this.loadTimeoutMs, this.assets, this.memoryLimitMb, this.idleMs),
      busy: false,
    };
    this.slots.push(slot);
    return slot;
  }
}

/**
 * One worker thread and the statements it runs, one at a time (the engine never gives it a second before the
 * first ends). A worker stopped for its time limit or its memory is replaced on the thread's next query, and one
 * idle for `idleMs` is terminated (the next query starts another).
 */
class EngineThread {
  private worker: Worker | undefined;
  private started = 0;
  private nextId = 1;
  /** Due `idleMs` after the last query ended; cleared while one runs. */
  private idleTimer: NodeJS.Timeout | undefined;
  /** Settles when a load the worker goes on with after its query answered 2001 has ended (none: no such load). */
  loading: Promise<void> | undefined;

  constructor(
    private readonly maxCachedRows: number,
    private readonly loadTimeoutMs: number,
    private readonly assets: SqlAssetPaths,
    private readonly memoryLimitMb: number,
    private readonly idleMs: number,
  ) {}

  /** Workers this thread started: 1 after its first query, one more after each query that had to be stopped. */
  get workersStarted(): number {
    return this.started;
  }

  get hasWorker(): boolean {
    return this.worker !== undefined;
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  async run(request: QueryRequest): Promise<QueryResult> {
    clearTimeout(this.idleTimer);
    try {
      return await this.runOnWorker(request);
    } finally {
      this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private async runOnWorker(request: QueryRequest): Promise<QueryResult> {
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
    const limits = { ms: request.timeoutMs, stated: request.statedLimitMs ?? request.timeoutMs };
    let reply = await this.exchange(canReuse ? message : withRows(message, request.tables), limits);
    if (reply.type === 'need-rows') reply = await this.exchange(withRows(message, request.tables), limits);
    // A worker that asks twice has lost what it was just sent: a fault of ours, not the caller's.
    if (reply.type === 'need-rows') throw new InternalError('the SQL worker did not keep the tables it was sent');
    return { rows: reply.rows };
  }

  private exchange(
    message: object,
    limits: { ms: number; stated: number },
  ): Promise<{ type: 'need-rows' } | { type: 'result'; rows: ResultRow[] }> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    // Set when the load outlives its limit: the worker, done loading, keeps the tables and skips the statement.
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    const rows = countRows(message);
    // A message of table keys alone is answered at once (the worker has the tables, or asks for them): its limit only
    // guards against a worker that does not answer, generous on a busy machine.
    const keysOnlyMs = rows === 0 ? Math.max(this.loadTimeoutMs, KEYS_ONLY_LIMIT_MS) : undefined;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      /** Ends the load the worker goes on with, once the caller has had its 2001. */
      let loaded: (() => void) | undefined;
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
        if (loaded) {
          // The caller has its answer. A statement the worker started before it saw the flag is stopped.
          finish();
          if (reply.type === 'started') this.discard(worker);
          loaded();
          return;
        }
        if (reply.type === 'started') {
          limit(
            limits.ms,
            () => new QueryTimeoutError(`the query ran longer than its limit of ${limits.stated} ms and was stopped`),
          );
          return;
        }
        finish();
        if (reply.type === 'error' && reply.kind === 'memory') {
          // A worker that ran out keeps the WASM memory it grew: replace it so that the memory returns.
          this.discard(worker);
          reject(new SqlStatementError(memoryLimitMessage(this.memoryLimitMb)));
        } else if (reply.type === 'error') reject(toError(reply.kind, reply.message));
        // 'loaded' comes only after the flag was set, which `loaded` has handled above.
        else if (reply.type !== 'loaded') resolve(reply);
      };
      const onFailure = (cause: unknown) => {
        if (loaded) {
          finish();
          this.discard(worker);
          loaded();
          return;
        }
        stop(
          (cause as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new SqlStatementError(memoryLimitMessage(this.memoryLimitMb))
            : new InternalError('the SQL worker stopped unexpectedly', { cause }),
        );
      };
      // A load past its limit goes on in the worker (a synchronous WASM loop, on a thread of its own): the query
      // answers 2001 now, and the lane's next query finds the tables loaded instead of loading them again.
      timer = setTimeout(() => {
        // Tables sent by their keys alone take no loading: a worker that has not answered is stopped.
        if (rows === 0) {
          stop(new QueryTimeoutError(`the SQL engine did not take the query within ${keysOnlyMs} ms`));
          return;
        }
        Atomics.store(cancel, 0, 1);
        this.loading = new Promise<void>((done) => {
          loaded = () => {
            this.loading = undefined;
            done();
          };
        });
        const seconds = Math.max(1, Math.ceil(this.loadTimeoutMs / 1000));
        reject(
          new QueryTimeoutError(
            `loading the query's data into the engine (${rows.toLocaleString('en-US')} rows) took longer than ` +
              `${this.loadTimeoutMs} ms; it goes on: retry in ${seconds} s`,
            seconds,
          ),
        );
      }, keysOnlyMs ?? this.loadTimeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onFailure);
      worker.on('exit', onFailure);
      worker.ref();
      worker.postMessage({ id, ...message, cancel: cancel.buffer });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.assets.workerPath, {
      workerData: {
        sqlJsPath: this.assets.sqlJsPath,
        wasmPath: this.assets.wasmPath,
        functionsPath: this.assets.functionsPath,
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

/** The rows a message carries to the worker (none when it sends the tables' keys alone). */
function countRows(message: object): number {
  const tables = (message as { tables?: { rows?: readonly unknown[] }[] }).tables ?? [];
  return tables.reduce((sum, table) => sum + (table.rows?.length ?? 0), 0);
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
