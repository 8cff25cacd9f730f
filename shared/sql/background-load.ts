/**
 * A dataset's load for custom SQL that outlives the query that started it (docs/interface.md §20). Reading a large
 * dataset can take longer than a query's time limit: the read goes on after that query has answered 2001 (with
 * `Retry-After` and how far the load is), so that a retry finds it further on, or done, instead of starting it again
 * and paying for the same reads twice. One runs per dataset copy (a dataset as one caller may read it) at a time.
 *
 * Its reads are counted on a meter of its own and charged to the requests that wait for it: each takes the units
 * read since the one before took them (and a query that finds a finished load nobody has charged takes the rest),
 * so the request log counts every unit of the load once, spread over the calls that waited for it.
 *
 * In a Lambda container the load moves only while the container serves a request (it is frozen between them): a
 * retry that lands there carries it on while it waits. Locally (`npm start`) it goes on by itself.
 */
import { QueryTimeoutError } from '../contract/errors';
import type { EngineTable } from './query-engine';

/** What a load's reads are charged to: the request that waits for it. */
export interface ChargedSource {
  /** Counts units read on this request's behalf by a load it waited for. */
  charge(units: number): void;
}

/** `Retry-After` at least and at most this many seconds. */
const MIN_RETRY_SECONDS = 1;
const MAX_RETRY_SECONDS = 60;

export class BackgroundLoad {
  /** Rows read so far. */
  rows = 0;
  /** Whether the load has ended (with its table or with an error). */
  settled = false;
  readonly promise: Promise<EngineTable>;
  private readonly startedAt: number;
  private charged = 0;

  /**
   * @param datasetCode what the progress names
   * @param expected the rows the load will read, when the dataset's count told (none with a row filter)
   * @param unitsRead the read units the load has spent so far (its own meter)
   * @param run the load, told the rows read after each page
   */
  constructor(
    readonly datasetCode: string,
    readonly expected: number | undefined,
    private readonly unitsRead: () => number,
    private readonly now: () => number,
    run: (progress: (rows: number) => void) => Promise<EngineTable>,
  ) {
    this.startedAt = now();
    this.promise = run((rows) => {
      this.rows = rows;
    }).finally(() => {
      this.settled = true;
    });
    // Nobody may be waiting when it fails: the failure is the next waiter's (or nobody's), never unhandled.
    this.promise.catch(() => undefined);
  }

  /** Charges the units read since the last charge to the request. */
  chargeTo(source: ChargedSource): void {
    const units = this.unitsRead() - this.charged;
    if (units <= 0) return;
    this.charged += units;
    source.charge(units);
  }

  /** Seconds until the load is likely done, at the pace it has read so far. */
  retryAfterSeconds(): number {
    const elapsed = Math.max(1, this.now() - this.startedAt);
    const left = this.expected === undefined ? undefined : Math.max(0, this.expected - this.rows);
    const ms = left !== undefined && this.rows > 0 ? (left * elapsed) / this.rows : elapsed;
    return Math.min(MAX_RETRY_SECONDS, Math.max(MIN_RETRY_SECONDS, Math.ceil(ms / 1000)));
  }

  /** `orders: 41,000 of 100,000 rows` (or `41,000 rows so far` when the total is not known). */
  describe(): string {
    const rows = this.rows.toLocaleString('en-US');
    return this.expected === undefined
      ? `${this.datasetCode}: ${rows} rows so far`
      : `${this.datasetCode}: ${rows} of ${this.expected.toLocaleString('en-US')} rows`;
  }
}

/**
 * The 2001 of a query whose loads did not finish within its time limit: how far each is and when to retry (the
 * latest of their estimates), as `Retry-After` too.
 */
export function stillLoading(loads: readonly BackgroundLoad[]): QueryTimeoutError {
  const running = loads.filter((load) => !load.settled);
  const seconds = Math.max(MIN_RETRY_SECONDS, ...running.map((load) => load.retryAfterSeconds()));
  return new QueryTimeoutError(
    `loading ${running.map((load) => load.describe()).join(', ')}; retry in ${seconds} s ` +
      '(the load goes on meanwhile, and a retry does not read again what it has read)',
    seconds,
  );
}
