/**
 * Folds of per-value totals beside the writes (storage/value-counter.ts): the work that moves a dataset's settled
 * change items into its count pages, so that a list reads a few pages and the claims of the last seconds instead
 * of folding a bulk load itself.
 *
 * The records table's stream carries every change item as it lands (`change#<position>` in the dataset's meta
 * partition). The change log's writer (change-stream.ts) hands the stream batches to `foldsOfItemChanges`, which
 * asks for one fold per dataset, due when the batch's newest claim has settled (`SETTLE_MS`, no write of it can
 * still land) plus a margin. The fold queue is a port: an SQS queue with a delivery delay and a small function
 * in a deployment (sqs-value-folds.ts), an in-process timer in `npm start` (local-value-folds.ts); both run
 * `runFold`. A fold asked for twice, or early, or beside a list's own, is harmless: it runs under each slot's
 * lease, conditionally on the pages' positions, and folds only what has settled by its own clock; a fold that
 * runs out of time asks for itself again at once. Losing a fold (a local process stopped) loses no count: the
 * claims stay counted from the change items, and a list folds what is left long after it is due.
 *
 * A fold also finishes the dataset's batch updates their writers left (operations/batch-finish.ts): a batch that
 * reached its commit point is applied whole, one pending past the longest invocation is undone. The stream carries
 * a batch's intent as it moves to `committed`; that asks for a fold of its dataset a little later
 * (`BATCH_FINISH_AFTER_MS`), by when its writer has applied it and deleted the intent, unless it died midway: then
 * the fold applies the rest, with no other write of the dataset needed (docs/batch-update.md).
 */
import type { Catalog, Dataset } from '../catalog/catalog';
import { CapacityMeter } from '../observability/capacity-meter';
import { logValueFold } from '../observability/change-metrics';
import { recordIdTime } from '../records/record-ids';
import { compactChanges } from '../storage/change-compaction';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import {
  countSlotKey,
  exactTotalsIndexes,
  type IndexSlot,
  indexLayout,
  totalledIndexes,
} from '../storage/index-attributes';
import { batchIntentOfKey, changeItemOfKey } from '../storage/item-keys';
import { SETTLE_MS } from '../storage/record-counter';
import { RecordAttr } from '../storage/table-definitions';
import { type DatasetFoldOutcome, foldDatasetTotals } from '../storage/value-fold';

/** A fold asked for: the dataset, and the time (ms) from which its newest claim seen so far has settled. */
export interface FoldRequest {
  datasetCode: string;
  dueAt: number;
}

export interface FoldQueue {
  /** Run a fold of each dataset at (or soon after) its `dueAt`; asking again for a dataset is harmless. */
  schedule(requests: readonly FoldRequest[]): Promise<void>;
}

/** How long after a claim has settled its fold runs: the lists' check of it starts `CHECK_SLACK_MS` after. */
export const FOLD_MARGIN_MS = 1_000;
/** How long one fold runs before it asks for itself again (below a slot lease's `FOLD_LEASE_MS`). */
export const FOLD_TURN_MS = 20_000;

/** How long after a batch's commit point its fold runs: its writer applies a batch of 1,000 in a second or two. */
export const BATCH_FINISH_AFTER_MS = 5_000;

/** What `foldsOfItemChanges` reads of a stream record (change-stream.ts's `ItemChangeRecord` has it). */
export interface StreamedItemKeys {
  eventName?: string | undefined;
  dynamodb?: { Keys?: Record<string, unknown> | undefined; NewImage?: Record<string, unknown> | undefined } | undefined;
}

/**
 * The folds a batch of the records table's stream asks for: per dataset, when its newest claim has settled, and
 * `BATCH_FINISH_AFTER_MS` after `now` for a batch update that reached its commit point.
 */
export function foldsOfItemChanges(records: readonly StreamedItemKeys[], now: number): FoldRequest[] {
  const newest = new Map<string, string>();
  const committed = new Set<string>();
  for (const record of records) {
    const keys = record.dynamodb?.Keys as Record<string, { S?: string } | undefined> | undefined;
    const partitionKey = keys?.[RecordAttr.partitionKey]?.S;
    const sortKey = keys?.[RecordAttr.sortKey]?.S;
    const state = (record.dynamodb?.NewImage as Record<string, { S?: string } | undefined> | undefined)?.state?.S;
    const batchOf = batchIntentOfKey(partitionKey, sortKey);
    if (batchOf !== undefined && record.eventName !== 'REMOVE' && state === 'committed') committed.add(batchOf);
    if (record.eventName !== 'INSERT') continue;
    const claim = changeItemOfKey(partitionKey, sortKey);
    if (!claim) continue;
    const seen = newest.get(claim.datasetCode);
    if (seen === undefined || seen < claim.position) newest.set(claim.datasetCode, claim.position);
  }
  return [
    ...[...newest].map(([datasetCode, position]) => ({
      datasetCode,
      dueAt: recordIdTime(position) + SETTLE_MS + FOLD_MARGIN_MS,
    })),
    ...[...committed].map((datasetCode) => ({ datasetCode, dueAt: now + BATCH_FINISH_AFTER_MS })),
  ];
}

