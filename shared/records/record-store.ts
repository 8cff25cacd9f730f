/**
 * The record store: DynamoDB calls for records, each asking for its consumed capacity, which goes to the
 * request's meter. Writes are single conditional calls (no read-modify-write), so concurrent updates of
 * different fields of one record all survive.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { ChangeLog } from './change-log';
import { CountStore } from './count-store';
import type { CompiledExpression } from './filter-expression';
import type { RecordChanges, RecordItem } from './record-codec';
import { recordTooLargeError } from './record-codec';
import { countedRecordAttributes } from './record-counter';
import { datasetPartitionKey, RecordAttr } from './table-definitions';
import type { KeyInterval } from './value-encoding';

/** A position to continue a read from (DynamoDB's LastEvaluatedKey). */
export type ReadPosition = Record<string, unknown>;

export interface IndexKey {
  id: string;
  /** The index sort key: the encoded value and the id. */
  key: string;
}

export interface PartitionRead {
  direction: 'asc' | 'desc';
  /** Inclusive id bounds. */
  idRange?: { lower?: string; upper?: string };
  /** A FilterExpression with its names and values (placeholders must not start with `#k` or `:k`). */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
  /** Stop after this many items (the page read of an unfiltered list). */
  limit?: number;
  startAfter?: ReadPosition;
}

/** Called after every page of a multi-page read; may throw to stop it (the list's read budget). */
export type ReadGuard = () => void;

/** A keys read given `maxUnits` stopped before the end: the caller takes another way. */
export class ReadCapExceeded extends Error {
  constructor() {
    super('read stopped at its unit cap');
    this.name = 'ReadCapExceeded';
  }
}

/** BatchGetItem takes at most 100 keys per call. */
const BATCH_GET_SIZE = 100;
const MAX_BATCH_ATTEMPTS = 8;

export interface RecordStoreOptions {
  /**
   * Read units one get-list may spend before it is answered with 2001 (a read no index narrows).
   * Default `DEFAULT_LIST_READ_BUDGET`.
   */
  listReadBudget?: number;
}

/** About 8 MB of records read eventually consistent: a few seconds of DynamoDB paging at most. */
export const DEFAULT_LIST_READ_BUDGET = 1000;

