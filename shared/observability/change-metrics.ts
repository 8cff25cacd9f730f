/**
 * The change log's own log lines (docs/interface.md §18), in CloudWatch embedded metric format like the request log
 * (request-log.ts), so the dashboard and the alarms read them with no extra infrastructure:
 *
 * - one line per batch of the change stream: events logged (and found logged already), the write units they cost,
 *   and how long after the change the event was logged (`changeLogLagMs`);
 * - one line per webhook delivery attempt, by subscription: delivered, failed, parked, and for a delivery the
 *   time from the change to the receiver's 2xx (`webhookLagMs`);
 * - one line per fold of per-value totals beside the writes: the records' worth of change items it folded;
 * - a warning when a fold run beside other work fails: the one a get-list runs itself (its claims waited too long
 *   for the fold beside the writes), or an index job's as it finishes. The list answers, the job finishes all the
 *   same, and the claims wait for the next fold.
 *
 * Subscription ids come from the deployed configuration only, so the series stay as few as the subscriptions.
 * No line carries a record, an event body or a secret.
 */
import { writeLogLine } from './request-log';

/** The dimension of the per-subscription webhook metrics; the dashboard reads this name. */
export const SUBSCRIPTION_DIMENSION = 'subscription';

export interface ChangeBatchEntry {
  /** Item changes read from the stream. */
  records: number;
  /** Events written to the change log by this batch. */
  logged: number;
  /** Record changes found logged already (a batch read again after a failure). */
  duplicates: number;
  /** Deliveries queued. */
  queued: number;
  /** Item changes that were failed and will be read again. */
  failed: number;
  writeUnits: number;
  readUnits: number;
  /** The longest time from a change to its event in this batch (ms). */
  lagMs?: number;
  durationMs: number;
  error?: string;
}

export function logChangeBatch(entry: ChangeBatchEntry, namespace: string, now = Date.now()): void {
  writeLogLine({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [[]],
          Metrics: [
            { Name: 'changeEventsLogged', Unit: 'Count' },
            { Name: 'changeBatchFailures', Unit: 'Count' },
            { Name: 'changeEventWriteUnits', Unit: 'Count' },
            ...(entry.lagMs === undefined ? [] : [{ Name: 'changeLogLagMs', Unit: 'Milliseconds' }]),
          ],
        },
      ],
    },
    level: entry.failed > 0 ? 'ERROR' : 'INFO',
    operation: 'change-log',
    records: entry.records,
    changeEventsLogged: entry.logged,
    duplicates: entry.duplicates,
    queued: entry.queued,
    changeBatchFailures: entry.failed,
    changeEventWriteUnits: Math.round(entry.writeUnits * 100) / 100,
    readUnits: Math.round(entry.readUnits * 100) / 100,
    changeLogLagMs: entry.lagMs,
    durationMs: Math.round(entry.durationMs),
    error: entry.error,
  });
}

export interface DeliveryEntry {
  subscriptionId: string;
  eventId: string;
  outcome: 'delivered' | 'failed' | 'parked' | 'skipped' | 'waiting';
  /** The receiver's status, when it answered. */
  status?: number;
  /** Which attempt this was (1 = the first). */
  attempt?: number;
  /** delivered: from the change to the receiver's answer (ms). */
  lagMs?: number;
  durationMs: number;
  reason?: string;
}

