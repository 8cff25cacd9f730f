/**
 * Every item key of every table, defined once beside the table definitions (`table-definitions.ts`): a
 * record's key, a dataset's bookkeeping items, the catalog's item, an application's quota item, a signature
 * nonce, and the change log's events and webhook delivery state. No other module spells a key, so a change of key design (write sharding of a dataset, quota
 * shares) is made here.
 */
import { CATALOG_TABLE, EventAttr, QUOTA_TABLE, RecordAttr } from './table-definitions';

/**
 * The partition that holds a dataset's records. Computed here and nowhere else, so that write sharding
 * (several partitions per dataset) can come later without touching callers.
 */
export function datasetPartitionKey(datasetCode: string): string {
  return `${DATASET_PARTITION_PREFIX}${datasetCode}`;
}

const DATASET_PARTITION_PREFIX = 'ds#';

/** The dataset whose records a partition holds; `undefined` for any other partition (bookkeeping, idempotency). */
export function datasetOfPartition(partitionKey: string): string | undefined {
  return partitionKey.startsWith(DATASET_PARTITION_PREFIX)
    ? partitionKey.slice(DATASET_PARTITION_PREFIX.length)
    : undefined;
}

/** The key of one record: its dataset's partition, and its id as the sort key. */
export function recordKey(datasetCode: string, id: string): Record<string, string> {
  return { [RecordAttr.partitionKey]: datasetPartitionKey(datasetCode), [RecordAttr.sortKey]: id };
}

/** Bookkeeping items of a dataset live in their own partition, never among its records. */
export const DATASET_META_PREFIX = 'meta#';

function datasetMetaPartitionKey(datasetCode: string): string {
  return `${DATASET_META_PREFIX}${datasetPartitionKey(datasetCode)}`;
}

/**
 * The key of a dataset's record-count checkpoint. It lives in a partition of its own, so that it never shows
 * up in a read of the dataset's records. (`record-count` was the checkpoint of records by id, before the count
 * index, and `version` the former key of custom SQL's cache; both are left alone.)
 */
export function datasetCounterKey(datasetCode: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: 'entry-count',
  };
}

/** The key of a bulk group's bookkeeping item: in the dataset's meta partition, sort key = its entry key. */
export function bulkGroupKey(datasetCode: string, entryKey: string): Record<string, string> {
  return { [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode), [RecordAttr.sortKey]: entryKey };
}

/** Prefix of the sort keys of change items (`change#<position>`, change-items.ts), in the dataset's meta partition. */
export const CHANGE_PREFIX = 'change#';
/** Prefix of a batch update's intent (`batch-update#<batch id>`, operations/batch-update.ts). */
export const BATCH_UPDATE_PREFIX = 'batch-update#';

/** The key of a batch update's intent item. */
export function batchUpdateKey(datasetCode: string, batchId: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `${BATCH_UPDATE_PREFIX}${batchId}`,
  };
}

/** Prefix of a batch change item's values in one index slot (`change-slot#<slot>#<position>`). */
export const CHANGE_SLOT_PREFIX = 'change-slot#';

/** The key of one change item: a write of record(s) of the dataset, at `position` (a ULID of the write's time). */
export function datasetChangeKey(datasetCode: string, position: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `${CHANGE_PREFIX}${position}`,
  };
}

/**
 * The dataset and position of a change item from its key attributes (a stream record's keys), or undefined for
 * any other item.
 */
export function changeItemOfKey(
  partitionKey: string | undefined,
  sortKey: string | undefined,
): { datasetCode: string; position: string } | undefined {
  if (!partitionKey?.startsWith(DATASET_META_PREFIX) || !sortKey?.startsWith(CHANGE_PREFIX)) return undefined;
  const datasetCode = datasetOfPartition(partitionKey.slice(DATASET_META_PREFIX.length));
  return datasetCode === undefined ? undefined : { datasetCode, position: sortKey.slice(CHANGE_PREFIX.length) };
}

