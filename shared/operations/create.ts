/**
 * create: one new record with generated id and timestamps (docs/interface.md §4), at revision 1 (§18). The record
 * store claims its change item first (storage/change-items.ts): per-value totals and custom SQL's loaded copies
 * learn of it there.
 */
import { initialBlock, planIds } from '../idempotency/id-plan';
import { type DataOperationContext, dataContext, type Operation } from '../operation/operation';
import { readParamMap } from '../operation/param-map';
import type { RecordItem } from '../records/record-codec';
import { newRecordId } from '../records/record-ids';
import { idInBlock } from '../storage/id-blocks';
import { slotCountKeys } from '../storage/index-attributes';
import { newRecordFields } from './new-record';
import { answerRecord } from './record-answer';

export const createOperation: Operation = {
  name: 'create',
  async run(context, body) {
    const data = dataContext(context);
    const { dataset, ports, telemetry, now } = data;
    const capacity = telemetry.capacity;
    const params = readParamMap(body);
    if (!data.attempt) {
      const createdAt = now();
      // The id carries the creation time, so gmt_create and the id's order agree.
      const id = newRecordId(createdAt);
      return answerRecord(data, await write(data, id, newRecordFields(data, params, id, createdAt)));
    }
    // Under an Idempotency-Key the id comes from the request's remembered block, so a retry of an attempt that
    // wrote the record and then failed finds it instead of writing it again.
    const initial = initialBlock(data);
    const fields = newRecordFields(data, params, idInBlock(initial, 0), initial.time);
    const plan = await planIds(data, 1, initial);
    const writtenId = plan.written.get(0);
    if (writtenId !== undefined) {
      const stored = await ports.records.get(dataset.datasetCode, writtenId, capacity);
      if (stored) return answerRecord(data, stored);
    }
    const id = idInBlock(plan.block, 0);
    const item = await write(
      data,
      id,
      plan.block === initial ? fields : newRecordFields(data, params, id, plan.block.time),
    );
    return answerRecord(data, item);
  },
};

/** Write a new record, its change item claimed first with its count key in each index slot. */
function write(data: DataOperationContext, id: string, fields: RecordItem): Promise<RecordItem> {
  return data.ports.records.create(data.dataset.datasetCode, id, fields, data.telemetry.capacity, {
    values: slotCountKeys(data.dataset, fields, id),
    now: data.now,
  });
}
