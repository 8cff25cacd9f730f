/**
 * The record store: DynamoDB calls for records, each asking for its consumed capacity, which goes to the
 * request's meter. Writes are single conditional calls (no read-modify-write), so concurrent updates of
 * different fields of one record all survive.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordChanges, RecordItem } from './record-codec';
import { recordTooLargeError } from './record-codec';
import { datasetPartitionKey, RecordAttr } from './table-definitions';

export interface PageRequest {
  /** Records to pass over before the page. */
  offset: number;
  limit: number;
}

export class RecordStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  private key(datasetCode: string, id: string) {
    return { [RecordAttr.partitionKey]: datasetPartitionKey(datasetCode), [RecordAttr.sortKey]: id };
  }

  /** Store a new record; the id must be new (a ULID collision fails instead of overwriting). */
  async create(datasetCode: string, id: string, fields: RecordItem, meter: CapacityMeter): Promise<RecordItem> {
    const item = { ...fields, ...this.key(datasetCode, id) };
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
   * refresh gmt_modified, on the condition that the record exists. `undefined` when it does not.
   */
  async update(
    datasetCode: string,
    id: string,
    changes: RecordChanges,
    modifiedAt: string,
    meter: CapacityMeter,
  ): Promise<RecordItem | undefined> {
    const names: Record<string, string> = { '#sk': RecordAttr.sortKey, '#modified': 'gmt_modified' };
    const values: Record<string, unknown> = { ':modified': modifiedAt };
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
          ConditionExpression: 'attribute_exists(#sk)',
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

  /** A page of a dataset's records, newest first (ids are time-ordered, so this is a reverse Query). */
  async listNewestFirst(datasetCode: string, page: PageRequest, meter: CapacityMeter): Promise<RecordItem[]> {
    const items: RecordItem[] = [];
    let toSkip = page.offset;
    let startKey: Record<string, unknown> | undefined;
    do {
      const want = toSkip + page.limit - items.length;
      const result = await this.client.send(
        new QueryCommand({
          ...this.partitionQuery(datasetCode),
          ScanIndexForward: false,
          Limit: Math.min(want, 1000),
          ExclusiveStartKey: startKey,
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) {
        if (toSkip > 0) toSkip -= 1;
        else if (items.length < page.limit) items.push(item);
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey && items.length < page.limit);
    return items;
  }

  /** The exact number of records of a dataset. */
  async count(datasetCode: string, meter: CapacityMeter): Promise<number> {
    let count = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({ ...this.partitionQuery(datasetCode), Select: 'COUNT', ExclusiveStartKey: startKey }),
      );
      meter.addRead(result.ConsumedCapacity);
      count += result.Count ?? 0;
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return count;
  }

  private partitionQuery(datasetCode: string): QueryCommandInput {
    return {
      TableName: this.table,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey },
      ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode) },
      ReturnConsumedCapacity: 'TOTAL',
    };
  }
}

/** DynamoDB's refusal of an oversized item is the caller's problem (1001); anything else is ours. */
function translateWriteError(error: unknown): unknown {
  if (error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message)) {
    return recordTooLargeError();
  }
  return error;
}
