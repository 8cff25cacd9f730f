/**
 * Local runs: what Lambda's DynamoDB Streams event source does for the deployment's stream function. It reads a
 * change stream shard by shard from where it last stopped (a checkpoint in the store), hands each batch to the
 * change log's writer (change-stream.ts), and moves the checkpoint past what the writer finished; when the writer
 * reports a failed item change, the next read starts at it again, after a pause. A process stopped at any point
 * (`kill -9` included) starts again from its checkpoint: item changes may be handed to the writer twice, which
 * logs each once, and none is skipped.
 *
 * The stream is a port: the embedded store's twin of DynamoDB Streams (bin/local/embedded-stream.ts), or the
 * Streams API of another endpoint such as moto's (dynamodb-streams-source.ts).
 */
import type { StreamCheckpoints } from '../storage/stream-checkpoints';
import type { ItemChangeRecord } from './change-stream';

export interface ChangeStreamSource {
  /** Names the stream in checkpoints (e.g. the table's name). */
  readonly name: string;
  /** The shards to read now. */
  shards(): Promise<string[]>;
  /** Up to `limit` item changes of a shard after sequence number `after` (from its start without it), in order. */
  read(shard: string, after: string | undefined, limit: number): Promise<ItemChangeRecord[]>;
  /** Forget a shard's item changes up to `through`, which the writer has finished with (a local stream's space). */
  trim?(shard: string, through: string): Promise<void>;
  /** Calls `wake` when new item changes may be there; answers a function that stops calling it. */
  onChange?(wake: () => void): () => void;
  /**
   * The sequence number of the newest item change of a shard so far (every change acknowledged before the call is
   * at or before it); undefined when it has none. Lets `caughtUp` finish while writes go on.
   */
  latest?(shard: string): Promise<string | undefined>;
}

/** A `caughtUp` call waiting for the checkpoint of each shard to reach where the stream was when it was made. */
interface TargetWaiter {
  targets: Map<string, bigint>;
  resolve: () => void;
}

export interface StreamPollerOptions {
  source: ChangeStreamSource;
  checkpoints: StreamCheckpoints;
  /** The change log's writer: answers the sequence number of the first item change it could not finish. */
  handle(records: readonly ItemChangeRecord[]): Promise<{ failedAt?: string | undefined }>;
  /** Item changes per batch (Lambda's default for streams: 100). */
  batchSize?: number;
  /** How often a shard with nothing new is read again (ms). */
  idleMs?: number;
  /** The pause before a failed batch is read again (ms). */
  retryMs?: number;
}

export class StreamPoller {
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private caughtUpWaiters: (() => void)[] = [];
  private targetWaiters: TargetWaiter[] = [];
  private readonly reached = new Map<string, bigint>();
  private dirty = false;

  constructor(private readonly options: StreamPollerOptions) {}

  start(): void {
    this.stopped = false;
    this.unsubscribe = this.options.source.onChange?.(() => this.wake());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.wakeUp?.();
    await this.loop;
  }

  /**
   * Resolves once everything the stream held when it was called has been handed to the writer and finished. Two
   * ways, whichever comes first: a whole pass over the shards, begun after the call, that found nothing more and
   * saw no write meanwhile; or, where the source tells its newest sequence numbers, the checkpoints reaching those
   * the shards had at the call, which they do while writes go on (a load that never pauses would otherwise keep
   * every caller waiting until it ends).
   */
  caughtUp(): Promise<void> {
    this.dirty = true;
    return new Promise((resolve) => {
      let done = false;
      const once = () => {
        if (done) return;
        done = true;
        resolve();
      };
      this.caughtUpWaiters.push(once);
      this.wake();
      void this.targetsNow().then(
        (targets) => {
          if (!targets || done) return;
          this.targetWaiters.push({ targets, resolve: once });
          this.resolveReached();
        },
        () => undefined,
      );
    });
  }

  /** The newest sequence number of each shard now, or undefined when the source does not tell them. */
  private async targetsNow(): Promise<Map<string, bigint> | undefined> {
    const { source } = this.options;
    if (!source.latest) return undefined;
    const targets = new Map<string, bigint>();
    for (const shard of await source.shards()) {
      const latest = await source.latest(shard);
      if (latest !== undefined) targets.set(shard, BigInt(latest));
    }
    return targets;
  }

  /** Resolves the target waiters every shard's checkpoint has reached. */
  private resolveReached(): void {
    this.targetWaiters = this.targetWaiters.filter((waiter) => {
      for (const [shard, target] of waiter.targets) {
        if ((this.reached.get(shard) ?? -1n) < target) return true;
      }
      waiter.resolve();
      return false;
    });
  }

  private wake(): void {
    this.dirty = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.dirty = false;
      const waiters = this.caughtUpWaiters.splice(0);
      let progressed = false;
      let failed = false;
      try {
        for (const shard of await this.options.source.shards()) {
          const result = await this.drainShard(shard);
          progressed ||= result.progressed;
          failed ||= result.failed;
        }
      } catch {
        failed = true;
      }
      if (!failed && !this.dirty) {
        for (const resolve of waiters) resolve();
        for (const waiter of this.targetWaiters.splice(0)) waiter.resolve();
      } else {
        this.caughtUpWaiters.unshift(...waiters);
      }
      if (this.stopped) break;
      if (progressed && !failed) continue;
      await this.sleep(failed ? (this.options.retryMs ?? 1_000) : (this.options.idleMs ?? 1_000));
    }
    for (const resolve of this.caughtUpWaiters.splice(0)) resolve();
    for (const waiter of this.targetWaiters.splice(0)) waiter.resolve();
  }

  /** Hand a shard's new item changes to the writer until it has none, or a batch fails. */
  private async drainShard(shard: string): Promise<{ progressed: boolean; failed: boolean }> {
    const { source, checkpoints, handle } = this.options;
    const limit = this.options.batchSize ?? 100;
    let progressed = false;
    for (;;) {
      if (this.stopped) return { progressed, failed: false };
      const after = await checkpoints.get(source.name, shard);
      const records = await source.read(shard, after, limit);
      if (records.length === 0) return { progressed, failed: false };
      const { failedAt } = await handle(records);
      const failedIndex =
        failedAt === undefined ? -1 : records.findIndex((r) => r.dynamodb?.SequenceNumber === failedAt);
      const done = failedAt === undefined ? records : records.slice(0, Math.max(0, failedIndex));
      const last = done.at(-1)?.dynamodb?.SequenceNumber;
      if (last !== undefined) {
        await checkpoints.set(source.name, shard, last);
        await source.trim?.(shard, last);
        progressed = true;
        if (source.latest) {
          this.reached.set(shard, BigInt(last));
          this.resolveReached();
        }
      }
      if (failedAt !== undefined) return { progressed, failed: true };
      if (records.length < limit) return { progressed, failed: false };
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}
