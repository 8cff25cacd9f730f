/**
 * A new record as create and batch create build it (docs/interface.md §4): the caller's fields checked against the dataset
 * and the grant (`writeFields`, `rowFilter`), with the derived index and lower-case attributes, both timestamps,
 * and its first revision with the write's origin (docs/interface.md §18).
 * Pure: it throws the contract's error before anything is written.
 */
import { assertCreateInScope, assertWritable, rowScope, visibleFields } from '../access/permissions';
import { type DataOperationContext, writeOrigin } from '../operation/operation';
import {
  itemSize,
  MAX_RECORD_BYTES,
  type RecordItem,
  recordTooLargeError,
  validateChanges,
} from '../records/record-codec';
import { formatTimestamp } from '../records/timestamps';
import { withDerivedAttributes } from '../storage/index-attributes';
import { firstRevisionAttributes } from '../storage/record-revisions';

/** The item attributes (besides the key) of a new record with id `id`, created at `createdAt` (ms). */
export function newRecordFields(
  context: DataOperationContext,
  params: Record<string, unknown>,
  id: string,
  createdAt: number,
): RecordItem {
  const { dataset, grant, caller, catalog } = context;
  const appCode = caller.application.appCode;
  const changes = validateChanges(dataset, params, 'create', visibleFields(grant));
  assertWritable(grant, changes, appCode, dataset.datasetCode);
  const timestamp = formatTimestamp(new Date(createdAt), catalog.timeZone);
  // Index keys and lower-cased shadows go into the same write as the fields they derive from.
  const derived = withDerivedAttributes(dataset, id, changes, 'create');
  const fields = { ...derived.set, gmt_create: timestamp, gmt_modified: timestamp };
  if (itemSize(fields) > MAX_RECORD_BYTES) throw recordTooLargeError();
  assertCreateInScope(rowScope(grant, dataset), { ...fields, id }, appCode, dataset.datasetCode);
  // Revision 1, and who wrote it: the change stream's event comes from this same write.
  return { ...fields, ...firstRevisionAttributes(writeOrigin(context, createdAt)) };
}
