/**
 * Index jobs inside `npm start`: the steps a deployment's state machine runs (index-jobs.ts), run by the local
 * server's own process. It asks `next`, waits or scans as told (a few segments at once, each in short turns so
 * the process's requests keep their share of it), finishes the job, and asks again until there is nothing left;
 * it stops with the server. A failing step is reported and tried again a little later, as the state machine's
 * retries would.
 */
import { ulid } from 'ulid';
import type { IndexJobs, NextStep, SegmentRef, SegmentRun } from './index-jobs';

export interface LocalIndexRunnerOptions {
  /** Segments worked on at once. */
  concurrency: number;
  /** How long a segment works before it lets the others have a turn, and a job's end at most (ms). */
  segmentBudgetMs: number;
  /** How long to wait after a failed step before trying again (ms). */
  retryAfterMs?: number;
  /** Each segment turn, for the log and metrics. */
  onSegment?: (ref: SegmentRef, run: SegmentRun) => void;
  onError?: (error: unknown) => void;
}

export class LocalIndexRunner {
  /** This process's name in the runner lease: a lease held by another name is a process that ended. */
  readonly owner = `local:${ulid()}`;
  private stopped = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly jobs: IndexJobs,
    private readonly options: LocalIndexRunnerOptions,
  ) {}

  /** Start working (again, when it had finished); resolves when there is nothing left to do or it was stopped. */
  start(): Promise<void> {
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stop after the turns in progress; resolves once nothing runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let step: NextStep;
      try {
        step = await this.jobs.next(this.owner);
        if (step.action === 'done') return;
        if (step.action === 'wait') {
          await this.sleep(step.seconds * 1000);
          continue;
        }
        await this.scan(step.segments);
        if (!this.stopped) await this.jobs.finish(step.jobId, this.options.segmentBudgetMs);
      } catch (error) {
        this.options.onError?.(error);
        await this.sleep(this.options.retryAfterMs ?? 5_000);
      }
    }
  }

  /**
   * Every segment until it is done, a few at once, each in turns of `segmentBudgetMs`. After a failure no worker
   * takes another turn, and the failure is thrown once every turn in progress has ended.
   */
  private async scan(segments: readonly SegmentRef[]): Promise<void> {
    const queue = [...segments];
    let failure: { error: unknown } | undefined;
    const worker = async () => {
      for (let ref = queue.shift(); ref && !this.stopped && !failure; ref = queue.shift()) {
        try {
          const run = await this.jobs.runSegment(ref, this.options.segmentBudgetMs);
          this.options.onSegment?.(ref, run);
          if (!run.done) queue.push(ref);
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, segments.length) }, worker));
    if (failure) throw failure.error;
  }
}
