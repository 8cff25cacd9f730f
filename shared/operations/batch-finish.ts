/**
 * Finishing a batch update (docs/batch-update.md, "Who finishes a batch its writer left"): a committed batch is
 * applied whole, a pending one whose writer is gone is aborted. Its writer, an update that meets a held record, the
 * next batch update of the dataset and the fold beside the writes (changes/value-folds.ts) all finish batches here,
 * so a finisher needs the dataset, its records and a meter, not a request.
 */
import type { Dataset } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { DataOperationContext } from '../operation/operation';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { formatTimestamp } from '../records/timestamps';
import { environment } from '../runtime/environment';
import type { BatchIntent } from '../storage/batch-update-store';
import { withDerivedAttributes } from '../storage/index-attributes';
import { SETTLE_MS } from '../storage/record-counter';
import { revisionOf } from '../storage/record-revisions';
import type { RecordStore } from '../storage/record-store';
import { RecordAttr } from '../storage/table-definitions';
import { movedSlots } from './moved-slots';

/** What finishing a dataset's batches needs. */
export interface BatchFinishing {
  dataset: Dataset;
  records: RecordStore;
  meter: CapacityMeter;
  /** The configuration's time zone: a record's `gmt_modified` is written in it. */
  timeZone: string;
  now(): number;
}

/** A request's batch finishing: its dataset, store, meter and clock. */
export function finishingOf(data: DataOperationContext): BatchFinishing {
  return {
    dataset: data.dataset,
    records: data.ports.records,
    meter: data.telemetry.capacity,
    timeZone: data.catalog.timeZone,
    now: data.now,
  };
}

/** Records held or written at once. */
const PARALLEL_WRITES = 25;
/** When this process began: where it is the store's only writer, a batch begun before has no writer left. */
const PROCESS_STARTED_AT = Date.now();

/** Whether a pending batch's writer is gone: older than any invocation, or begun by an earlier sole writer. */
function writerGone(intent: BatchIntent, now: number): boolean {
  return now - intent.createdAt > SETTLE_MS || (environment().soleWriter && intent.createdAt < PROCESS_STARTED_AT);
}
/**
 * Apply a committed batch to every record it still holds (`known`: the records as its writer checked them before
 * holding them all; else they are read, and those it no longer holds are done), then delete its intent. A record
 * another finisher wrote first is left as it is: the write is conditional on the hold.
 */
export async function applyBatch(
  finishing: BatchFinishing,
  intent: BatchIntent,
  known?: ReadonlyMap<string, RecordItem>,
): Promise<void> {
  const { dataset, records: store, meter } = finishing;
  const records = known ?? (await store.batches.readRecords(dataset.datasetCode, intent.ids, meter));
  await inParallel(intent.ids, async (id) => {
    const record = records.get(id);
    // Records read before their holds (by the batch's writer, which holds them all) are held all the same.
    if (!record || (!known && record[RecordAttr.batchLock] !== intent.batchId)) return;
    await applyHeld(finishing, intent, id, record);
  });
  await store.batches.deleteIntent(dataset.datasetCode, intent.batchId, meter);
}

/** One record's write of a committed batch: it releases the hold; nothing when it was written already. */
export async function applyHeld(
  finishing: BatchFinishing,
  intent: BatchIntent,
  id: string,
  record: RecordItem,
): Promise<void> {
  const { dataset, records: store, meter, timeZone, now } = finishing;
  const sent: RecordChanges = { set: intent.set, remove: intent.remove };
  const derived = withDerivedAttributes(dataset, id, sent, 'update');
  const occurredAt = now();
  await store.updateAtRevision(
    dataset.datasetCode,
    id,
    {
      changes: derived,
      modifiedAt: formatTimestamp(new Date(occurredAt), timeZone),
      revision: revisionOf(record),
      heldBy: intent.batchId,
      origin: { ...intent.origin, occurredAt },
      claim: { ...movedSlots(finishing, record, derived, id), now },
    },
    meter,
  );
}

/** Abort a batch not committed: no one may commit it any more, then its holds are released and it is deleted. */
export async function abortBatch(finishing: BatchFinishing, intent: BatchIntent): Promise<void> {
  const { dataset, records: store, meter } = finishing;
  const batches = store.batches;
  if (intent.state === 'pending') {
    const moved = await batches.moveState(dataset.datasetCode, intent.batchId, 'pending', 'aborted', meter);
    if (!moved) {
      const now = await batches.readIntent(dataset.datasetCode, intent.batchId, meter);
      if (now?.state === 'committed') return applyBatch(finishing, now);
    }
  }
  await inParallel(intent.ids, (id) => batches.release(dataset.datasetCode, id, intent.batchId, meter));
  await batches.deleteIntent(dataset.datasetCode, intent.batchId, meter);
}

/**
 * Finish one batch another write found holding a record: apply it when committed, abort it when its writer is
 * gone (`force`: no writer can be left, as when `npm start` starts). `false` when it is pending and may still
 * have a writer: the caller waits or answers 4001.
 */
export async function finishBatch(
  finishing: BatchFinishing,
  batchId: string,
  heldId: string,
  force: boolean,
): Promise<boolean> {
  const { dataset, records: store, meter } = finishing;
  const intent = await store.batches.readIntent(dataset.datasetCode, batchId, meter);
  if (!intent) {
    // Its intent is gone, so it can never commit: a hold left behind is released (none should be: an intent is
    // deleted only once its holds are applied or released, and no writer outlives a batch taken for aborted).
    await store.batches.release(dataset.datasetCode, heldId, batchId, meter);
    return true;
  }
  if (intent.state === 'committed') await applyBatch(finishing, intent);
  else if (intent.state === 'aborted' || force || writerGone(intent, finishing.now())) {
    await abortBatch(finishing, intent);
  } else return false;
  return true;
}

/** Finish the dataset's batches that no writer will finish (all of them when `force`). */
export async function finishOpenBatches(finishing: BatchFinishing, force: boolean): Promise<number> {
  const { dataset, records: store, meter } = finishing;
  const open = await store.batches.openIntents(dataset.datasetCode, meter);
  let finished = 0;
  for (const intent of open) {
    if (
      intent.state === 'committed' ||
      intent.state === 'aborted' ||
      force ||
      finishing.now() - intent.createdAt > SETTLE_MS
    ) {
      if (intent.state === 'committed') await applyBatch(finishing, intent);
      else await abortBatch(finishing, intent);
      finished += 1;
    }
  }
  return finished;
}

export async function inParallel<T>(items: readonly T[], run: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await run(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_WRITES, items.length) }, worker));
}
