/**
 * Writing many new records at once (batch create): BatchWriteItem in chunks of 25, the most DynamoDB takes per
 * call, a few chunks in flight, unprocessed items retried with exponential backoff and jitter. And the read a
 * retried batch needs to find which of its ids an interrupted attempt already wrote: one consistent, key-only
 * range read of the dataset partition.
 *
 * BatchWriteItem has no conditions, so it never refuses an item that exists: ids must be new (see id-blocks.ts)
 * and a retry writes only the ids it did not find.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordItem } from '../records/record-codec';
import { datasetPartitionKey } from './item-keys';
import { RecordAttr } from './table-definitions';

/** BatchWriteItem takes at most 25 items per call. */
export const BATCH_WRITE_SIZE = 25;
/** Chunks in flight at once: enough to hide round trips, few enough not to throttle one partition. */
const CHUNKS_IN_FLIGHT = 4;
const MAX_ATTEMPTS = 8;
const BASE_BACKOFF_MS = 20;

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

/** DynamoDB still left items unprocessed after every retry: the table is throttled. */
export class BatchWriteIncomplete extends Error {
  constructor(readonly unprocessed: number) {
    super(`BatchWriteItem left ${unprocessed} item(s) unprocessed after ${MAX_ATTEMPTS} attempts`);
    this.name = 'BatchWriteIncomplete';
  }
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
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Put new records, in chunks of 25; resolves when every record is written. */
  async putNew(
    datasetCode: string,
    records: readonly NewRecord[],
    meter: CapacityMeter,
    options: BatchWriteOptions = {},
  ): Promise<void> {
    const partition = datasetPartitionKey(datasetCode);
    const chunks: Record<string, unknown>[][] = [];
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
        const chunk = chunks[next++] as Record<string, unknown>[];
        try {
          if (options.deadline !== undefined && (options.now ?? Date.now)() > options.deadline) {
            throw new BatchWriteStopped();
          }
          await this.writeChunk(chunk, meter);
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, worker));
    if (failure) throw failure.error;
  }

  private async writeChunk(requests: Record<string, unknown>[], meter: CapacityMeter): Promise<void> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === MAX_ATTEMPTS) throw new BatchWriteIncomplete(pending.length);
      if (attempt > 0) await this.sleep(BASE_BACKOFF_MS * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
      const result = await this.client.send(
        new BatchWriteCommand({
          RequestItems: { [this.table]: pending as never },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addWrite(result.ConsumedCapacity);
      pending = (result.UnprocessedItems?.[this.table] as Record<string, unknown>[] | undefined) ?? [];
    }
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
