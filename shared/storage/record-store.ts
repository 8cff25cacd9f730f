/**
 * The record store: one record at a time (create, read, partial update), each call asking for its consumed
 * capacity, which goes to the request's meter. Writes are single conditional calls (no read-modify-write), so
 * concurrent updates of different fields of one record all survive. Reads for lists are in `list-reader.ts`,
 * a dataset's bookkeeping items in `dataset-bookkeeping.ts`.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { recordTooLargeError } from '../records/record-codec';
import { conditionalWrite } from './conditional-write';
import type { CompiledExpression } from './filter-expression';
import { recordKey } from './item-keys';
import { countedRecordAttributes } from './record-counter';
import { RecordAttr } from './table-definitions';

export class RecordStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Store a new record; the id must be new (a ULID collision fails instead of overwriting). */
  async create(datasetCode: string, id: string, fields: RecordItem, meter: CapacityMeter): Promise<RecordItem> {
    // The record is its own count entry (record-counter.ts): its id was taken from the clock just before this call.
    const item = { ...fields, ...countedRecordAttributes(datasetCode), ...recordKey(datasetCode, id) };
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
        Key: recordKey(datasetCode, id),
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
      const result = await conditionalWrite(meter, () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.table,
            Key: recordKey(datasetCode, id),
            UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
            ConditionExpression: scope?.expression
              ? `attribute_exists(#sk) AND (${scope.expression})`
              : 'attribute_exists(#sk)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
            ReturnConsumedCapacity: 'TOTAL',
          }),
        ),
      );
      return result?.Attributes;
    } catch (error) {
      throw translateWriteError(error);
    }
  }
}

/** DynamoDB's refusal of an oversized item is the caller's problem (1001); anything else is ours. */
function translateWriteError(error: unknown): unknown {
  if (error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message)) {
    return recordTooLargeError();
  }
  return error;
}
