/**
 * `npm start`'s twin of the fold queue (value-folds.ts): what the deployment's SQS queue with a delivery delay and
 * its fold function do, in the server's own process, with the same `runFold`. Per dataset it keeps the earliest
 * and the latest time a fold was asked for; a timer runs the earliest when it comes (one fold at a time, so a bulk
 * load's folds do not crowd the requests), and a fold that leaves settled claims runs again a second later (one whose
 * change items will be due for deletion later, then). Nothing is
 * kept across a restart: the claims stay counted from the change items, the next write asks for a fold again,
 * and a list folds what is left long after it is due (value-counter.ts).
 */
import { type FoldPorts, type FoldQueue, type FoldRequest, foldAndLog } from './value-folds';

export interface LocalValueFoldsOptions {
  ports: FoldPorts;
  metricNamespace: string;
  /** How long to wait after a failed fold before it runs again (ms). */
  retryMs?: number;
}

/** A fold that left settled claims (its turn ran out, a lease was held) runs again this much later (ms). */
const LEFT_AGAIN_MS = 1_000;

interface Pending {
  next: number;
  last: number;
}

export class LocalValueFolds implements FoldQueue {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: LocalValueFoldsOptions) {}

  async schedule(requests: readonly FoldRequest[]): Promise<void> {
    for (const { datasetCode, dueAt } of requests) {
      const known = this.pending.get(datasetCode);
      this.pending.set(
        datasetCode,
        known ? { next: Math.min(known.next, dueAt), last: Math.max(known.last, dueAt) } : { next: dueAt, last: dueAt },
      );
    }
    this.arm();
  }

  /** Resolves once every fold due by the ports' clock has run (and none is running). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) await this.running;
      else if (!this.stopped && this.dueNow().length > 0) await this.runDue();
      else return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private dueNow(): string[] {
    const now = this.options.ports.now();
    return [...this.pending].filter(([, pending]) => pending.next <= now).map(([datasetCode]) => datasetCode);
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.stopped || this.running || this.pending.size === 0) return;
    const next = Math.min(...[...this.pending.values()].map((pending) => pending.next));
    this.timer = setTimeout(() => void this.runDue(), Math.max(0, next - this.options.ports.now()));
    this.timer.unref();
  }

  private runDue(): Promise<void> {
    this.running ??= (async () => {
      for (const datasetCode of this.dueNow()) {
        if (this.stopped) break;
        await this.foldOne(datasetCode);
      }
    })().finally(() => {
      this.running = undefined;
      this.arm();
    });
    return this.running;
  }

  private async foldOne(datasetCode: string): Promise<void> {
    const ranAt = this.options.ports.now();
    const run = await foldAndLog(datasetCode, this.options.ports, this.options.metricNamespace);
    const again = !run ? ranAt + (this.options.retryMs ?? 5_000) : run.left ? ranAt + LEFT_AGAIN_MS : run.againAt;
    const pending = this.pending.get(datasetCode);
    if (!pending) return;
    // Asked for meanwhile, or for claims that settle later than this run's clock: run again then.
    const later = pending.last > ranAt ? pending.last : undefined;
    const next = again === undefined ? later : Math.min(again, later ?? again);
    if (next === undefined) this.pending.delete(datasetCode);
    else this.pending.set(datasetCode, { next, last: Math.max(pending.last, next) });
  }
}
