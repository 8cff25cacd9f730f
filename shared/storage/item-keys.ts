/**
 * Every item key of every table, defined once beside the table definitions (`table-definitions.ts`): a
 * record's key, a dataset's bookkeeping items, the catalog's item, an application's quota item and a
 * signature nonce. No other module spells a key, so a change of key design (write sharding of a dataset, quota
 * shares) is made here.
 */
import { CATALOG_TABLE, QUOTA_TABLE, RecordAttr } from './table-definitions';

/**
 * The partition that holds a dataset's records. Computed here and nowhere else, so that write sharding
 * (several partitions per dataset) can come later without touching callers.
 */
export function datasetPartitionKey(datasetCode: string): string {
  return `ds#${datasetCode}`;
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
/** Prefix of a batch change item's values in one index slot (`change-slot#<slot>#<position>`). */
export const CHANGE_SLOT_PREFIX = 'change-slot#';

/** The key of one change item: a write of record(s) of the dataset, at `position` (a ULID of the write's time). */
export function datasetChangeKey(datasetCode: string, position: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `${CHANGE_PREFIX}${position}`,
  };
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

/** Prefix of a slot's per-value count pages (`value-page#<slot>#<lowest count key>`). */
export const VALUE_PAGE_PREFIX = 'value-page#';

/** The head of an index slot's per-value totals: how far they are folded, who folds them now. */
export function valueCountHeadKey(datasetCode: string, slot: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `value-head#${slot}`,
  };
}

/** The list of an index slot's count pages (their lowest keys), which folds find pages by. */
export function valuePageListKey(datasetCode: string, slot: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: `value-pages#${slot}`,
  };
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

/** The catalog table's one item: the current deployed configuration. */
export function catalogKey(): Record<string, string> {
  return { [CATALOG_TABLE.partitionKey.name]: 'catalog#current' };
}

/**
 * The partition key value of an application's quota item (counters and concurrency leases), or of its share
 * `share` when its limits spread it over several items (quota/shares.ts); share 0 is the plain item.
 */
export function quotaPartitionKey(appCode: string, share = 0): string {
  return share === 0 ? `app#${appCode}` : `app#${appCode}#${share}`;
}

/** The key of an application's quota item, or of its share `share`. */
export function quotaKey(appCode: string, share = 0): Record<string, string> {
  return { [QUOTA_TABLE.partitionKey.name]: quotaPartitionKey(appCode, share) };
}

/**
 * The key of a signature-version-2 nonce claimed by an application (docs/interface.md §16), in the quota table:
 * its own partition, so a claim is one conditional PutItem that a second claim of the same nonce fails.
 */
export function nonceKey(appCode: string, nonce: string): Record<string, string> {
  return { [QUOTA_TABLE.partitionKey.name]: `nonce#${appCode}#${nonce}` };
}
