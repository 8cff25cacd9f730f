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
import { changeItemOfKey } from '../storage/item-keys';
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

/** What `foldsOfItemChanges` reads of a stream record (change-stream.ts's `ItemChangeRecord` has it). */
export interface StreamedItemKeys {
  eventName?: string | undefined;
  dynamodb?: { Keys?: Record<string, unknown> | undefined } | undefined;
}

/** The folds a batch of the records table's stream asks for: per dataset, when its newest claim has settled. */
export function foldsOfItemChanges(records: readonly StreamedItemKeys[]): FoldRequest[] {
  const newest = new Map<string, string>();
  for (const record of records) {
    if (record.eventName !== 'INSERT') continue;
    const keys = record.dynamodb?.Keys as Record<string, { S?: string } | undefined> | undefined;
    const claim = changeItemOfKey(keys?.[RecordAttr.partitionKey]?.S, keys?.[RecordAttr.sortKey]?.S);
    if (!claim) continue;
    const seen = newest.get(claim.datasetCode);
    if (seen === undefined || seen < claim.position) newest.set(claim.datasetCode, claim.position);
  }
  return [...newest].map(([datasetCode, position]) => ({
    datasetCode,
    dueAt: recordIdTime(position) + SETTLE_MS + FOLD_MARGIN_MS,
  }));
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
}

/**
 * One turn of a dataset's fold, over the slots whose totals it keeps (none for a dataset no longer configured),
 * then a pass deleting the change items no reader needs any more: behind the heads this fold found, never while an
 * index of the dataset is being built (its job reads the claims after its start), never a configured dataset's
 * claims of the last `COMPACTION_LAG_MS`.
 */
export async function runFold(datasetCode: string, ports: FoldPorts, meter: CapacityMeter): Promise<FoldRun> {
  const dataset = (await ports.catalog()).dataset(datasetCode);
  if (!dataset) return { datasetCode, folded: 0, left: false, compacted: 0 };
  const exact = exactTotalsIndexes(dataset);
  const slots = [...exact].map(countSlotKey);
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
