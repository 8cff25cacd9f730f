/**
 * The record store: one record at a time (create, read, partial update), each call asking for its consumed
 * capacity, which goes to the request's meter. Every write is one conditional call: a create on the id being
 * new; an update that may move an index key on the record's latest keyed write being the one it read (`@cpos`,
 * or with `If-Match` its revision, `record-revisions.ts`); a direct update, which moves no index key and reads
 * nothing first, on the record existing, being in the caller's rows and the write changing something. No update
 * sets the revision it read plus one: each adds one to the revision the record has, so concurrent updates of
 * different fields of one record all land, each with a revision of its own. A write claims its change item first
 * (change-items.ts) and stores the claim's position in the record (`@cpos`, a direct update `@dpos`); a write
 * known not to have happened withdraws its claim. Reads for lists are in `list-reader.ts`, a dataset's
 * bookkeeping items in `dataset-bookkeeping.ts`.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { recordTooLargeError } from '../records/record-codec';
import { BatchUpdateStore } from './batch-update-store';
import { ChangeItems, claimChange, type SlotValues } from './change-items';
import { conditionalWrite } from './conditional-write';
import type { CompiledExpression } from './filter-expression';
import { recordKey } from './item-keys';
import { countedRecordAttributes } from './record-counter';
import { originAttribute, revisionCondition, revisionOf, type WriteOrigin } from './record-revisions';
import { RecordAttr } from './table-definitions';

/** What a create claims: the record's count key in each index slot, and the clock the claim's position comes from. */
export interface CreateClaimInput {
  values: SlotValues;
  now: () => number;
}

