/**
 * Writing many new records at once (batch create): BatchWriteItem in chunks of 25, the most DynamoDB takes per
 * call, a few chunks in flight, unprocessed items sent again within a bound (batch-items.ts: `BatchIncomplete`
 * when the table cannot keep up). And the read a retried batch needs to find which of its ids an interrupted
 * attempt already wrote: one consistent, key-only range read of the dataset partition.
 *
 * BatchWriteItem has no conditions, so it never refuses an item that exists: ids must be new (see id-blocks.ts)
 * and a retry writes only the ids it did not find.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordItem } from '../records/record-codec';
import { BATCH_WRITE_SIZE, type BatchPacing, type BatchWriteRequest, realPacing, writeBatch } from './batch-items';
import { datasetPartitionKey } from './item-keys';
import { RecordAttr } from './table-definitions';

/** Chunks in flight at once: enough to hide round trips, few enough not to throttle one partition. */
const CHUNKS_IN_FLIGHT = 4;

export interface NewRecord {
  id: string;
  /** The item's attributes besides its key: fields, derived attributes, timestamps. */
  fields: RecordItem;
}

export interface BatchWriteOptions {
  /** Stop before starting a chunk after this time (ms, by `now`): the request is being answered 2001. */
  deadline?: number;
  now?: () => number;
}

/** The request ran out of time between chunks; the rest of the batch was not started. */
export class BatchWriteStopped extends Error {
  constructor() {
    super('batch write stopped at the request deadline');
    this.name = 'BatchWriteStopped';
  }
}

export class RecordBatchStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly pacing: BatchPacing = realPacing,
  ) {}

  /** Put new records, in chunks of 25; resolves when every record is written. */
  async putNew(
    datasetCode: string,
    records: readonly NewRecord[],
    meter: CapacityMeter,
    options: BatchWriteOptions = {},
  ): Promise<void> {
    const partition = datasetPartitionKey(datasetCode);
    const chunks: BatchWriteRequest[][] = [];
    for (let i = 0; i < records.length; i += BATCH_WRITE_SIZE) {
      chunks.push(
        records.slice(i, i + BATCH_WRITE_SIZE).map(({ id, fields }) => ({
          PutRequest: { Item: { ...fields, [RecordAttr.partitionKey]: partition, [RecordAttr.sortKey]: id } },
        })),
      );
    }
    // Workers take chunks in order; after a failure none starts another, and the call settles only when the
    // chunks in flight have, so nothing of this request is still writing once it has answered.
    let next = 0;
    let failure: { error: unknown } | undefined;
    const worker = async (): Promise<void> => {
      while (!failure && next < chunks.length) {
        const chunk = chunks[next++] as BatchWriteRequest[];
        try {
          if (options.deadline !== undefined && (options.now ?? Date.now)() > options.deadline) {
            throw new BatchWriteStopped();
          }
          await writeBatch(this.client, this.table, chunk, meter, this.pacing);
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, worker));
    if (failure) throw failure.error;
  }

  /**
   * The ids of a dataset's records between `lower` and `upper` (inclusive), read consistently so that a write
   * acknowledged before the read is seen.
   */
  async existingIds(datasetCode: string, lower: string, upper: string, meter: CapacityMeter): Promise<Set<string>> {
    const ids = new Set<string>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode), ':lower': lower, ':upper': upper },
          ProjectionExpression: '#sk',
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) ids.add(item[RecordAttr.sortKey] as string);
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return ids;
  }
}
