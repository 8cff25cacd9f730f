/**
 * What an operation may tell about its own work, without knowing how a request is logged: the DynamoDB
 * capacity it consumes, extra metrics (published from the request's log line) and log-only details. The
 * transport collects them into the request's one log line (docs/interface.md §11).
 */
import type { CapacityMeter } from './capacity-meter';

/** One run of a hook's backend function, for the per-function metrics (request-log.ts). */
export interface HookRun {
  /** The function's configured name: the metric dimension, so never anything a caller sends. */
  functionName: string;
  node: 'before' | 'after';
  durationMs: number;
  /** Failed closed (3001: a limit, an uncaught error); a `before` hook's deliberate refusal (1001) is no failure. */
  failed: boolean;
}

export interface Telemetry {
  /** Adds up the read and write units of the request's DynamoDB calls. */
  readonly capacity: CapacityMeter;
  /** A timing of the operation in milliseconds, e.g. `sqlDurationMs`; published as a metric too. */
  metric(name: string, milliseconds: number): void;
  /** A log-only fact, e.g. why a bookkeeping write failed. Never caller data. */
  detail(name: string, value: string): void;
  /** A hook's run, published by function; absent where nothing publishes metrics (benchmarks). */
  hookRun?(run: HookRun): void;
}