export class RecordStore {
  /** The change items of writes, which every write claims before it writes. */
  readonly changes: ChangeItems;
  /** Batch updates' intents and holds on records (operations/batch-update.ts). */
  readonly batches: BatchUpdateStore;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {
    this.changes = new ChangeItems(client, table);
    this.batches = new BatchUpdateStore(client, table);
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
   * Write an update read at `revision` as one conditional UpdateItem: SET the fields sent, REMOVE the cleared
   * ones, refresh gmt_modified, add one to the revision with this write's origin, on the condition that no keyed
   * write came since the read (`@cpos` is still the one read; with `update.exactRevision`, that the record is
   * still at `revision`) and that it matches `scope`, a caller's row filter. `undefined` when not: the update
   * flow reads it again and decides. The change item is claimed first, withdrawn when the write did not happen,
   * and told the revision the write gave when direct updates came between.
   */
  async updateAtRevision(
    datasetCode: string,
    id: string,
    update: RevisionUpdate,
    meter: CapacityMeter,
    scope?: CompiledExpression,
  ): Promise<RecordItem | undefined> {
    const claimed = update.revision + 1;
    const position = await claimChange(
      this.changes,
      datasetCode,
      {
        kind: 'update',
        id,
        revision: claimed,
        ...(update.claim.previous === undefined ? {} : { previous: update.claim.previous }),
        before: update.claim.before,
        after: update.claim.after,
      },
      update.claim.now,
      meter,
    );
    const write = updateWrite(update.changes, {
      modifiedAt: update.modifiedAt,
      origin: update.origin,
      position: { attribute: RecordAttr.changePosition, value: position },
      release: update.heldBy !== undefined,
    });
    // `#pos` is `@cpos` in this write; `#rev` the revision. A record a batch update holds is written by that
    // batch only (its hold is then released in the same write).
    const read = update.heldBy
      ? { text: '#lock = :lock', values: { ':lock': update.heldBy } }
      : update.exactRevision
        ? {
            text: `${revisionCondition(update.revision)} AND attribute_not_exists(#lock)`,
            values: { ':rev': update.revision },
          }
        : update.claim.previous === undefined
          ? { text: 'attribute_not_exists(#pos) AND attribute_not_exists(#lock)', values: {} }
          : { text: '#pos = :read AND attribute_not_exists(#lock)', values: { ':read': update.claim.previous } };
    const condition = `attribute_exists(#sk) AND ${read.text}`;
    let written: RecordItem | undefined;
    try {
      written = await this.send(
        datasetCode,
        id,
        write,
        { ...write.names, ...scope?.names },
        { ...read.values, ...scope?.values },
        scope?.expression ? `${condition} AND (${scope.expression})` : condition,
        meter,
      );
    } catch (error) {
      if (isTooLarge(error)) await this.changes.withdraw(datasetCode, position, meter);
      throw translateWriteError(error);
    }
    // Another write came first, unless this one did (a call the client sent twice).
    written ??= await this.ownWrite(datasetCode, id, RecordAttr.changePosition, position, meter);
    if (!written) {
      await this.changes.withdraw(datasetCode, position, meter);
      return undefined;
    }
    if (revisionOf(written) !== claimed) {
      await this.changes.settleRevision(datasetCode, position, revisionOf(written), meter);
    }
    return written;
  }

  /**
   * A direct update: one conditional UpdateItem with no read before it, for changes that move no index key (the
   * update flow sends only those here). It SETs the fields sent, REMOVEs the cleared ones, refreshes
   * gmt_modified and adds one to the revision, on the condition that the record exists, that it is in `scope`
   * (a caller's row filter) and that at least one field sent differs from what it holds: an update that would
   * change nothing writes nothing, makes no revision and no event. Its change item is claimed first (ids only,
   * no count keys) and told the revision once the write says it. `{ applied }` with the record as written, or
   * `{ refused }` with the record as it now is (`undefined` when it does not exist) when the condition failed.
   */
  async updateDirect(
    datasetCode: string,
    id: string,
    update: DirectUpdate,
    meter: CapacityMeter,
    scope?: CompiledExpression,
  ): Promise<{ applied: RecordItem } | { refused: RecordItem | undefined }> {
    const position = await claimChange(
      this.changes,
      datasetCode,
      { kind: 'update', id, before: {}, after: {}, direct: true },
      update.now,
      meter,
    );
    const write = updateWrite(update.changes, {
      modifiedAt: update.modifiedAt,
      origin: update.origin,
      position: { attribute: RecordAttr.directPosition, value: position },
    });
    const names: Record<string, string> = {
      ...write.names,
      '#dpos': RecordAttr.directPosition,
      '#lock': RecordAttr.batchLock,
      ...scope?.names,
    };
    const values: Record<string, unknown> = { ...scope?.values };
    // The fields sent as they would be after the write: at least one must differ from what the record holds.
    const differs: string[] = [];
    Object.entries(update.sent.set).forEach(([name, value], i) => {
      names[`#d${i}`] = name;
      values[`:d${i}`] = value;
      differs.push(`attribute_not_exists(#d${i}) OR #d${i} <> :d${i}`);
    });
    update.sent.remove.forEach((name, i) => {
      names[`#e${i}`] = name;
      differs.push(`attribute_exists(#e${i})`);
    });
    // `@dpos` differs from this claim: a call the client sends twice lands once.
    // No batch update holds it (update.ts finishes or waits for one that does).
    const condition = `attribute_exists(#sk) AND attribute_not_exists(#lock) AND (attribute_not_exists(#dpos) OR #dpos <> :cpos) AND (${differs.join(' OR ')})`;
    let written: RecordItem | undefined;
    try {
      written = await this.send(
        datasetCode,
        id,
        write,
        names,
        values,
        scope?.expression ? `${condition} AND (${scope.expression})` : condition,
        meter,
      );
    } catch (error) {
      if (isTooLarge(error)) await this.changes.withdraw(datasetCode, position, meter);
      throw translateWriteError(error);
    }
    if (!written) {
      const stored = await this.get(datasetCode, id, meter);
      if (stored?.[RecordAttr.directPosition] !== position) {
        await this.changes.withdraw(datasetCode, position, meter);
        return { refused: stored };
      }
      written = stored;
    }
    await this.changes.settleRevision(datasetCode, position, revisionOf(written), meter);
    return { applied: written };
  }

  /** One UpdateItem of a record with `ReturnValues: ALL_NEW`; `undefined` when its condition failed. */
  private async send(
    datasetCode: string,
    id: string,
    write: UpdateWrite,
    names: Record<string, string>,
    values: Record<string, unknown>,
    condition: string,
    meter: CapacityMeter,
  ): Promise<RecordItem | undefined> {
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: recordKey(datasetCode, id),
          UpdateExpression: write.expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: { ...names, '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: { ...write.values, ...values },
          ReturnValues: 'ALL_NEW',
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result?.Attributes;
  }

  /** The record when its latest write at `attribute` is the one at `position` (this call's, sent twice). */
  private async ownWrite(
    datasetCode: string,
    id: string,
    attribute: string,
    position: string,
    meter: CapacityMeter,
  ): Promise<RecordItem | undefined> {
    const stored = await this.get(datasetCode, id, meter);
    return stored?.[attribute] === position ? stored : undefined;
  }
}

interface UpdateWrite {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * The update expression of an update: SET the changed fields, the write's origin, gmt_modified and the claim's
 * position, REMOVE the cleared fields, and add one to the revision (a record written before revisions is at 1).
 */
function updateWrite(
  changes: RecordChanges,
  write: {
    modifiedAt: string;
    origin: WriteOrigin;
    position: { attribute: string; value: string };
    /** Release a batch update's hold on the record. */
    release?: boolean;
  },
): UpdateWrite {
  const names: Record<string, string> = {
    '#modified': 'gmt_modified',
    '#rev': RecordAttr.revision,
    '#origin': RecordAttr.origin,
    '#pos': write.position.attribute,
    '#lock': RecordAttr.batchLock,
  };
  const values: Record<string, unknown> = {
    ':modified': write.modifiedAt,
    ':one': 1,
    ':origin': originAttribute(write.origin),
    ':cpos': write.position.value,
  };
  const sets = [
    '#modified = :modified',
    '#rev = if_not_exists(#rev, :one) + :one',
    '#origin = :origin',
    '#pos = :cpos',
  ];
  const removes: string[] = write.release ? ['#lock'] : [];
  Object.entries(changes.set).forEach(([name, value], i) => {
    names[`#s${i}`] = name;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  changes.remove.forEach((name, i) => {
    names[`#r${i}`] = name;
    removes.push(`#r${i}`);
  });
  return {
    expression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    names,
    values,
  };
}

/** An update as the record store writes it: what changes, from which revision, by whom. */
export interface RevisionUpdate {
  /** The fields sent (and their derived attributes); never empty. */
  changes: RecordChanges;
  modifiedAt: string;
  /** The revision the update was read at. */
  revision: number;
  /** The write applies only while the record is still at `revision` (`If-Match`), not only at its keyed write. */
  exactRevision?: boolean;
  /** A batch update's write of a record it holds: it applies only while the batch holds it, and releases it. */
  heldBy?: string;
  origin: WriteOrigin;
  /** What its change item says besides the record's id and revision. */
  claim: UpdateClaimInput;
}

/** A direct update as the record store writes it. */
export interface DirectUpdate {
  /** The fields sent as the caller sent them (stored form): the write must change one of them. */
  sent: RecordChanges;
  /** The fields sent and their derived attributes (lower-cased shadows; never an index key). */
  changes: RecordChanges;
  modifiedAt: string;
  origin: WriteOrigin;
  /** The clock the claim's position comes from. */
  now: () => number;
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
