/**
 * The port between custom SQL and the engine that runs it. The operation hands an engine the tables a caller
 * may read, the registered statement and its checked parameters; the engine answers rows or one of the
 * failures below. Keeping this narrow lets a different engine (for example a managed, distributed one over
 * exported data) take over for datasets that outgrow one function without touching the operation. The one
 * engine today is SQLite, and a statement's text is read as SQLite reads it (docs/interface.md §19).
 */

/** A value a table cell or a result cell can hold. Booleans are stored as 0/1, JSON as its text. */
export type SqlValue = string | number | null;

/** A bound parameter value, as checked by `checkQueryParams`. Engines map booleans to their own form. */
export type SqlParamValue = string | number | boolean | null;

/**
 * Storage type of a column. `ANY` declares no type, so a value keeps the type it came with (record ids may be
 * strings or numbers, docs/interface.md §4).
 */
export type ColumnType = 'TEXT' | 'INTEGER' | 'REAL' | 'ANY';

export interface TableColumn {
  name: string;
  type: ColumnType;
}

/** One table the statement can read: a dataset as this caller may see it. */
export interface EngineTable {
  /** The name the statement uses: the dataset code. */
  name: string;
  /**
   * Identity of the content: two tables with the same key have the same columns and rows. An engine may keep a
   * loaded copy under this key and skip reloading it. Absent means "do not reuse".
   */
  key?: string;
  columns: readonly TableColumn[];
  /** Cells in the order of `columns`. */
  rows: readonly (readonly SqlValue[])[];
}

export interface QueryRequest {
  tables: readonly EngineTable[];
  /** The registered statement, with MyBatis-style `#{name}` placeholders that the engine binds. */
  sql: string;
  /** A value for every placeholder name (absent optional parameters as null). */
  params: Readonly<Record<string, SqlParamValue>>;
  /** Time the statement may run before it is stopped (QueryTimeoutError). */
  timeoutMs: number;
  /**
   * The limit a stopped statement's message names, when `timeoutMs` is only what is left of it (loading the
   * data counted against it too). Default `timeoutMs`.
   */
  statedLimitMs?: number;
  /** More result rows than this fail the statement instead of being cut off silently. */
  maxRows?: number;
  /**
   * Whose query this is (the application): an engine runs the queries of one lane in order and never lets them
   * wait for another lane's. Absent: one shared lane.
   */
  lane?: string;
  /**
   * How long the query may wait for its turn. A query still waiting then is dropped unrun (QueryTimeoutError):
   * its request has answered already, and it must not hold up the lane's later queries. Absent: no limit.
   */
  waitLimitMs?: number;
}

export type ResultRow = Record<string, SqlValue>;

export interface QueryResult {
  rows: ResultRow[];
}

/**
 * Runs one read-only statement. Failures:
 * - `SqlStatementError`: the statement itself is at fault (syntax, unknown table or column, a write, several
 *   statements, too many result rows). Its message is safe to show the caller; the operation answers it as
 *   `execSuccess: false`.
 * - `QueryTimeoutError` (2001): the statement ran past `timeoutMs` and was stopped.
 * - anything else: a failure of ours (3001).
 */
export interface QueryEngine {
  run(request: QueryRequest): Promise<QueryResult>;
  /** Releases what the engine holds (a worker thread, loaded tables). */
  close(): Promise<void>;
}

/** The message the caller sees when a statement would write. */
export const READ_ONLY_MESSAGE = 'only read-only statements are allowed (SELECT, WITH ... SELECT or VALUES)';

/** The message the caller sees when the text holds more than one statement. */
export const SINGLE_STATEMENT_MESSAGE = 'only one statement is allowed';

/**
 * The statement failed for a reason the caller can act on. The message is the engine's own text (e.g.
 * `no such column: amount`) or one of ours; it never carries paths, stacks or internal names.
 */
export class SqlStatementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SqlStatementError';
  }
}
