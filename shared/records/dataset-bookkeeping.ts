/**
 * A dataset's bookkeeping items, kept in the records table beside (never among) its records: the version custom
 * SQL's cache is keyed by, and the record-count checkpoint that keeps list totals cheap. Each call asks for its
 * consumed capacity, which goes to the request's meter.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { datasetCounterKey, datasetVersionKey } from './item-keys';
import { RecordAttr } from './table-definitions';

export interface RecordCountCheckpoint {
  /** The number of records whose id is at most `through`. */
  count: number;
  through: string;
}

export class DatasetBookkeeping {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Count one more write of a dataset (custom SQL's cache key). Called after the record write: a failure in
   * between leaves the version behind, which the cache's maximum age bounds.
   */
  async bumpVersion(datasetCode: string, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new UpdateCommand({
        TableName: this.table,
        Key: datasetVersionKey(datasetCode),
        UpdateExpression: 'ADD #version :one',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /** The dataset's write count (0 before the first write), read consistently so a caller sees its own writes. */
  async readVersion(datasetCode: string, meter: CapacityMeter): Promise<number> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: datasetVersionKey(datasetCode),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return (result.Item?.version as number | undefined) ?? 0;
  }

  /** The dataset's record-count checkpoint, if one was written. */
  async readCountCheckpoint(datasetCode: string, meter: CapacityMeter): Promise<RecordCountCheckpoint | undefined> {
    const result = await this.client.send(
      new GetCommand({ TableName: this.table, Key: datasetCounterKey(datasetCode), ReturnConsumedCapacity: 'TOTAL' }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Item;
    if (!item) return undefined;
    return { count: item[RecordAttr.counterCount] as number, through: item[RecordAttr.counterThrough] as string };
  }

  /**
   * Move the checkpoint forward; a checkpoint that is already further (another container got there first)
   * is kept. Every checkpoint is true on its own, so whichever write wins, the stored one is true.
   */
  async advanceCountCheckpoint(
    datasetCode: string,
    checkpoint: RecordCountCheckpoint,
    meter: CapacityMeter,
  ): Promise<void> {
    try {
      const result = await this.client.send(
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
      );
      meter.addWrite(result.ConsumedCapacity);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      meter.writeUnits += 1;
    }
  }
}