export function logDelivery(entry: DeliveryEntry, namespace: string, now = Date.now()): void {
  writeLogLine({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [[SUBSCRIPTION_DIMENSION], []],
          Metrics: [
            { Name: 'webhookDeliveries', Unit: 'Count' },
            { Name: 'webhookFailures', Unit: 'Count' },
            { Name: 'webhookParked', Unit: 'Count' },
            ...(entry.lagMs === undefined ? [] : [{ Name: 'webhookLagMs', Unit: 'Milliseconds' }]),
          ],
        },
      ],
    },
    level: entry.outcome === 'parked' ? 'ERROR' : entry.outcome === 'failed' ? 'WARN' : 'INFO',
    operation: 'webhook-delivery',
    [SUBSCRIPTION_DIMENSION]: entry.subscriptionId,
    eventId: entry.eventId,
    outcome: entry.outcome,
    status: entry.status,
    attempt: entry.attempt,
    webhookDeliveries: entry.outcome === 'delivered' ? 1 : 0,
    webhookFailures: entry.outcome === 'failed' || entry.outcome === 'parked' ? 1 : 0,
    webhookParked: entry.outcome === 'parked' ? 1 : 0,
    webhookLagMs: entry.lagMs === undefined ? undefined : Math.round(entry.lagMs),
    durationMs: Math.round(entry.durationMs),
    reason: entry.reason,
  });
}

export interface ValueFoldEntry {
  datasetCode: string;
  /** Records' worth of change items moved into count pages. */
  folded: number;
  /** Settled change items are left for another turn. */
  left: boolean;
  /** Change items deleted once no reader needed them. */
  compacted: number;
  /** Batch updates their writers left, finished first. */
  batchesFinished?: number;
  readUnits: number;
  writeUnits: number;
  durationMs: number;
  error?: string;
}

/** One line per fold of per-value totals beside the writes (changes/value-folds.ts). */
export function logValueFold(entry: ValueFoldEntry, namespace: string, now = Date.now()): void {
  writeLogLine({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [[]],
          Metrics: [
            { Name: 'valueFoldRecords', Unit: 'Count' },
            { Name: 'valueFoldFailures', Unit: 'Count' },
          ],
        },
      ],
    },
    level: entry.error ? 'ERROR' : 'INFO',
    operation: 'value-fold',
    datasetCode: entry.datasetCode,
    valueFoldRecords: entry.folded,
    valueFoldFailures: entry.error ? 1 : 0,
    left: entry.left,
    compacted: entry.compacted,
    ...(entry.batchesFinished ? { batchesFinished: entry.batchesFinished } : {}),
    readUnits: Math.round(entry.readUnits * 100) / 100,
    writeUnits: Math.round(entry.writeUnits * 100) / 100,
    durationMs: Math.round(entry.durationMs),
    error: entry.error,
  });
}

/** A fold of per-value totals run outside the folds beside the writes, which failed. */
export type FoldFailure =
  | {
      /** A get-list's own fold (storage/value-counter.ts): its claims waited too long for the fold beside the writes. */
      foldBy?: 'get-list';
      /** The get-list that ran the fold. */
      requestId?: string | undefined;
      datasetCode: string;
      /** The count slot (`countSlotKey`) the list counted in; the fold folds the dataset's other slots too. */
      slot: string;
      error: unknown;
    }
  | {
      /** An index job's fold as it finishes (indexing/index-jobs.ts): the claims written while it scanned. */
      foldBy: 'index-job';
      jobId: string;
      datasetCode: string;
      /** The count slots of the builds it counted. */
      slots: readonly string[];
      error: unknown;
    };

/**
 * A fold run beside another piece of work failed: a warning, not a failure of that work. A get-list's total was
 * known before its fold began; an index job's builds are complete before it folds the claims written while it
 * scanned. The dataset's totals stay exact either way; folding waits for the next list or the fold beside the
 * writes, and a slot whose folds keep failing reads more change items per total until one succeeds.
 */
export function logSideFoldFailure(entry: FoldFailure): void {
  const { error } = entry;
  const by =
    entry.foldBy === 'index-job'
      ? { foldBy: 'index-job', jobId: entry.jobId, datasetCode: entry.datasetCode, slots: [...entry.slots] }
      : { foldBy: 'get-list', requestId: entry.requestId, datasetCode: entry.datasetCode, slot: entry.slot };
  writeLogLine({
    level: 'WARN',
    operation: 'value-fold',
    ...by,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  });
}
