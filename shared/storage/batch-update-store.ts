/**
 * A batch update's items (operations/batch-update.ts has the protocol): its intent, one item in the dataset's meta
 * partition (`batch-update#<batch id>`) that says which records it changes, how, by whom and how far it got
 * (`pending`, then `committed` at its commit point, or `aborted`), and its hold on each record (`@lock`, the batch
 * id), which every other write of a record refuses to pass.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { StoredValue } from '../records/field-values';
import { getInBatches } from './batch-items';
import { conditionalWrite } from './conditional-write';
import { BATCH_UPDATE_PREFIX, batchUpdateKey, datasetMetaPartition, recordKey } from './item-keys';
import { revisionCondition, type WriteOrigin } from './record-revisions';
import { RecordAttr } from './table-definitions';

export type BatchState = 'pending' | 'committed' | 'aborted';

/** What a batch update changes, as its intent item keeps it. */
export interface BatchIntent {
  batchId: string;
  state: BatchState;
  /** The records it changes (those the request listed whose fields it really changes), in the order sent. */
  ids: string[];
  /** The fields sent, in stored form, and the fields cleared. */
  set: Record<string, StoredValue>;
  remove: string[];
  origin: WriteOrigin;
  /** When it began (epoch ms): a pending batch older than the longest invocation has no writer left. */
  createdAt: number;
}

export class BatchUpdateStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async putIntent(datasetCode: string, intent: BatchIntent, meter: CapacityMeter): Promise<void> {
    const written = await conditionalWrite(meter, () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...batchUpdateKey(datasetCode, intent.batchId), ...intentAttributes(intent) },
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    if (!written) throw new Error(`batch update ${intent.batchId} exists already in dataset ${datasetCode}`);
  }

  async readIntent(datasetCode: string, batchId: string, meter: CapacityMeter): Promise<BatchIntent | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: batchUpdateKey(datasetCode, batchId),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Item ? readIntent(result.Item) : undefined;
  }

  /** Every batch update of the dataset not finished yet (its intent is deleted once it is), oldest first. */
  async openIntents(datasetCode: string, meter: CapacityMeter): Promise<BatchIntent[]> {
    const intents: BatchIntent[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: { ':pk': datasetMetaPartition(datasetCode), ':prefix': BATCH_UPDATE_PREFIX },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) intents.push(readIntent(item));
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return intents;
  }

  /** Move the batch from `from` to `to`; false when it is not at `from` (another finisher moved it first). */
  async moveState(
    datasetCode: string,
    batchId: string,
    from: BatchState,
    to: BatchState,
    meter: CapacityMeter,
  ): Promise<boolean> {
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: batchUpdateKey(datasetCode, batchId),
          UpdateExpression: 'SET #state = :to',
          ConditionExpression: '#state = :from',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':from': from, ':to': to },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result !== undefined;
  }

  async deleteIntent(datasetCode: string, batchId: string, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new DeleteCommand({
        TableName: this.table,
        Key: batchUpdateKey(datasetCode, batchId),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /**
   * Hold a record for the batch: only while it is still at `revision` (nothing wrote it since it was checked) and
   * no other batch holds it. The write changes no field and no revision: it makes no change event.
   */
  async hold(
    datasetCode: string,
    id: string,
    batchId: string,
    revision: number,
    meter: CapacityMeter,
  ): Promise<boolean> {
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: recordKey(datasetCode, id),
          UpdateExpression: 'SET #lock = :batch',
          ConditionExpression: `attribute_exists(#sk) AND ${revisionCondition(revision)} AND attribute_not_exists(#lock)`,
          ExpressionAttributeNames: {
            '#sk': RecordAttr.sortKey,
            '#rev': RecordAttr.revision,
            '#lock': RecordAttr.batchLock,
          },
          ExpressionAttributeValues: { ':batch': batchId, ':rev': revision },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result !== undefined;
  }

  /** Let go of a record an aborted batch holds (nothing when it holds it no more). */
  async release(datasetCode: string, id: string, batchId: string, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: recordKey(datasetCode, id),
          UpdateExpression: 'REMOVE #lock',
          ConditionExpression: '#lock = :batch',
          ExpressionAttributeNames: { '#lock': RecordAttr.batchLock },
          ExpressionAttributeValues: { ':batch': batchId },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /** The records with these ids, read consistently (absent ids are not in the map). */
  async readRecords(
    datasetCode: string,
    ids: readonly string[],
    meter: CapacityMeter,
  ): Promise<Map<string, Record<string, unknown>>> {
    const found = new Map<string, Record<string, unknown>>();
    await getInBatches(
      this.client,
      this.table,
      ids.map((id) => recordKey(datasetCode, id)),
      { ConsistentRead: true },
      meter,
      (items) => {
        for (const item of items) found.set(item[RecordAttr.sortKey] as string, item);
      },
    );
    return found;
  }
}

function intentAttributes(intent: BatchIntent): Record<string, unknown> {
  return {
    state: intent.state,
    ids: JSON.stringify(intent.ids),
    set: JSON.stringify(intent.set),
    remove: JSON.stringify(intent.remove),
    origin: intent.origin,
    createdAt: intent.createdAt,
  };
}

function readIntent(item: Record<string, unknown>): BatchIntent {
  return {
    batchId: (item[RecordAttr.sortKey] as string).slice(BATCH_UPDATE_PREFIX.length),
    state: item.state as BatchState,
    ids: JSON.parse(item.ids as string) as string[],
    set: JSON.parse(item.set as string) as Record<string, StoredValue>,
    remove: JSON.parse(item.remove as string) as string[],
    origin: item.origin as WriteOrigin,
    createdAt: item.createdAt as number,
  };
}
