/**
 * The pace of one index job segment's writes. A dataset's records share one partition key, so a job writing
 * flat out would take the partition's write throughput (about 1,000 units a second) from the API's own
 * requests, which would then be throttled and slowed into 2001. Each segment therefore writes at most its share
 * of a rate the deployment sets, spaced evenly; when DynamoDB throttles anyway, the segment halves its pace and
 * waits before trying again, and earns it back slowly as writes succeed.
 */

export interface WriteThrottleOptions {
  /** Writes a second this segment may make at most (its share of the job's rate); 0 leaves it unpaced. */
  writesPerSecond: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** The errors DynamoDB answers when a partition or the account is over its throughput. */
const THROTTLING = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

export function isThrottling(error: unknown): boolean {
  return error instanceof Error && THROTTLING.has(error.name);
}

/** The slowest pace a throttled segment falls to: one write a second. */
const MIN_WRITES_PER_SECOND = 1;
/** Each successful write gives back this share of the full pace. */
const RECOVERY_SHARE = 0.01;

export class WriteThrottle {
  private readonly full: number;
  private current: number;
  private nextAt = 0;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** How many times DynamoDB throttled this segment. */
  throttled = 0;

  constructor(options: WriteThrottleOptions) {
    this.full = options.writesPerSecond;
    this.current = options.writesPerSecond;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Wait for the next write's turn. */
  async take(): Promise<void> {
    if (this.full <= 0) return;
    const now = this.now();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + 1000 / this.current;
    if (at > now) await this.sleep(at - now);
  }

  /** A write succeeded: recover some of the pace a throttle took. */
  succeeded(): void {
    if (this.current < this.full) this.current = Math.min(this.full, this.current + this.full * RECOVERY_SHARE);
  }

  /** DynamoDB throttled a write: halve the pace and wait one interval of the new pace before the retry. */
  async backOff(): Promise<void> {
    this.throttled += 1;
    if (this.full <= 0) return this.sleep(100);
    this.current = Math.max(MIN_WRITES_PER_SECOND, this.current / 2);
    this.nextAt = this.now() + 1000 / this.current;
    await this.sleep(1000 / this.current);
  }
}
