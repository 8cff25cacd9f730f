/**
 * What a batch of new records keeps up to date besides the records themselves, once per batch and never per
 * record, so a batch costs its records' writes plus a constant:
 *
 * - list totals: the batch is one bulk group of the record counter (record-counter.ts, `beginBulkCreate`): one
 *   small bookkeeping item before the writes, marked done after them; every record carries the group's mark and
 *   no count entry of its own. If the writes fail part-way, the group is settled at once with the number of its
 *   records that exist (one consistent count of its id range), so totals stay exact without waiting for the
 *   counter to check it; a retry writes the missing records as a group of their own.
 * Custom SQL's copies are told by the caller, once per batch, with `recordDatasetWrite` (changes/change-log.ts).
 */
import type { DataOperationContext } from '../operation/operation';
import type { NewRecord } from '../storage/record-batch-store';
import { beginBulkCreate } from '../storage/record-counter';

/** Write `records` (all new) through `write`, counted as one group. */
export async function writeCountedBatch(
  context: DataOperationContext,
  records: readonly NewRecord[],
  write: (records: readonly NewRecord[]) => Promise<void>,
): Promise<void> {
  if (records.length === 0) return;
  const capacity = context.telemetry.capacity;
  const datasetCode = context.dataset.datasetCode;
  const counts = context.ports.bookkeeping;
  const ids = records.map((record) => record.id);
  const firstId = ids.reduce((a, b) => (b < a ? b : a));
  const lastId = ids.reduce((a, b) => (b > a ? b : a));
  const group = await beginBulkCreate(
    counts,
    datasetCode,
    { count: records.length, firstId, lastId, now: context.now() },
    capacity,
  );
  const marked = records.map(({ id, fields }) => ({ id, fields: { ...fields, ...group.recordAttributes } }));
  try {
    await write(marked);
  } catch (error) {
    try {
      const item = { entryKey: group.entryKey, count: records.length, firstId, lastId, done: false };
      const found = await counts.countBulkGroupRecords(datasetCode, item, capacity);
      await counts.settleBulkGroup(datasetCode, { ...item, count: found }, capacity);
    } catch (settleError) {
      // The group stays open: the counter checks it once it is settled (record-counter.ts, rule 3).
      context.telemetry.detail(
        'bulkGroupOpen',
        settleError instanceof Error ? `${settleError.name}: ${settleError.message}` : 'unknown',
      );
    }
    throw error;
  }
  await group.complete(capacity);
}
