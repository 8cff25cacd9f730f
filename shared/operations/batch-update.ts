/**
 * Batch update (docs/interface.md §21, docs/batch-update.md): the same fields changed on 1 to 1000 records, all or
 * nothing, also when the process dies midway or another write comes between. DynamoDB transactions hold 100 items
 * and the embedded store has none, so the batch is made of single-item conditional writes around one commit point:
 *
 * 1. **Check** every record (one consistent batch read): it exists and is inside the caller's rows (else 2002
 *    naming it), and stays inside them with the change (1006 naming it). Records the change would leave as they
 *    are are not written (no revision, no event).
 * 2. **Intent**: one item in the dataset's meta partition says which records change, how, by whom, `pending`.
 * 3. **Hold** each record: a conditional write of `@lock` (the batch id) while it is still at the revision checked
 *    and no other batch holds it. Every other write of a record refuses a held one. A hold that fails (a write came
 *    between, another batch holds it) aborts the batch: `aborted`, holds released, 4001 with `Retry-After`.
 * 4. **Commit point**: the intent moves from `pending` to `committed` (conditional). From here the batch is applied
 *    whole, by whoever gets there: its writer, an update that meets a held record (update.ts), the next batch
 *    update of the dataset, or the fold its commit asks for a few seconds on (batch-finish.ts).
 * 5. **Apply** each record: its change item, then one write of the fields that releases the hold (conditional on
 *    it), so each record gets one revision and one change event, once. Then the intent is deleted.
 *
 * A pending batch older than the longest invocation (`SETTLE_MS`) has no writer left: a finisher aborts it.
 */

import { ulid } from 'ulid';
import { assertCreateInScope, assertWritable, rowInScope, rowScope, visibleFields } from '../access/permissions';
import {
  AccessDeniedError,
  DataNotFoundError,
  ErrorCode,
  InvalidParameterError,
  RateLimitedError,
  ServiceError,
} from '../contract/errors';
import { type DataOperationContext, writeOrigin } from '../operation/operation';
import {
  effectiveChanges,
  isEmptyChange,
  type RecordChanges,
  type RecordItem,
  recordTooLargeError,
  validateChanges,
} from '../records/record-codec';
import { normalizeRecordId } from '../records/record-ids';
import type { BatchIntent } from '../storage/batch-update-store';
import { revisionOf } from '../storage/record-revisions';
import { RecordAttr } from '../storage/table-definitions';
import { abortBatch, applyBatch, finishingOf, finishOpenBatches, inParallel } from './batch-finish';

export const MAX_BATCH_UPDATE_IDS = 1000;
/** A record the batch would make larger than this (as JSON, below DynamoDB's 400 KB with its derived attributes) is refused. */
const MAX_RECORD_BYTES = 380_000;

export interface BatchUpdateAnswer {
  ids: string[];
  total: number;
}

/** Whether `paramMap.id` asks for a batch update: an array, or a text holding a comma. */
export function isBatchId(id: unknown): boolean {
  return Array.isArray(id) || (typeof id === 'string' && id.includes(','));
}

/** `paramMap.id` of a batch update: 1 to 1000 ids, no duplicates. */
export function readBatchIds(id: unknown): string[] {
  const parts = Array.isArray(id)
    ? id
    : String(id)
        .split(',')
        .map((part) => part.trim());
  if (parts.length === 0) throw new InvalidParameterError('paramMap.id is an empty list: send 1 to 1000 ids');
  if (parts.length > MAX_BATCH_UPDATE_IDS) {
    throw new InvalidParameterError(
      `paramMap.id lists ${parts.length} ids; a batch update changes at most ${MAX_BATCH_UPDATE_IDS}: split it`,
    );
  }
  const ids: string[] = [];
  const seen = new Set<string>();
  parts.forEach((part, index) => {
    const normal = normalizeRecordId(part);
    if (normal === undefined) {
      throw new InvalidParameterError(
        `paramMap.id[${index}] must be a non-empty string of at most 128 characters, or a number`,
      );
    }
    if (seen.has(normal)) throw new InvalidParameterError(`paramMap.id lists '${normal}' twice: list each id once`);
    seen.add(normal);
    ids.push(normal);
  });
  return ids;
}

