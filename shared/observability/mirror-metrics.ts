/**
 * The MySQL mirror's own log line in a deployment (docs/interface.md §20), in CloudWatch embedded metric format like
 * the change log's (change-metrics.ts): one line per run of the mirror function, with how far behind the change log
 * the mirror was at worst during it (`sqlMirrorLagSeconds`: the time since the start of the last round that applied
 * it, the longest over the datasets whose mirror is copied), the rounds that failed, and the datasets still being
 * copied by their backfill, and the datasets the run started copying again because their position had passed the
 * change log's retention (`sqlMirrorBackfillsAgain`, with their codes: a full read of each dataset's records).
 * No line carries a record or a statement's values.
 */
import { writeLogLine } from './request-log';

/** The lag metric's name: the alarm and the dashboard read it. */
export const MIRROR_LAG_METRIC = 'sqlMirrorLagSeconds';
export const MIRROR_ROUND_FAILURES_METRIC = 'sqlMirrorRoundFailures';
export const MIRROR_BACKFILLING_METRIC = 'sqlMirrorBackfilling';
export const MIRROR_BACKFILLS_AGAIN_METRIC = 'sqlMirrorBackfillsAgain';

export interface MirrorRunEntry {
  rounds: number;
  failedRounds: number;
  /** The greatest lag seen after a round (s); absent when no round applied the change log. */
  lagSeconds?: number;
  /** Datasets whose backfill is not done yet. */
  backfilling: number;
  /** Datasets this run started backfilling again: their position was older than the change log holds. */
  backfilledAgain: string[];
  durationMs: number;
  error?: string;
}

export function logMirrorRun(entry: MirrorRunEntry, namespace: string, now = Date.now()): void {
  writeLogLine({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [[]],
          Metrics: [
            { Name: MIRROR_ROUND_FAILURES_METRIC, Unit: 'Count' },
            { Name: MIRROR_BACKFILLING_METRIC, Unit: 'Count' },
            { Name: MIRROR_BACKFILLS_AGAIN_METRIC, Unit: 'Count' },
            ...(entry.lagSeconds === undefined ? [] : [{ Name: MIRROR_LAG_METRIC, Unit: 'Seconds' }]),
          ],
        },
      ],
    },
    level: entry.failedRounds > 0 ? 'ERROR' : entry.backfilledAgain.length > 0 ? 'WARN' : 'INFO',
    operation: 'sql-mirror',
    rounds: entry.rounds,
    [MIRROR_ROUND_FAILURES_METRIC]: entry.failedRounds,
    [MIRROR_BACKFILLING_METRIC]: entry.backfilling,
    [MIRROR_BACKFILLS_AGAIN_METRIC]: entry.backfilledAgain.length,
    ...(entry.backfilledAgain.length > 0 ? { backfilledAgain: entry.backfilledAgain } : {}),
    ...(entry.lagSeconds === undefined ? {} : { [MIRROR_LAG_METRIC]: Math.round(entry.lagSeconds * 10) / 10 }),
    durationMs: Math.round(entry.durationMs),
    error: entry.error,
  });
}
