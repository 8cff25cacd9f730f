/** create: one new record with generated id and timestamps (docs/interface.md §4), at revision 1 (§18). */
import { recordDatasetWrite } from '../changes/change-log';
import { initialBlock, planIds } from '../idempotency/id-plan';
import { dataContext, type Operation } from '../operation/operation';
import { readParamMap } from '../operation/param-map';
import { newRecordId } from '../records/record-ids';
import { idInBlock } from '../storage/id-blocks';
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
      const item = await ports.records.create(
        dataset.datasetCode,
        id,
        newRecordFields(data, params, id, createdAt),
        capacity,
      );
      await recordDatasetWrite(data, [id]);
      return answerRecord(data, item);
    }
    // Under an Idempotency-Key the id comes from the request's remembered block, so a retry of an attempt that
    // wrote the record and then failed finds it instead of writing it again.
    const initial = initialBlock(data);
    const fields = newRecordFields(data, params, idInBlock(initial, 0), initial.time);
    const plan = await planIds(data, 1, initial);
    const writtenId = plan.written.get(0);
    if (writtenId !== undefined) {
      const stored = await ports.records.get(dataset.datasetCode, writtenId, capacity);
      if (stored) {
        // The attempt that wrote it may have stopped before saying so to custom SQL's copies.
        await recordDatasetWrite(data, [writtenId]);
        return answerRecord(data, stored);
      }
    }
    const id = idInBlock(plan.block, 0);
    const item = await ports.records.create(
      dataset.datasetCode,
      id,
      plan.block === initial ? fields : newRecordFields(data, params, id, plan.block.time),
      capacity,
    );
    await recordDatasetWrite(data, [id]);
    return answerRecord(data, item);
  },
};