/** The same error, its message prefixed with the record it is about. */
function forRecord(error: unknown, id: string): unknown {
  if (!(error instanceof ServiceError)) return error;
  const message = `record '${id}': ${error.message}`;
  if (error.code === ErrorCode.InvalidParameter) return new InvalidParameterError(message, { cause: error });
  if (error.code === ErrorCode.AccessDenied) return new AccessDeniedError(message);
  return new ServiceError(error.code, message, { cause: error });
}

function busy(message: string): RateLimitedError {
  return new RateLimitedError(`${message}; nothing was changed: send the batch again in a second`, 1);
}

export async function runBatchUpdate(
  data: DataOperationContext,
  params: Record<string, unknown>,
  ifMatch: string | undefined,
): Promise<BatchUpdateAnswer> {
  const { dataset, grant, caller, ports, telemetry } = data;
  const appCode = caller.application.appCode;
  const ids = readBatchIds(params.id);
  if (ifMatch !== undefined) {
    throw new InvalidParameterError(
      'If-Match names the revision of one record: a batch update (paramMap.id a list) cannot carry it; update the records one by one to make each conditional',
    );
  }
  const { id: _ids, ...fields } = params;
  const sent = validateChanges(dataset, fields, 'update', visibleFields(grant));
  if (isEmptyChange(sent)) {
    throw new InvalidParameterError('nothing to update: send at least one dataset field besides id');
  }
  assertWritable(grant, sent, appCode, dataset.datasetCode);
  const meter = telemetry.capacity;
  const batches = ports.records.batches;
  await finishOpenBatches(finishingOf(data), false);

  // 1. Check every record before anything is written.
  const stored = await batches.readRecords(dataset.datasetCode, ids, meter);
  const scope = rowScope(grant, dataset);
  const changing: string[] = [];
  for (const id of ids) {
    const record = stored.get(id);
    if (!record || !rowInScope(scope, record)) {
      throw new DataNotFoundError(`record '${id}' not found in dataset '${dataset.datasetCode}'`);
    }
    const after = applied(record, sent);
    try {
      assertCreateInScope(scope, after, appCode, dataset.datasetCode);
    } catch (error) {
      throw forRecord(error, id);
    }
    // A committed batch must be applicable to every record: none may grow past what the store holds.
    if (Buffer.byteLength(JSON.stringify(after)) > MAX_RECORD_BYTES) throw forRecord(recordTooLargeError(), id);
    if (!isEmptyChange(effectiveChanges(record, sent))) changing.push(id);
  }
  if (changing.length === 0) return { ids, total: ids.length };
  const held = changing.find((id) => stored.get(id)?.[RecordAttr.batchLock] !== undefined);
  if (held) throw busy(`record '${held}' is being changed by another batch update`);

  // 2. The intent, 3. the holds.
  const startedAt = data.now();
  const intent: BatchIntent = {
    batchId: ulid(startedAt),
    state: 'pending',
    ids: changing,
    set: sent.set,
    remove: sent.remove,
    origin: writeOrigin(data, startedAt),
    createdAt: startedAt,
  };
  await batches.putIntent(dataset.datasetCode, intent, meter);
  const refused: string[] = [];
  await inParallel(changing, async (id) => {
    const ok = await batches.hold(dataset.datasetCode, id, intent.batchId, revisionOf(stored.get(id) ?? {}), meter);
    if (!ok) refused.push(id);
  });
  if (refused.length > 0) {
    await abortBatch(finishingOf(data), intent);
    throw busy(`record '${refused[0]}' was changed by another request while the batch was being applied`);
  }

  // 4. The commit point.
  if (!(await batches.moveState(dataset.datasetCode, intent.batchId, 'pending', 'committed', meter))) {
    // Only a finisher that took this batch for one without a writer aborts it.
    throw busy('the batch took too long to hold its records');
  }
  // 5. Apply.
  await applyBatch(finishingOf(data), { ...intent, state: 'committed' }, stored);
  return { ids, total: ids.length };
}

function applied(record: RecordItem, changes: RecordChanges): RecordItem {
  const after: RecordItem = { ...record, ...changes.set };
  for (const name of changes.remove) delete after[name];
  return after;
}
