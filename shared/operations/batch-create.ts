/**
 * batch create: 1 to 1000 new records in one request (docs/interface.md §12). Every record is checked as create checks
 * one before anything is written, and the first failure answers with its position (`paramList[3]: ...`). The
 * records are then written in chunks of 25 (record-batch-store.ts), each with the id and timestamps a create
 * would give it, and `data` is their ids in `paramList` order.
 *
 * Ids come from one block (id-blocks.ts): consecutive ULIDs of one time, so the batch's records sort in
 * `paramList` order and an Idempotency-Key retry finds what an interrupted attempt wrote with one range read.
 */
import {
  AccessDeniedError,
  ErrorCode,
  InvalidParameterError,
  ServiceError,
  ServiceUnavailableError,
} from '../contract/errors';
import { initialBlock, planIds } from '../idempotency/id-plan';
import { dataContext, type Operation } from '../operation/operation';
import type { RecordItem } from '../records/record-codec';
import { BatchIncomplete } from '../storage/batch-items';
import { idInBlock } from '../storage/id-blocks';
import type { NewRecord } from '../storage/record-batch-store';
import { writeCountedBatch } from './batch-bookkeeping';
import { newRecordFields } from './new-record';

export const MAX_BATCH_RECORDS = 1000;

/** `paramList`: an array of 1 to 1000 JSON objects (docs/interface.md §12). */
export function readParamList(body: Record<string, unknown>): Record<string, unknown>[] {
  const list = body.paramList;
  if (list === undefined || list === null) {
    throw new InvalidParameterError('paramList is required: an array of 1 to 1000 records');
  }
  if (!Array.isArray(list)) throw new InvalidParameterError('paramList must be an array of 1 to 1000 records');
  if (list.length === 0) throw new InvalidParameterError('paramList is empty: send 1 to 1000 records');
  if (list.length > MAX_BATCH_RECORDS) {
    throw new InvalidParameterError(
      `paramList has ${list.length} records; at most ${MAX_BATCH_RECORDS} per request: split the batch`,
    );
  }
  list.forEach((record, position) => {
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new InvalidParameterError(`paramList[${position}]: a record must be a JSON object`);
    }
  });
  return list as Record<string, unknown>[];
}

/** The same error, its message prefixed with the record's position. */
function atPosition(error: unknown, position: number): unknown {
  if (!(error instanceof ServiceError)) return error;
  const message = `paramList[${position}]: ${error.message}`;
  if (error.code === ErrorCode.InvalidParameter) return new InvalidParameterError(message, { cause: error });
  if (error.code === ErrorCode.AccessDenied) return new AccessDeniedError(message);
  return new ServiceError(error.code, message, { cause: error });
}

export const batchCreateOperation: Operation = {
  name: 'batch-create',
  async run(context, body) {
    const data = dataContext(context);
    const list = readParamList(body);
    const initial = initialBlock(data);
    const build = (position: number, id: string, createdAt: number): RecordItem => {
      try {
        return newRecordFields(data, list[position] as Record<string, unknown>, id, createdAt);
      } catch (error) {
        throw atPosition(error, position);
      }
    };
    // Every record is checked before anything is read or written.
    const checked = list.map((_, position) => build(position, idInBlock(initial, position), initial.time));
    const plan = await planIds(data, list.length, initial);
    const ids: string[] = [];
    const records: NewRecord[] = [];
    list.forEach((_, position) => {
      const writtenId = plan.written.get(position);
      if (writtenId !== undefined) {
        ids.push(writtenId);
        return;
      }
      const id = idInBlock(plan.block, position);
      ids.push(id);
      const fields = plan.block === initial ? (checked[position] as RecordItem) : build(position, id, plan.block.time);
      records.push({ id, fields });
    });
    try {
      await writeCountedBatch(data, records, (marked) =>
        data.ports.recordBatches.putNew(data.dataset.datasetCode, marked, data.telemetry.capacity, {
          ...(data.deadline === undefined ? {} : { deadline: data.deadline }),
          now: data.now,
        }),
      );
    } catch (error) {
      if (!(error instanceof BatchIncomplete)) throw error;
      // Some records may be written (docs/interface.md §12): the key's retry writes the others, none twice.
      throw new ServiceUnavailableError(
        'the data store is busy and took only part of the batch; send it again with the same Idempotency-Key ' +
          'to complete it without creating any record twice',
        { cause: error },
      );
    }
    return ids;
  },
};