/** The dataset of a batch update's intent from its key attributes (a stream record's keys), or undefined. */
export function batchIntentOfKey(partitionKey: string | undefined, sortKey: string | undefined): string | undefined {
  if (!partitionKey?.startsWith(DATASET_META_PREFIX) || !sortKey?.startsWith(BATCH_UPDATE_PREFIX)) return undefined;
  return datasetOfPartition(partitionKey.slice(DATASET_META_PREFIX.length));
}

/** The key of a batch change item's values in index slot `slot` (a `countSlotKey`). */
export function datasetChangeSlotKey(datasetCode: string, slot: string, position: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `${CHANGE_SLOT_PREFIX}${slot}#${position}`,
  };
}

/** The item saying through which position a dataset's change items are checked (value-counter.ts). */
export function claimsCheckedKey(datasetCode: string): Record<string, string> {
  return { [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode), [RecordAttr.sortKey]: 'changes-checked' };
}

/**
 * The item saying through which position a dataset's change items may be gone (change-compaction.ts), and the
 * position proposed next with the time it was proposed.
 */
export function changesCompactedKey(datasetCode: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: 'changes-compacted',
  };
}

/** Prefix of a slot's per-value count pages (`value-page#<slot>#<lowest count key>`). */
export const VALUE_PAGE_PREFIX = 'value-page#';

/** The head of an index slot's per-value totals: how far they are folded, who folds them now. */
export function valueCountHeadKey(datasetCode: string, slot: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `value-head#${slot}`,
  };
}

/**
 * The former single list of an index slot's count pages (their lowest keys): read, and replaced by list parts
 * (`valuePageListPartPrefix`), where a slot still has it.
 */
export function valuePageListKey(datasetCode: string, slot: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `value-pages#${slot}`,
  };
}

/**
 * The sort key prefix of the parts of an index slot's page list (`value-list#<slot>#<first lowest key>`): each
 * part lists the lowest keys of the count pages from its own first up to the next part's first.
 */
export function valuePageListPartPrefix(slot: string): string {
  return `value-list#${slot}#`;
}

/** The sort key prefix of an index slot's count pages. */
export function valuePagePrefix(slot: string): string {
  return `${VALUE_PAGE_PREFIX}${slot}#`;
}

/** The key of the count page of index slot `slot` whose lowest count key is `lowest` (the first page: ''). */
export function valuePageKey(datasetCode: string, slot: string, lowest: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `${valuePagePrefix(slot)}${lowest}`,
  };
}

/** The meta partition of a dataset (bookkeeping items: count checkpoint, bulk groups, change items, value counts). */
export function datasetMetaPartition(datasetCode: string): string {
  return datasetMetaPartitionKey(datasetCode);
}

/**
 * The item that remembers a request sent with an `Idempotency-Key` (docs/interface.md §13). Keys are scoped to
 * the application; the partition is the key's own, so these items spread over the table and never appear in a
 * read of a dataset's records or bookkeeping.
 */
export function idempotencyItemKey(appCode: string, idempotencyKey: string): Record<string, string> {
  return { [RecordAttr.partitionKey]: `idem#${appCode}#${idempotencyKey}`, [RecordAttr.sortKey]: 'request' };
}

/** The catalog table's main item: the configuration applied last, and its datasets' index registry. */
export function catalogKey(): Record<string, string> {
  return { [CATALOG_TABLE.partitionKey.name]: 'catalog#current' };
}

/** An index job's definition (shared/indexing/), in the catalog table beside the catalog it works for. */
export function indexJobKey(jobId: string): Record<string, string> {
  return { [CATALOG_TABLE.partitionKey.name]: `indexjob#${jobId}` };
}

/** How far one segment of an index job has read: where to resume after a crash or a redeploy. */
export function indexJobSegmentKey(jobId: string, datasetCode: string, segment: number): Record<string, string> {
  return { [CATALOG_TABLE.partitionKey.name]: `indexjob#${jobId}#${datasetCode}#${segment}` };
}

