/**
 * The DynamoDB tables and indexes, defined once: the CDK stack and the local bootstrap both build their tables
 * from these definitions, so the deployed and the local tables cannot drift.
 *
 * Every item key of these tables is defined beside them, in `item-keys.ts`.
 *
 * Records: one partition per dataset (see `datasetPartitionKey`), sort key = the record id (a ULID, so the base
 * table's order is creation order). System attribute names start with `@`, outside the field-name alphabet,
 * so they can never collide with a dataset's fields.
 */
import { ID_ATTRIBUTE } from '../records/record-codec';

export interface KeyAttribute {
  name: string;
  type: 'S' | 'N' | 'B';
}

export interface IndexDefinition {
  indexName: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  projection: 'KEYS_ONLY' | 'ALL' | 'INCLUDE';
  /** `INCLUDE` only: the non-key attributes the index carries besides the keys. */
  nonKeyAttributes?: readonly string[];
}

export interface TableDefinition {
  /** Logical name: the CDK construct id and the environment variable's stem. */
  logicalName: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  globalSecondaryIndexes: readonly IndexDefinition[];
  /** Attribute that DynamoDB's TTL may use to tidy up; correctness never depends on it. */
  timeToLiveAttribute?: string;
  /** A change stream of the table's items, with these images (the records table's feeds the change log). */
  stream?: 'NEW_AND_OLD_IMAGES';
}

/** Record item attributes owned by the service. */
export const RecordAttr = {
  partitionKey: '@pk',
  /** The record's id (record-codec.ts names it: the record model reads its id from there). */
  sortKey: ID_ATTRIBUTE,
  /**
   * The record's revision (docs/interface.md §18): 1 when created, one more on each update that changes it.
   * Records written before revisions existed have none and are at revision 1 (`record-revisions.ts`).
   */
  revision: '@rev',
  /**
   * What the change stream needs to describe the record's latest write and cannot read from the images: who
   * wrote it, in which request, when (`record-revisions.ts`).
   */
  origin: '@ev',
  /** Prefix of a string field's lower-cased shadow (`@lc:name`), written only when it differs from the value. */
  lowerCasePrefix: '@lc:',
  /** Record-count checkpoint item: the weight of the count entries whose key is at most `counterThrough`. */
  counterCount: 'count',
  counterThrough: 'through',
  /**
   * Count-index partition (the dataset's partition key): a record created on its own carries it, so it is a
   * count entry of weight 1 keyed by its id; a bulk group's bookkeeping item carries it too (record-counter.ts).
   */
  countPartition: '@e',
  /** On a record written in bulk: the key of the bookkeeping item that counts it. */
  bulkGroup: '@bk',
  /** On a bookkeeping item: how many records it counts (claimed, or verified once settled). */
  bulkCount: '@n',
  /** On a bookkeeping item: present once the group's records are known to be written (by its writer or a check). */
  bulkDone: '@done',
  /** On a bookkeeping item: the least and greatest record id of the group. */
  bulkFirstId: '@lo',
  bulkLastId: '@hi',
  /**
   * On a record: the position of the change item its latest keyed write claimed (change-items.ts): a create, a
   * batch, or an update that reads first (one that may move an index key). A direct update leaves it as it is.
   */
  changePosition: '@cpos',
  /** On a record: the position of the change item its latest direct update claimed (operations/update.ts). */
  directPosition: '@dpos',
  /**
   * On a record: the batch update that holds it (its batch id) from before its commit point until its change is
   * written (storage/batch-update-store.ts); no other write lands on a record while it is held.
   */
  batchLock: '@lock',
} as const;

/** The sort key attribute of generic index `n` (1-based): an ordered encoding of one field's value and the id. */
export function indexAttribute(n: number): string {
  return `@ix${n}`;
}

/** Number of generic, overloaded indexes; each indexed field of a dataset is mapped to one of them. */
export const GENERIC_INDEX_COUNT = 5;

/** The generic index `n` (1-based): partition = the dataset's partition, sort = an ordered encoding of a value. */
export function genericIndex(n: number): IndexDefinition {
  return {
    indexName: `gsi${n}`,
    partitionKey: { name: RecordAttr.partitionKey, type: 'S' },
    sortKey: { name: indexAttribute(n), type: 'S' },
    projection: 'KEYS_ONLY',
  };
}

