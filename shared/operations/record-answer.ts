/**
 * How get-one, create and update answer one record: as the caller's grant shows it (readFields), with the
 * record's revision told to the transport, which answers it as `ETag: "<revision>"` (docs/interface.md §18).
 */
import { visibleFields } from '../access/permissions';
import type { DataOperationContext } from '../operation/operation';
import { type ApiRecord, type RecordItem, toApiRecord } from '../records/record-codec';
import { revisionOf } from '../storage/record-revisions';

export function answerRecord(context: DataOperationContext, item: RecordItem): ApiRecord {
  context.answerRevision?.(revisionOf(item));
  return toApiRecord(context.dataset, item, visibleFields(context.grant));
}