/** How many records of a dataset an index job has processed, all its segments together. */
export function indexJobProgressKey(jobId: string, datasetCode: string): Record<string, string> {
  return { [CATALOG_TABLE.partitionKey.name]: `indexjob#${jobId}#${datasetCode}` };
}

/** The partition key value of an application's quota item (window counters and slot leases). */
export function quotaPartitionKey(appCode: string): string {
  return `app#${appCode}`;
}

/** The key of an application's quota item. */
export function quotaKey(appCode: string): Record<string, string> {
  return { [QUOTA_TABLE.partitionKey.name]: quotaPartitionKey(appCode) };
}

/**
 * The key of a signature-version-2 nonce claimed by an application (docs/interface.md §16), in the quota table:
 * its own partition, so a claim is one conditional PutItem that a second claim of the same nonce fails.
 */
export function nonceKey(appCode: string, nonce: string): Record<string, string> {
  return { [QUOTA_TABLE.partitionKey.name]: `nonce#${appCode}#${nonce}` };
}

/** The partition of a dataset's change events in the events table. */
export function eventPartition(datasetCode: string): string {
  return `ev#${datasetCode}`;
}

/** The revision as it sorts in a key: ten digits, so revision 10 sorts after 9. */
function revisionKey(revision: number): string {
  return String(revision).padStart(10, '0');
}

/**
 * The key of one record change in the events table: its dataset's partition, and the record's id and revision,
 * so the change log can write an event any number of times and keep one. `part` > 0: a piece of an event too
 * large for one item (event-store.ts).
 */
export function eventKey(datasetCode: string, id: string, revision: number, part = 0): Record<string, string> {
  const sortKey = `${id}#${revisionKey(revision)}`;
  return {
    [EventAttr.partitionKey]: eventPartition(datasetCode),
    [EventAttr.sortKey]: part === 0 ? sortKey : `${sortKey}#${part}`,
  };
}

/** A webhook subscription's partition in the events table: its delivery state (storage/webhook-state.ts). */
export function webhookPartition(subscriptionId: string): string {
  return `hook#${subscriptionId}`;
}

/** The key of a subscription's state item (disabled by a 410, its last failure). */
export function webhookStateKey(subscriptionId: string): Record<string, string> {
  return { [EventAttr.partitionKey]: webhookPartition(subscriptionId), [EventAttr.sortKey]: 'state' };
}

/** Sort key prefixes of a subscription's items: an event being retried, an event parked after its last try. */
export const WEBHOOK_ATTEMPT_PREFIX = 'try#';
export const WEBHOOK_PARKED_PREFIX = 'parked#';

/** The key of the retry state of one event for one subscription (written only when a delivery fails). */
export function webhookAttemptKey(subscriptionId: string, eventId: string): Record<string, string> {
  return {
    [EventAttr.partitionKey]: webhookPartition(subscriptionId),
    [EventAttr.sortKey]: `${WEBHOOK_ATTEMPT_PREFIX}${eventId}`,
  };
}

/** The key of an event parked for a subscription, in the order the events were written (their position). */
export function webhookParkedKey(subscriptionId: string, position: string, eventId: string): Record<string, string> {
  return {
    [EventAttr.partitionKey]: webhookPartition(subscriptionId),
    [EventAttr.sortKey]: `${WEBHOOK_PARKED_PREFIX}${position}#${eventId}`,
  };
}

/** Local runs: the partition of the queue of deliveries that stands in for SQS (storage/local-delivery-queue.ts). */
export const LOCAL_DELIVERY_PARTITION = 'local#deliveries';

/** Local runs: how far a change stream was read, per stream and shard (changes/stream-poller.ts). */
export function streamCheckpointKey(stream: string, shard: string): Record<string, string> {
  return { [EventAttr.partitionKey]: `local#stream#${stream}`, [EventAttr.sortKey]: shard };
}