/** A fold message as the queue carries it (JSON), and back; `undefined` for a body that is not one. */
export function encodeFoldRequest(request: FoldRequest): string {
  return JSON.stringify(request);
}

export function decodeFoldRequest(body: string): FoldRequest | undefined {
  try {
    const value = JSON.parse(body) as Partial<FoldRequest>;
    if (typeof value.datasetCode !== 'string' || typeof value.dueAt !== 'number') return undefined;
    return { datasetCode: value.datasetCode, dueAt: value.dueAt };
  } catch {
    return undefined;
  }
}

export interface FoldPorts {
  catalog(): Promise<Catalog>;
  bookkeeping: DatasetBookkeeping;
  now(): number;
  /**
   * Finishes the dataset's batch updates their writers left (operations/batch-finish.ts); how many it finished.
   * Absent where nothing writes records (a fold of a store no batch update reaches).
   */
  finishBatches?(dataset: Dataset, catalog: Catalog, meter: CapacityMeter): Promise<number>;
}

export interface FoldRun {
  datasetCode: string;
  /** Records' worth of claims moved into count pages. */
  folded: number;
  /** Settled claims are left (the turn ran out, or another folder holds a lease): the fold is asked for again. */
  left: boolean;
  /** Change items deleted once no reader needed them (storage/change-compaction.ts). */
  compacted: number;
  /** When the fold should run again to delete change items that will be due then (ms). */
  againAt?: number;
  /** Batch updates their writers left, finished by this fold (applied whole, or undone when never committed). */
  batchesFinished?: number;
}

/**
 * One turn of a dataset's fold, over the slots whose totals it keeps (none for a dataset no longer configured),
 * then a pass deleting the change items no reader needs any more: behind the heads this fold found, never while an
 * index of the dataset is being built (its job reads the claims after its start), never a configured dataset's
 * claims of the last `COMPACTION_LAG_MS`.
 */
export async function runFold(datasetCode: string, ports: FoldPorts, meter: CapacityMeter): Promise<FoldRun> {
  const catalog = await ports.catalog();
  const dataset = catalog.dataset(datasetCode);
  if (!dataset) return { datasetCode, folded: 0, left: false, compacted: 0 };
  // Batches first: what finishing one writes is claimed as any write is, and folded by the folds after it.
  const batchesFinished = ports.finishBatches ? await ports.finishBatches(dataset, catalog, meter) : 0;
  const exact = exactTotalsIndexes(dataset);
  const slots = [...exact].map(countSlotKey);
  // Lists leave the claims to folds that began this recently (value-counter.ts), however far behind they are.
  if (slots.length > 0) await ports.bookkeeping.values.markFoldSeen(datasetCode, ports.now(), meter);
  const outcome: DatasetFoldOutcome =
    slots.length === 0
      ? { folded: 0, left: false }
      : await foldDatasetTotals(ports.bookkeeping, {
          datasetCode,
          slots,
          now: ports.now(),
          meter,
          until: performance.now() + FOLD_TURN_MS,
        });
  const building = totalledIndexes(dataset).some((slot) => !exact.has(slot) && !isComplete(dataset, slot));
  const compaction = await compactChanges(ports.bookkeeping.compaction, {
    datasetCode,
    totalsFrom: building ? null : outcome.readsFrom,
    // Read after the fold: a proposal's time is never earlier than the heads it was made from.
    now: ports.now(),
    meter,
  });
  return {
    datasetCode,
    folded: outcome.folded,
    left: outcome.left,
    compacted: compaction.deleted,
    ...(batchesFinished > 0 ? { batchesFinished } : {}),
    ...(compaction.againAt === undefined ? {} : { againAt: compaction.againAt }),
  };
}

/** Whether an index whose totals writes keep is complete (in the dataset's query layout). */
function isComplete(dataset: Dataset, slot: IndexSlot): boolean {
  const complete = indexLayout(dataset).get(slot.field);
  return complete?.tag === slot.tag && complete.attribute === slot.attribute;
}

/**
 * One turn of a dataset's fold, with its log line (`value-fold`): the run, or undefined when the fold failed (its
 * error is logged; what it wrote is true, and the next fold starts over).
 */
export async function foldAndLog(
  datasetCode: string,
  ports: FoldPorts,
  metricNamespace: string,
): Promise<FoldRun | undefined> {
  const meter = new CapacityMeter();
  const started = performance.now();
  const spent = () => ({
    readUnits: meter.readUnits,
    writeUnits: meter.writeUnits,
    durationMs: performance.now() - started,
  });
  try {
    const run = await runFold(datasetCode, ports, meter);
    logValueFold({ ...run, ...spent() }, metricNamespace);
    return run;
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    logValueFold({ datasetCode, folded: 0, left: true, compacted: 0, ...spent(), error: message }, metricNamespace);
    return undefined;
  }
}
