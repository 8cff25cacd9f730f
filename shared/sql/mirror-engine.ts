/**
 * The port of custom SQL's second engine (docs/interface.md §20): MySQL itself, over the mirror of the datasets.
 * The operation hands it a statement already narrowed to the caller (sql-dialect/mysql-render.ts) with `?` for
 * each parameter; the engine waits until the mirror holds every write acknowledged before the query started,
 * runs the statement with its time limit enforced by the server, and answers rows, or:
 * - `SqlStatementError` with `MySQL error <number>: <message>` when MySQL fails the statement;
 * - `QueryTimeoutError` (2001) when the statement ran past its limit (cancelled), or the mirror did not catch up
 *   within it (the message says how many seconds it is behind);
 * - `InvalidParameterError` (1001) when the result would exceed the response limit.
 *
 * Where it runs, the process registers its engine once (`useMirrorEngine`): `npm start` does so for
 * `--sql-engine mysql://…`, and the handlers of that process find it. It is kept on the global object, so a
 * handler bundle loaded in the same process finds the same engine. Nothing registered: the embedded engine.
 */
import type { QueryResult, SqlParamValue } from './query-engine';

export interface MirrorQueryRequest {
  /** The statement as MySQL runs it, `?` for each parameter. */
  sql: string;
  /** The value of each `?`, in order. */
  values: readonly SqlParamValue[];
  /** The datasets it reads: the mirror of each must be caught up. */
  datasets: readonly string[];
  /** When the query started (epoch ms): the mirror must hold every write acknowledged before then. */
  startedAt: number;
  /** The configuration's time zone: NOW() and CURDATE() are in it. */
  timeZone: string;
  /** Time the query may take in all, waiting for the mirror included. */
  timeoutMs: number;
  /** The limit a message names (the query's configured limit). */
  statedLimitMs: number;
  /** Most bytes the rows may take as JSON; beyond it 1001. */
  maxBytes: number;
}

export interface MirrorQueryEngine {
  /** The database holding the mirror's tables (the datasets' narrowed SELECTs name it). */
  readonly database: string;
  run(request: MirrorQueryRequest): Promise<QueryResult>;
}

const SLOT = Symbol.for('data-access-service.mirror-engine');
type Holder = { [SLOT]?: MirrorQueryEngine };

/** Makes custom SQL of this process run on `engine` (undefined: the embedded engine again). */
export function useMirrorEngine(engine: MirrorQueryEngine | undefined): void {
  if (engine) (globalThis as Holder)[SLOT] = engine;
  else delete (globalThis as Holder)[SLOT];
}

/** The engine this process registered, if any. */
export function registeredMirrorEngine(): MirrorQueryEngine | undefined {
  return (globalThis as Holder)[SLOT];
}