export class RecordStore {
  readonly listReadBudget: number;
  /** The record counter's items (checkpoint, count index, bulk groups). */
  readonly counts: CountStore;
  /** What changed in datasets that registered queries read (custom SQL's loaded copies catch up by it). */
  readonly changes: ChangeLog;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    options: RecordStoreOptions = {},
  ) {
    this.listReadBudget = options.listReadBudget ?? DEFAULT_LIST_READ_BUDGET;
    this.counts = new CountStore(client, table);
    this.changes = new ChangeLog(client, table);
  }

  private key(datasetCode: string, id: string) {
    return { [RecordAttr.partitionKey]: datasetPartitionKey(datasetCode), [RecordAttr.sortKey]: id };
  }

  /**
   * Store a new record; the id must be new (a ULID collision fails instead of overwriting). The record is its
   * own count entry (record-counter.ts): the id must be taken from the clock just before this call.
   */
  async create(datasetCode: string, id: string, fields: RecordItem, meter: CapacityMeter): Promise<RecordItem> {
    const item = { ...fields, ...countedRecordAttributes(datasetCode), ...this.key(datasetCode, id) };
    try {
      const result = await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addWrite(result.ConsumedCapacity);
      return item;
    } catch (error) {
      throw translateWriteError(error);
    }
  }

  /** One record, read consistently so that a caller sees its own writes. */
  async get(datasetCode: string, id: string, meter: CapacityMeter): Promise<RecordItem | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: this.key(datasetCode, id),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Item;
  }

  /**
   * Apply a partial update as one conditional UpdateItem: SET the fields sent, REMOVE the ones sent as null,
   * refresh gmt_modified, on the condition that the record exists (and matches `scope`, a caller's row filter).
   * `undefined` when it does not.
   */
  async update(
    datasetCode: string,
    id: string,
    changes: RecordChanges,
    modifiedAt: string,
    meter: CapacityMeter,
    scope?: CompiledExpression,
  ): Promise<RecordItem | undefined> {
    const names: Record<string, string> = { '#sk': RecordAttr.sortKey, '#modified': 'gmt_modified', ...scope?.names };
    const values: Record<string, unknown> = { ':modified': modifiedAt, ...scope?.values };
    const sets = ['#modified = :modified'];
    const removes: string[] = [];
    Object.entries(changes.set).forEach(([name, value], i) => {
      names[`#s${i}`] = name;
      values[`:s${i}`] = value;
      sets.push(`#s${i} = :s${i}`);
    });
    changes.remove.forEach((name, i) => {
      names[`#r${i}`] = name;
      removes.push(`#r${i}`);
    });
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: this.key(datasetCode, id),
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: scope?.expression
            ? `attribute_exists(#sk) AND (${scope.expression})`
            : 'attribute_exists(#sk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addWrite(result.ConsumedCapacity);
      return result.Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        // A failed condition still costs a write unit.
        meter.writeUnits += 1;
        return undefined;
      }
      throw translateWriteError(error);
    }
  }

  /**
   * Keys of a generic index within one interval, in key order (`desc`: reversed). Keys-only, so a read
   * costs about 0.5 units per 4 KB of keys however large the records are.
   */
  async queryIndexKeys(
    datasetCode: string,
    index: { indexName: string; attribute: string },
    interval: KeyInterval,
    direction: 'asc' | 'desc',
    options: { limit?: number; guard?: ReadGuard; maxUnits?: number },
    meter: CapacityMeter,
  ): Promise<IndexKey[]> {
    const keys: IndexKey[] = [];
    let startKey: ReadPosition | undefined;
    let spent = 0;
    do {
      if (options.maxUnits !== undefined && spent > options.maxUnits) throw new ReadCapExceeded();
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: index.indexName,
          KeyConditionExpression: '#pk = :pk AND #ix BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#ix': index.attribute },
          ExpressionAttributeValues: {
            ':pk': datasetPartitionKey(datasetCode),
            ':lower': interval.lower,
            ':upper': interval.upper,
          },
          ScanIndexForward: direction === 'asc',
          Limit: options.limit === undefined ? undefined : Math.max(1, options.limit - keys.length),
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      spent += result.ConsumedCapacity?.CapacityUnits ?? 0;
      for (const item of result.Items ?? []) {
        keys.push({ id: item[RecordAttr.sortKey] as string, key: item[index.attribute] as string });
      }
      startKey = result.LastEvaluatedKey;
      options.guard?.();
    } while (startKey && (options.limit === undefined || keys.length < options.limit));
    return keys;
  }

  /**
   * Records by id (eventually consistent, like the index reads that found the ids, unless `consistent`), in
   * parallel batches of 100, retrying what DynamoDB leaves unprocessed. Ids that do not exist are absent from
   * the map.
   */
  async batchGet(
    datasetCode: string,
    ids: readonly string[],
    meter: CapacityMeter,
    guard?: ReadGuard,
    consistent = false,
  ): Promise<Map<string, RecordItem>> {
    const found = new Map<string, RecordItem>();
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += BATCH_GET_SIZE) batches.push(ids.slice(i, i + BATCH_GET_SIZE));
    await Promise.all(
      batches.map(async (batch) => {
        let keys: Record<string, unknown>[] = batch.map((id) => this.key(datasetCode, id));
        for (let attempt = 0; keys.length > 0; attempt++) {
          if (attempt === MAX_BATCH_ATTEMPTS) throw new Error('BatchGetItem left keys unprocessed after retries');
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 10));
          const result = await this.client.send(
            new BatchGetCommand({
              RequestItems: { [this.table]: { Keys: keys, ...(consistent ? { ConsistentRead: true } : {}) } },
              ReturnConsumedCapacity: 'TOTAL',
            }),
          );
          meter.addRead(result.ConsumedCapacity);
          for (const item of result.Responses?.[this.table] ?? []) found.set(item[RecordAttr.sortKey] as string, item);
          keys = result.UnprocessedKeys?.[this.table]?.Keys ?? [];
          guard?.();
        }
      }),
    );
    return found;
  }

  /**
   * Records of a dataset's partition in id order, optionally within an id range and through a
   * FilterExpression. Returns the items and, when `limit` stopped the read, where to continue.
   */
  async queryPartition(
    datasetCode: string,
    read: PartitionRead,
    meter: CapacityMeter,
    guard?: ReadGuard,
  ): Promise<{ items: RecordItem[]; next?: ReadPosition }> {
    const names: Record<string, string> = { '#kpk': RecordAttr.partitionKey };
    const values: Record<string, unknown> = { ':kpk': datasetPartitionKey(datasetCode) };
    let keyCondition = '#kpk = :kpk';
    const { lower, upper } = read.idRange ?? {};
    if (lower !== undefined || upper !== undefined) names['#ksk'] = RecordAttr.sortKey;
    if (lower !== undefined && upper !== undefined) {
      keyCondition += ' AND #ksk BETWEEN :klower AND :kupper';
      Object.assign(values, { ':klower': lower, ':kupper': upper });
    } else if (lower !== undefined) {
      keyCondition += ' AND #ksk >= :klower';
      values[':klower'] = lower;
    } else if (upper !== undefined) {
      keyCondition += ' AND #ksk <= :kupper';
      values[':kupper'] = upper;
    }
    if (lower !== undefined && upper !== undefined && lower > upper) return { items: [] };
    const items: RecordItem[] = [];
    let startKey = read.startAfter;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: keyCondition,
          FilterExpression: read.filter?.expression,
          ExpressionAttributeNames: { ...names, ...read.filter?.names },
          ExpressionAttributeValues: { ...values, ...read.filter?.values },
          ScanIndexForward: read.direction === 'asc',
          // With a filter, Limit counts items read, not matches: only limit unfiltered reads.
          Limit: read.limit !== undefined && !read.filter ? read.limit - items.length : undefined,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      items.push(...(result.Items ?? []));
      startKey = result.LastEvaluatedKey;
      guard?.();
    } while (startKey && (read.limit === undefined || items.length < read.limit));
    if (read.limit !== undefined && items.length > read.limit) items.length = read.limit;
    return startKey ? { items, next: startKey } : { items };
  }
}

/** DynamoDB's refusal of an oversized item is the caller's problem (1001); anything else is ours. */
function translateWriteError(error: unknown): unknown {
  if (error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message)) {
    return recordTooLargeError();
  }
  return error;
}
