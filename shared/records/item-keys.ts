/**
 * Every item key of every table, defined once beside the table definitions (`table-definitions.ts`): a
 * record's key, a dataset's bookkeeping items, the catalog's item and an application's quota item. No other
 * module spells a key, so a change of key design (write sharding of a dataset, quota shares) is made here.
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
 * The item whose `version` every write of a dataset read by custom SQL bumps: loaded copies of the dataset
 * (custom SQL's cache) are reused while it is unchanged.
 */
export function datasetVersionKey(datasetCode: string): Record<string, string> {
  return { [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode), [RecordAttr.sortKey]: 'version' };
}

/**
 * The key of a dataset's record-count checkpoint. It lives in a partition of its own, so that it never shows
 * up in a read of the dataset's records.
 */
export function datasetCounterKey(datasetCode: string): Record<string, string> {
  return {
    [RecordAttr.partitionKey]: datasetMetaPartitionKey(datasetCode),
    [RecordAttr.sortKey]: 'record-count',
  };
}

/** The catalog table's one item: the current deployed configuration. */
export function catalogKey(): Record<string, string> {
  return { [CATALOG_TABLE.partitionKey.name]: 'catalog#current' };
}

/** The partition key value of an application's quota item (counters and concurrency leases). */
export function quotaPartitionKey(appCode: string): string {
  return `app#${appCode}`;
}

/** The key of an application's quota item. */
export function quotaKey(appCode: string): Record<string, string> {
  return { [QUOTA_TABLE.partitionKey.name]: quotaPartitionKey(appCode) };
}
