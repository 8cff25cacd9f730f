/**
 * The change items of a dataset (changes/change-log.ts says what they are for): one small item per write of
 * records that a loaded copy of the dataset must catch up with, naming the records it wrote.
 *
 * Change items live in the dataset's meta partition under `change#<position>`, where the position is a ULID of
 * the moment the item is written (after the records). They are read with a consistent Query, so a reader sees
 * every change item written before its read. A change item can be written at most `MAX_INVOCATION_MS` after
 * its position's time (one invocation), so a reader that caught up at time R re-reads from R − `SETTLE_MS`
 * (`CHANGE_REREAD_MS`) and never misses one. Items carry an expiry (`@expires`, DynamoDB TTL) a day on:
 * a copy older than its maximum age (minutes) is loaded afresh, so no reader needs older changes.
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { decodeTime, ulid } from 'ulid';
import type { CapacityMeter } from '../observability/capacity-meter';
import { CHANGE_PREFIX, datasetChangeKey, datasetMetaPartition } from './item-keys';
import { lastIdAt, SETTLE_MS } from './record-counter';
import { RecordAttr } from './table-definitions';

/** How far before its last read a reader reads change items again (a change item may land this late). */
export const CHANGE_REREAD_MS = SETTLE_MS;
/** DynamoDB's eventually consistent reads return a write "usually within a second"; twice that, to be safe. */
export const EVENTUAL_READ_LAG_MS = 2_000;
/** How long change items are kept (DynamoDB TTL tidies them; nothing depends on it). */
const CHANGE_RETENTION_S = 24 * 3600;

export interface DatasetChange {
  /** The change item's position (a ULID): unique, in time order. */
  position: string;
  /** The time the position carries (epoch ms). */
  time: number;
  /** The ids of the records the write changed. */
  ids: string[];
}

export class ChangeItems {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Record that `ids` of the dataset were written. Call after the records' writes succeeded. */
  async record(datasetCode: string, ids: readonly string[], now: number, meter: CapacityMeter): Promise<void> {
    if (ids.length === 0) return;
    const result = await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...datasetChangeKey(datasetCode, ulid(now)),
          ids: [...ids],
          '@expires': Math.floor(now / 1000) + CHANGE_RETENTION_S,
        },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /** The change items positioned after time `sinceMs`, oldest first, read consistently. */
  async since(datasetCode: string, sinceMs: number, meter: CapacityMeter): Promise<DatasetChange[]> {
    const changes: DatasetChange[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: {
            ':pk': datasetMetaPartition(datasetCode),
            ':from': `${CHANGE_PREFIX}${lastIdAt(sinceMs)}`,
            ':to': `${CHANGE_PREFIX}~`,
          },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) {
        const position = (item[RecordAttr.sortKey] as string).slice(CHANGE_PREFIX.length);
        changes.push({
          position,
          time: decodeTime(position),
          ids: (item.ids as string[] | undefined) ?? [],
        });
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return changes;
  }
}
