/**
 * What an operation may tell about its own work, without knowing how a request is logged: the DynamoDB
 * capacity it consumes, extra metrics (published from the request's log line) and log-only details. The
 * transport collects them into the request's one log line (docs/interface.md §11).
 */
import type { CapacityMeter } from './capacity-meter';

export interface Telemetry {
  /** Adds up the read and write units of the request's DynamoDB calls. */
  readonly capacity: CapacityMeter;
  /** A timing of the operation in milliseconds, e.g. `sqlDurationMs`; published as a metric too. */
  metric(name: string, milliseconds: number): void;
  /** A log-only fact, e.g. why a bookkeeping write failed. Never caller data. */
  detail(name: string, value: string): void;
}