/**
 * The count index: sparse, small entries in key order per dataset. Records created one at a time and the
 * bookkeeping items of bulk writes are in it, nothing else, so the record counter reads the recent entries
 * (a few dozen bytes each) instead of whole records.
 */
export const COUNT_INDEX: IndexDefinition = {
  indexName: 'counted',
  partitionKey: { name: RecordAttr.countPartition, type: 'S' },
  sortKey: { name: RecordAttr.sortKey, type: 'S' },
  projection: 'INCLUDE',
  nonKeyAttributes: [RecordAttr.bulkCount, RecordAttr.bulkDone],
};

export const RECORDS_TABLE: TableDefinition = {
  logicalName: 'Records',
  partitionKey: { name: RecordAttr.partitionKey, type: 'S' },
  sortKey: { name: RecordAttr.sortKey, type: 'S' },
  globalSecondaryIndexes: [...Array.from({ length: GENERIC_INDEX_COUNT }, (_, i) => genericIndex(i + 1)), COUNT_INDEX],
  // Outside the field-name alphabet, so no dataset field can ever be taken for an expiry: only change items carry it.
  timeToLiveAttribute: '@expires',
  // Each record change, once, in order per item, with the item before and after: the change log's source
  // (docs/interface.md §18, shared/changes/change-stream.ts).
  stream: 'NEW_AND_OLD_IMAGES',
};

/** Change-log item attributes owned by the service. */
export const EventAttr = {
  partitionKey: '@pk',
  sortKey: '@sk',
  /** An event's place in its dataset's feed: a ULID of the moment the change log wrote it. */
  position: '@pos',
  /** When DynamoDB's TTL may remove the item (epoch seconds); readers decide by the retention themselves. */
  expires: '@expires',
} as const;

/**
 * The feed index: a dataset's events in the order the change log wrote them (`@pos`), whole (projection ALL), so
 * a page of the feed is one Query per dataset. Only events carry `@pos`, so nothing else is in it.
 */
export const FEED_INDEX: IndexDefinition = {
  indexName: 'feed',
  partitionKey: { name: EventAttr.partitionKey, type: 'S' },
  sortKey: { name: EventAttr.position, type: 'S' },
  projection: 'ALL',
};

/**
 * The change log (docs/interface.md §18): one item per record change, keyed by dataset, id and revision so that
 * writing it twice is harmless, kept for the configuration's retention; beside them, the webhook subscriptions'
 * delivery state (storage/webhook-state.ts). Written only by the change stream's consumer and the deliveries,
 * never on a request's path.
 */
export const EVENTS_TABLE: TableDefinition = {
  logicalName: 'Events',
  partitionKey: { name: EventAttr.partitionKey, type: 'S' },
  sortKey: { name: EventAttr.sortKey, type: 'S' },
  globalSecondaryIndexes: [FEED_INDEX],
  timeToLiveAttribute: EventAttr.expires,
};

/** The deployed configuration (applications, datasets, grants, queries), without secrets. */
export const CATALOG_TABLE: TableDefinition = {
  logicalName: 'Catalog',
  partitionKey: { name: 'pk', type: 'S' },
  globalSecondaryIndexes: [],
};

/** Per-application quota counters and concurrency leases. */
export const QUOTA_TABLE: TableDefinition = {
  logicalName: 'Quota',
  partitionKey: { name: 'pk', type: 'S' },
  globalSecondaryIndexes: [],
  timeToLiveAttribute: 'expiresAt',
};

export const TABLES = [RECORDS_TABLE, CATALOG_TABLE, QUOTA_TABLE, EVENTS_TABLE] as const;

/**
 * The physical table name of a definition in a deployed stage, e.g. `data-access-service-dev-records`: the stacks
 * name the tables so, and tools that read a deployment's tables (`das config plan --stage`) find them so.
 */
export function tableNameFor(stage: string, definition: TableDefinition): string {
  return `data-access-service-${stage}-${definition.logicalName.toLowerCase()}`;
}
