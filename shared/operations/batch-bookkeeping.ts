/**
 * What a batch of new records keeps up to date besides the records themselves, once per batch and never per
 * record, so a batch costs its records' writes plus a constant:
 *
 * - its change item (storage/change-items.ts), claimed before any record is written: one item naming the
 *   records, and one per index slot with their values (per-value totals, custom SQL's loaded copies);
 * - list totals: the batch is one bulk group of the record counter (record-counter.ts, `beginBulkCreate`),
 *   keyed by the change item's position: one small bookkeeping item before the writes, marked done after them;
 *   every record carries the group's mark and no count entry of its own.
 * If the writes fail part-way, the records that exist are found at once (one consistent read of the batch's id
 * range): the change item says which they are and the group is settled with their number, so totals stay exact
 * without waiting for a check; a retry writes the missing records as a batch of their own.
 */
import type { DataOperationContext } from '../operation/operation';
import { claimChange } from '../storage/change-items';
import { slotCountKeys } from '../storage/index-attributes';
import type { NewRecord } from '../storage/record-batch-store';
import { beginBulkCreate } from '../storage/record-counter';
import { RecordAttr } from '../storage/table-definitions';

/** Write `records` (all new) through `write`, claimed and counted as one group. */
export async function writeCountedBatch(
  context: DataOperationContext,
  records: readonly NewRecord[],
  write: (records: readonly NewRecord[]) => Promise<void>,
): Promise<void> {
  if (records.length === 0) return;
  const capacity = context.telemetry.capacity;
  const datasetCode = context.dataset.datasetCode;
  const counts = context.ports.bookkeeping;
  const changes = context.ports.records.changes;
  const sorted = [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const ids = sorted.map((record) => record.id);
  const values: Record<string, string[]> = {};
  for (const { id, fields } of sorted) {
    for (const [slot, key] of Object.entries(slotCountKeys(context.dataset, fields, id))) {
      if (!values[slot]) values[slot] = [];
      values[slot].push(key);
    }
  }
  const position = await claimChange(changes, datasetCode, { kind: 'batch', ids, values }, context.now, capacity);
  const firstId = ids[0] as string;
  const lastId = ids[ids.length - 1] as string;
  const group = await beginBulkCreate(
    counts,
    datasetCode,
    { count: records.length, firstId, lastId, now: context.now(), entryKey: position },
    capacity,
  );
  const marked = records.map(({ id, fields }) => ({
    id,
    fields: { ...fields, ...group.recordAttributes, [RecordAttr.changePosition]: position },
  }));
  try {
    await write(marked);
  } catch (error) {
    try {
      const landed = await counts.bulkGroupRecordIds(datasetCode, { entryKey: position, firstId, lastId }, capacity);
      await changes.markLanded(datasetCode, position, landed, capacity);
      const item = { entryKey: group.entryKey, count: records.length, firstId, lastId, done: false };
      await counts.settleBulkGroup(datasetCode, { ...item, count: landed.length }, capacity);
    } catch (settleError) {
      // The change item and the group stay open: the checks of totals settle them (value-counter.ts,
      // record-counter.ts rule 3).
      context.telemetry.detail(
        'bulkGroupOpen',
        settleError instanceof Error ? `${settleError.name}: ${settleError.message}` : 'unknown',
      );
    }
    throw error;
  }
  await group.complete(capacity);
}
