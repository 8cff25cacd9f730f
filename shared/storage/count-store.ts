/**
 * The DynamoDB calls of the record counter (record-counter.ts): the checkpoint item, the count index and the
 * bookkeeping items of bulk writes. Every call asks for its consumed capacity, which goes to the request's meter.
 * Kept apart from the record store's reads and writes of records, because these items are bookkeeping, not data.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { conditionalWrite } from './conditional-write';
import { bulkGroupKey, datasetCounterKey, datasetPartitionKey } from './item-keys';
import { COUNT_INDEX, RecordAttr } from './table-definitions';

export interface RecordCountCheckpoint {
  /** The total weight of the count entries whose key is at most `through` (plus records older than the index). */
  count: number;
  through: string;
}

/** One entry of the count index: a record created on its own (weight 1) or a bulk group's bookkeeping item. */
export interface CountEntry {
  key: string;
  weight: number;
  /** A bulk group whose writer has not said it finished (its weight is the number it claimed). */
  open: boolean;
}

export interface BulkGroupItem {
  entryKey: string;
  count: number;
  firstId: string;
  lastId: string;
  done: boolean;
}

type Position = Record<string, unknown>;

export class CountStore {
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly table: string,
  ) {}

  /** The dataset's checkpoint, if one was written (eventually consistent: an older one is just as true). */
  async readCheckpoint(datasetCode: string, meter: CapacityMeter): Promise<RecordCountCheckpoint | undefined> {
    const result = await this.client.send(
      new GetCommand({ TableName: this.table, Key: datasetCounterKey(datasetCode), ReturnConsumedCapacity: 'TOTAL' }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Item;
    if (!item) return undefined;
    return { count: item[RecordAttr.counterCount] as number, through: item[RecordAttr.counterThrough] as string };
  }

  /**
   * Move the checkpoint forward; a checkpoint that is already further (another container got there first) is
   * kept. Every checkpoint is true on its own, so whichever write wins, the stored one is true.
   */
  async advanceCheckpoint(datasetCode: string, checkpoint: RecordCountCheckpoint, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...datasetCounterKey(datasetCode),
            [RecordAttr.counterCount]: checkpoint.count,
            [RecordAttr.counterThrough]: checkpoint.through,
          },
          ConditionExpression: 'attribute_not_exists(#through) OR #through < :through',
          ExpressionAttributeNames: { '#through': RecordAttr.counterThrough },
          ExpressionAttributeValues: { ':through': checkpoint.through },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /**
   * The count entries of a dataset after `afterKey` (all of them without it), in key order; with `enoughWeight`,
   * it stops after the page in which their weight passes it.
   */
  async entriesAfter(
    datasetCode: string,
    afterKey: string | undefined,
    meter: CapacityMeter,
    enoughWeight = Number.POSITIVE_INFINITY,
  ): Promise<CountEntry[]> {
    const entries: CountEntry[] = [];
    let weight = 0;
    let startKey: Position | undefined;
    // A checkpoint through '' (a dataset counted from its creation) covers no entry; DynamoDB refuses an empty string
    // in a key condition, so it is read as no checkpoint key at all.
    if (afterKey === '') afterKey = undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: COUNT_INDEX.indexName,
          KeyConditionExpression: afterKey === undefined ? '#e = :e' : '#e = :e AND #sk > :after',
          ExpressionAttributeNames: {
            '#e': RecordAttr.countPartition,
            ...(afterKey === undefined ? {} : { '#sk': RecordAttr.sortKey }),
          },
          ExpressionAttributeValues: {
            ':e': datasetPartitionKey(datasetCode),
            ...(afterKey === undefined ? {} : { ':after': afterKey }),
          },
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) {
        const bulk = item[RecordAttr.bulkCount] as number | undefined;
        entries.push({
          key: item[RecordAttr.sortKey] as string,
          weight: bulk ?? 1,
          open: bulk !== undefined && item[RecordAttr.bulkDone] === undefined,
        });
        weight += bulk ?? 1;
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey && weight <= enoughWeight);
    return entries;
  }

  /**
   * The ids of the dataset's records that no count entry covers: records written before the count index
   * existed. A consistent read of the whole partition (ids and the two marker attributes only), made once per
   * dataset, before its first checkpoint.
   */
  async uncoveredRecordIds(datasetCode: string, meter: CapacityMeter): Promise<string[]> {
    const ids: string[] = [];
    let startKey: Position | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk',
          FilterExpression: 'attribute_not_exists(#e) AND attribute_not_exists(#bk)',
          ProjectionExpression: '#sk',
          ExpressionAttributeNames: {
            '#pk': RecordAttr.partitionKey,
            '#sk': RecordAttr.sortKey,
            '#e': RecordAttr.countPartition,
            '#bk': RecordAttr.bulkGroup,
          },
          ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode) },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) ids.push(item[RecordAttr.sortKey] as string);
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return ids;
  }

  /** Write a bulk group's bookkeeping item (open: its records are about to be written). */
  async putBulkGroup(datasetCode: string, group: BulkGroupItem, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: bulkGroupItem(datasetCode, group),
        ConditionExpression: 'attribute_not_exists(#sk)',
        ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /**
   * Mark a bulk group done with the number of records it holds. A put of the whole (small) item, so that the
   * functions that may move count bookkeeping need no other write action than a put of `meta#` items.
   */
  async settleBulkGroup(datasetCode: string, group: BulkGroupItem, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: bulkGroupItem(datasetCode, { ...group, done: true }),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /** A bulk group's bookkeeping item, read consistently. */
  async readBulkGroup(datasetCode: string, entryKey: string, meter: CapacityMeter): Promise<BulkGroupItem | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: bulkGroupKey(datasetCode, entryKey),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Item;
    if (!item) return undefined;
    return {
      entryKey,
      count: item[RecordAttr.bulkCount] as number,
      firstId: item[RecordAttr.bulkFirstId] as string,
      lastId: item[RecordAttr.bulkLastId] as string,
      done: item[RecordAttr.bulkDone] !== undefined,
    };
  }

  /** How many records of the group exist: a consistent count of its id range, of the records it marked. */
  async countBulkGroupRecords(datasetCode: string, group: BulkGroupItem, meter: CapacityMeter): Promise<number> {
    return (await this.bulkGroupRecordIds(datasetCode, group, meter)).length;
  }

  /** The ids of the group's records that exist: a consistent read of its id range, of the records it marked. */
  async bulkGroupRecordIds(
    datasetCode: string,
    group: Pick<BulkGroupItem, 'entryKey' | 'firstId' | 'lastId'>,
    meter: CapacityMeter,
  ): Promise<string[]> {
    const ids: string[] = [];
    let startKey: Position | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
          FilterExpression: '#bk = :bk',
          ProjectionExpression: '#sk',
          ExpressionAttributeNames: {
            '#pk': RecordAttr.partitionKey,
            '#sk': RecordAttr.sortKey,
            '#bk': RecordAttr.bulkGroup,
          },
          ExpressionAttributeValues: {
            ':pk': datasetPartitionKey(datasetCode),
            ':lo': group.firstId,
            ':hi': group.lastId,
            ':bk': group.entryKey,
          },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) ids.push(item[RecordAttr.sortKey] as string);
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return ids;
  }
}

function bulkGroupItem(datasetCode: string, group: BulkGroupItem): Record<string, unknown> {
  return {
    ...bulkGroupKey(datasetCode, group.entryKey),
    [RecordAttr.countPartition]: datasetPartitionKey(datasetCode),
    [RecordAttr.bulkCount]: group.count,
    [RecordAttr.bulkFirstId]: group.firstId,
    [RecordAttr.bulkLastId]: group.lastId,
    ...(group.done ? { [RecordAttr.bulkDone]: true } : {}),
  };
}
