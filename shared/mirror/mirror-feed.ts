/**
 * What keeps the mirror in step with the change log (docs/interface.md §18, §20), and what a query waits on to
 * read its own writes.
 *
 * A round: note the time T, wait until the change log holds every write acknowledged before T (`logged`), then
 * per dataset read its events from the position applied for good and upsert them, guarded by revision. After
 * it the mirror holds every write acknowledged before T (`caughtUpAt` = T). The position saved for good is the
 * last one of time T − settleMs: no event of a position at or before it can still appear (storage/event-store.ts),
 * so a writer restarted from it misses nothing; the events after it are read again by the next round and
 * applied again, which the revision guard makes harmless (a replay never moves a row back).
 *
 * A dataset new to the mirror starts its change log a little before its table was made and is backfilled from
 * the records table (mirror-backfill.ts) beside the rounds; until the backfill is done, its mirror is not caught
 * up, whatever the rounds have applied.
 *
 * A dataset whose position is older than what the change log still holds (a mirror stopped past the retention,
 * mirror-retention.ts) is backfilled again the same way before its round applies anything: its position moves to
 * a little before that moment and its backfill starts over from the first record, both saved in one statement, so
 * the dataset is not caught up again until the records are all copied. Changes lost meanwhile are in the records
 * the backfill reads; those logged since are applied by the rounds, the revision guard settling the overlap.
 */
import type { QueryTimeoutError } from '../contract/errors';
import { CapacityMeter } from '../observability/capacity-meter';
import { type FeedRead, firstPositionAt, lastPositionAt, positionTime } from '../storage/event-store';
import { backfillDataset, type MirrorBackfillOptions, mirrorRowOf } from './mirror-backfill';
import { expiredReason, positionExpired } from './mirror-retention';
import type { MirrorRow } from './mirror-schema';
import type { MirrorDataset, MirrorTables } from './mirror-tables';
import { mirrorBehindError } from './query-outcomes';

export interface ChangeLogReader {
  read(
    datasetCode: string,
    range: { after?: string | undefined; from: string; through: string },
    limit: number,
    meter: CapacityMeter,
  ): Promise<FeedRead>;
  readonly settleMs: number;
}

export interface MirrorFeedOptions {
  tables: MirrorTables;
  /** The datasets of the configuration in force. */
  datasets(): Promise<MirrorDataset[]>;
  events: ChangeLogReader;
  /** Resolves once every write acknowledged before the call is in the change log. */
  logged(): Promise<void>;
  /** How many days the change log keeps a change (the configuration's `changeRetentionDays`). */
  changeRetentionDays(): Promise<number>;
  backfill: Omit<MirrorBackfillOptions, 'tables'>;
  /** How often a round runs when no query asks for one (ms). */
  idleMs?: number;
  /** Called with a round's or a backfill's failure (the next round tries again). */
  onError?: (error: unknown) => void;
  /** Called when a dataset is backfilled again because its position passed the change log's retention. */
  onBackfillAgain?: (datasetCode: string, reason: string) => void;
  now?: () => number;
}

/** Events read per page of the change log. */
const EVENTS_PER_PAGE = 500;
/** A new dataset's change log starts this long before its table is made (beyond the settle window). */
const START_MARGIN_MS = 60_000;

interface DatasetProgress {
  /** The position applied for good. */
  position: string | undefined;
  caughtUpAt: number;
  backfillDone: boolean;
  /** Set while a backfill runs again: the time of the position the mirror had stopped at, and why. */
  again?: { staleSince: number; reason: string };
}

