/**
 * The record store: one record at a time (create, read, partial update), each call asking for its consumed
 * capacity, which goes to the request's meter. Every write is one conditional call: a create on the id being
 * new, an update on the revision it was read at (`record-revisions.ts`), so an update never overwrites a change
 * it did not see, and concurrent updates of different fields of one record all survive (the update flow reads
 * again and retries, operations/update.ts). Reads for lists are in `list-reader.ts`, a dataset's bookkeeping
 * items in `dataset-bookkeeping.ts`.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { recordTooLargeError } from '../records/record-codec';
import { conditionalWrite } from './conditional-write';
import type { CompiledExpression } from './filter-expression';
import { recordKey } from './item-keys';
import { countedRecordAttributes } from './record-counter';
import { originAttribute, revisionCondition, type WriteOrigin } from './record-revisions';
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
   * Write an update read at `revision` as one conditional UpdateItem: SET the changed fields, REMOVE the cleared
   * ones, refresh gmt_modified, move to the next revision with this write's origin, on the condition that the
   * record is still at `revision` (and matches `scope`, a caller's row filter). `undefined` when it is not: a
   * concurrent write came first, or the record left the scope (the update flow reads it again and decides).
   */
  async updateAtRevision(
    datasetCode: string,
    id: string,
    update: RevisionUpdate,
    meter: CapacityMeter,
    scope?: CompiledExpression,
  ): Promise<RecordItem | undefined> {
    const names: Record<string, string> = {
      '#sk': RecordAttr.sortKey,
      '#modified': 'gmt_modified',
      '#rev': RecordAttr.revision,
      '#origin': RecordAttr.origin,
      ...scope?.names,
    };
    const values: Record<string, unknown> = {
      ':modified': update.modifiedAt,
      ':rev': update.revision,
      ':next': update.revision + 1,
      ':origin': originAttribute(update.origin),
      ...scope?.values,
    };
    const sets = ['#modified = :modified', '#rev = :next', '#origin = :origin'];
    const removes: string[] = [];
    Object.entries(update.changes.set).forEach(([name, value], i) => {
      names[`#s${i}`] = name;
      values[`:s${i}`] = value;
      sets.push(`#s${i} = :s${i}`);
    });
    update.changes.remove.forEach((name, i) => {
      names[`#r${i}`] = name;
      removes.push(`#r${i}`);
    });
    const condition = `attribute_exists(#sk) AND ${revisionCondition(update.revision)}`;
    try {
      const result = await conditionalWrite(meter, () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.table,
            Key: recordKey(datasetCode, id),
            UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
            ConditionExpression: scope?.expression ? `${condition} AND (${scope.expression})` : condition,
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

/** An update as the record store writes it: what changes, from which revision, by whom. */
export interface RevisionUpdate {
  /** The fields that really change (and their derived attributes); never empty. */
  changes: RecordChanges;
  modifiedAt: string;
  /** The revision the update was read at; the write applies only while the record is still at it. */
  revision: number;
  origin: WriteOrigin;
}

/** DynamoDB's refusal of an oversized item is the caller's problem (1001); anything else is ours. */
function translateWriteError(error: unknown): unknown {
  if (error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message)) {
    return recordTooLargeError();
  }
  return error;
}
