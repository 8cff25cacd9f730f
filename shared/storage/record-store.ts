/**
 * The record store: one record at a time (create, read, partial update), each call asking for its consumed
 * capacity, which goes to the request's meter. Every write is one conditional call: a create on the id being
 * new, an update on the revision it was read at (`record-revisions.ts`), so an update never overwrites a change
 * it did not see, and concurrent updates of different fields of one record all survive (the update flow reads
 * again and retries, operations/update.ts). A write claims its change item first (change-items.ts) and stores the
 * claim's position in the record (`@cpos`); a write known not to have happened withdraws its claim. Reads for
 * lists are in `list-reader.ts`, a dataset's bookkeeping items in `dataset-bookkeeping.ts`.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { recordTooLargeError } from '../records/record-codec';
import { ChangeItems, claimChange, type SlotValues } from './change-items';
import { conditionalWrite } from './conditional-write';
import type { CompiledExpression } from './filter-expression';
import { recordKey } from './item-keys';
import { countedRecordAttributes } from './record-counter';
import { originAttribute, revisionCondition, type WriteOrigin } from './record-revisions';
import { RecordAttr } from './table-definitions';

/** What a create claims: the record's count key in each index slot, and the clock the claim's position comes from. */
export interface CreateClaimInput {
  values: SlotValues;
  now: () => number;
}

export class RecordStore {
  /** The change items of writes, which every write claims before it writes. */
  readonly changes: ChangeItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {
    this.changes = new ChangeItems(client, table);
  }

  /**
   * Store a new record; the id must be new (a ULID collision fails instead of overwriting). Its change item is
   * claimed first; when the record cannot be written (the id exists, the item is too large) the claim is
   * withdrawn, and when the write's outcome is unknown (the call failed) it stays for the check that settles it.
   */
  async create(
    datasetCode: string,
    id: string,
    fields: RecordItem,
    meter: CapacityMeter,
    claim: CreateClaimInput,
  ): Promise<RecordItem> {
    const position = await claimChange(
      this.changes,
      datasetCode,
      { kind: 'create', id, values: claim.values },
      claim.now,
      meter,
    );
    // The record is its own count entry (record-counter.ts): its id was taken from the clock just before this call.
    const item = {
      ...fields,
      [RecordAttr.changePosition]: position,
      ...countedRecordAttributes(datasetCode),
      ...recordKey(datasetCode, id),
    };
    let written: unknown;
    try {
      written = await conditionalWrite(meter, () =>
        this.client.send(
          new PutCommand({
            TableName: this.table,
            Item: item,
            ConditionExpression: 'attribute_not_exists(#sk)',
            ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
            ReturnConsumedCapacity: 'TOTAL',
          }),
        ),
      );
    } catch (error) {
      if (isTooLarge(error)) await this.changes.withdraw(datasetCode, position, meter);
      throw translateWriteError(error);
    }
    if (written) return item;
    // The id exists: written by this very call when the client sent it twice, else by someone else.
    const stored = await this.get(datasetCode, id, meter);
    if (stored?.[RecordAttr.changePosition] === position) return stored;
    await this.changes.withdraw(datasetCode, position, meter);
    throw new Error(`record id ${id} exists already in dataset ${datasetCode}`);
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
   * The change item is claimed first, and withdrawn when the write did not happen.
   */
  async updateAtRevision(
    datasetCode: string,
    id: string,
    update: RevisionUpdate,
    meter: CapacityMeter,
    scope?: CompiledExpression,
  ): Promise<RecordItem | undefined> {
    const position = await claimChange(
      this.changes,
      datasetCode,
      {
        kind: 'update',
        id,
        revision: update.revision + 1,
        ...(update.claim.previous === undefined ? {} : { previous: update.claim.previous }),
        before: update.claim.before,
        after: update.claim.after,
      },
      update.claim.now,
      meter,
    );
    const names: Record<string, string> = {
      '#sk': RecordAttr.sortKey,
      '#modified': 'gmt_modified',
      '#rev': RecordAttr.revision,
      '#origin': RecordAttr.origin,
      '#cpos': RecordAttr.changePosition,
      ...scope?.names,
    };
    const values: Record<string, unknown> = {
      ':modified': update.modifiedAt,
      ':rev': update.revision,
      ':next': update.revision + 1,
      ':origin': originAttribute(update.origin),
      ':cpos': position,
      ...scope?.values,
    };
    const sets = ['#modified = :modified', '#rev = :next', '#origin = :origin', '#cpos = :cpos'];
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
      if (result?.Attributes) return result.Attributes;
    } catch (error) {
      if (isTooLarge(error)) await this.changes.withdraw(datasetCode, position, meter);
      throw translateWriteError(error);
    }
    // Another write came first, unless this one did (a call the client sent twice).
    const stored = await this.get(datasetCode, id, meter);
    if (stored?.[RecordAttr.changePosition] === position) return stored;
    await this.changes.withdraw(datasetCode, position, meter);
    return undefined;
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
  /** What its change item says besides the record's id and revision. */
  claim: UpdateClaimInput;
}

/** What an update claims: the write it replaces, the count keys before and after of the slots it changes. */
export interface UpdateClaimInput {
  /** The position the record stored (`@cpos`) when it was read; absent for records written before change items. */
  previous?: string;
  before: SlotValues;
  after: SlotValues;
  /** The clock the claim's position comes from. */
  now: () => number;
}

function isTooLarge(error: unknown): boolean {
  return error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message);
}

/** DynamoDB's refusal of an oversized item is the caller's problem (1001); anything else is ours. */
function translateWriteError(error: unknown): unknown {
  return isTooLarge(error) ? recordTooLargeError() : error;
}