export class MirrorFeed {
  private readonly progress = new Map<string, DatasetProgress>();
  private readonly backfills = new Map<string, { task: Promise<void>; cancelled: boolean }>();
  private waiters: (() => void)[] = [];
  /** Queries waiting to look again when a backfill is done. */
  private backfilled: (() => void)[] = [];
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: MirrorFeedOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
    await Promise.allSettled([...this.backfills.values()].map((backfill) => backfill.task));
    for (const resolve of [...this.waiters.splice(0), ...this.backfilled.splice(0)]) resolve();
  }

  /** Resolves after a whole round that started after this call. */
  round(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.wakeUp?.();
    });
  }

  /**
   * Waits until the mirror of each dataset holds every write acknowledged before `since`, at most until
   * `deadline`; past it, 2001 saying how far behind the mirror is.
   */
  async caughtUp(datasets: readonly string[], since: number, deadline: number, statedLimitMs: number): Promise<void> {
    for (;;) {
      const behind = datasets.filter((code) => {
        const progress = this.progress.get(code);
        return !progress?.backfillDone || progress.caughtUpAt < since;
      });
      if (behind.length === 0) return;
      const left = deadline - this.now();
      if (left <= 0) throw this.behindError(behind, statedLimitMs);
      let timer: NodeJS.Timeout | undefined;
      const copying = behind.some((code) => !this.progress.get(code)?.backfillDone);
      await Promise.race([
        this.round(),
        ...(copying ? [new Promise<void>((resolve) => this.backfilled.push(resolve))] : []),
        new Promise((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
    }
  }

  /** How far behind each dataset's mirror is (seconds), as `das sql status` and 2001 say it. */
  lagSeconds(datasetCode: string): number | undefined {
    const progress = this.progress.get(datasetCode);
    if (!progress?.backfillDone || progress.caughtUpAt === 0) return undefined;
    return Math.max(0, (this.now() - progress.caughtUpAt) / 1000);
  }

  private behindError(behind: readonly string[], statedLimitMs: number): QueryTimeoutError {
    return mirrorBehindError(
      behind.map((code) => {
        const progress = this.progress.get(code);
        return {
          datasetCode: code,
          copying: !progress?.backfillDone,
          caughtUpAt: progress?.caughtUpAt ?? 0,
          ...(progress?.again ? { staleSince: progress.again.staleSince } : {}),
        };
      }),
      statedLimitMs,
      this.now(),
    );
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const waiters = this.waiters.splice(0);
      let failed = false;
      try {
        await this.oneRound();
      } catch (error) {
        failed = true;
        this.options.onError?.(error);
      }
      for (const resolve of waiters) resolve();
      if (this.stopped) break;
      if (this.waiters.length > 0 && !failed) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, failed ? 1_000 : (this.options.idleMs ?? 1_000));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** One round over every dataset (exported for tests through `round`). */
  private async oneRound(): Promise<void> {
    const started = this.now();
    await this.options.logged();
    const datasets = await this.options.datasets();
    const retentionDays = await this.options.changeRetentionDays();
    await this.options.tables.prepare(datasets);
    for (const dataset of datasets) {
      if (this.stopped) return;
      const progress = await this.progressOf(dataset, started);
      if (progress.position !== undefined && positionExpired(progress.position, started, retentionDays)) {
        await this.backfillAgain(dataset, progress, expiredReason(progress.position, retentionDays), started);
      }
      await this.applyChanges(dataset, progress);
      const settled = lastPositionAt(started - this.options.events.settleMs);
      if (progress.position === undefined || settled > progress.position) progress.position = settled;
      progress.caughtUpAt = started;
      await this.options.tables.saveFeed(dataset.datasetCode, progress.position, started);
      if (!progress.backfillDone) this.startBackfill(dataset, progress);
    }
  }

  private async progressOf(dataset: MirrorDataset, now: number): Promise<DatasetProgress> {
    let progress = this.progress.get(dataset.datasetCode);
    if (progress) return progress;
    const state = await this.options.tables.state(dataset.datasetCode);
    const position = state?.position ?? lastPositionAt(now - this.options.events.settleMs - START_MARGIN_MS);
    progress = { position, caughtUpAt: 0, backfillDone: state?.backfillDone ?? false };
    if (state?.backfillReason !== undefined && !state.backfillDone) {
      progress.again = { staleSince: state.staleSince, reason: state.backfillReason };
    }
    if (!state) await this.options.tables.saveFeed(dataset.datasetCode, position, 0);
    this.progress.set(dataset.datasetCode, progress);
    return progress;
  }

  /** Every event after the position applied for good, applied. */
  private async applyChanges(dataset: MirrorDataset, progress: DatasetProgress): Promise<void> {
    let after = progress.position;
    const through = lastPositionAt(this.now() + START_MARGIN_MS);
    for (;;) {
      const page = await this.options.events.read(
        dataset.datasetCode,
        { after, from: firstPositionAt(0), through },
        EVENTS_PER_PAGE,
        new CapacityMeter(),
      );
      const rows = page.changes.flatMap((change): MirrorRow[] => {
        const row = mirrorRowOf({ ...change.item, '@sk': change.id });
        return row ? [{ ...row, revision: change.revision }] : [];
      });
      await this.options.tables.apply(dataset, rows);
      const last = page.changes.at(-1);
      if (!page.more || !last) return;
      after = last.position;
    }
  }

  /**
   * Copies a dataset again from its first record, the change log applied from a little before `now` (as for a
   * dataset new to the mirror); a backfill of it still running from before is stopped first (its pages were read
   * before the changes now lost).
   */
  private async backfillAgain(
    dataset: MirrorDataset,
    progress: DatasetProgress,
    reason: string,
    now: number,
  ): Promise<void> {
    const running = this.backfills.get(dataset.datasetCode);
    if (running) {
      running.cancelled = true;
      await running.task;
    }
    const staleSince = positionTime(progress.position ?? '') ?? 0;
    const position = lastPositionAt(now - this.options.events.settleMs - START_MARGIN_MS);
    await this.options.tables.restartBackfill(dataset.datasetCode, { position, reason, staleSince });
    progress.position = position;
    progress.backfillDone = false;
    progress.again = { staleSince, reason };
    this.options.onBackfillAgain?.(dataset.datasetCode, reason);
  }

  private startBackfill(dataset: MirrorDataset, progress: DatasetProgress): void {
    if (this.backfills.has(dataset.datasetCode)) return;
    const backfill = { task: Promise.resolve(), cancelled: false };
    const options = { ...this.options.backfill, tables: this.options.tables };
    backfill.task = backfillDataset(options, dataset, () => this.stopped || backfill.cancelled)
      .then((done) => {
        if (!done || backfill.cancelled) return;
        progress.backfillDone = true;
        progress.again = undefined;
        for (const resolve of this.backfilled.splice(0)) resolve();
      })
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.backfills.delete(dataset.datasetCode);
      });
    this.backfills.set(dataset.datasetCode, backfill);
  }
}
