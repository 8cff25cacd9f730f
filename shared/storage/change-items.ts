/**
 * Change items: the request path's bookkeeping log of a dataset (not the partner-facing change feed). Every
 * write of records claims one before it writes them: a create or an update one small item, a batch one item
 * plus one per index slot, whatever its size. They say which records a write touches (custom SQL's loaded
 * copies catch up by them, `sql/record-store-row-source.ts`) and how each index slot's values move (per-value
 * totals, `value-counter.ts`, which also has the exactness argument).
 *
 * Layout, in the dataset's meta partition:
 * - `change#<position>`: the claim. A create `{k: 'c', v}` (its record id is the position, or `id` when a
 *   retry had to take a fresh position); an update `{k: 'u', id, r (the new revision), p (the position of the
 *   keyed write it replaces, when the record had one), b, a}` with the count keys before and after of the slots
 *   it changes, or a direct update `{k: 'u', id, d: 1, b: {}, a: {}}` (no read before it: no `p`, and `r` only
 *   once its writer learnt it from the write); a batch `{k: 'b', ids (id runs), n}`, with `c` (JSON text: per slot, each
 *   count key with its number of records) for the slots where its records take few distinct keys (batch-counts.ts),
 *   and `m` (id runs) once its writer or a check found that only these records were written.
 * - `change-slot#<slot>#<position>`: a batch's values in one slot, one per record in id order: the distinct
 *   count keys `d` (JSON text) and, per record, the index of its key in `d` (`r`, fixed-width base-64 digits).
 *
 * Positions are ULIDs of the clock just before the claim (a create's is its record id, which is that clock's),
 * so claims sort in time order. A claim must land within `CLAIM_LATE_MS` of its position's time, or its writer
 * withdraws it and claims again before writing any record (`claimChange`): a reader that read the claims up to
 * time T has seen every claim positioned before T − `CLAIM_LATE_MS` − `CLOCK_SKEW_MS`.
 *
 * Claims carry no expiry: totals, folds and checks read them back to the oldest head and the checked position,
 * however old. They are deleted by the fold beside the writes once every reader has passed them
 * (change-compaction.ts; docs/totals-and-changes.md, "What the store keeps").
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { decodeTime, ulid } from 'ulid';
import type { CapacityMeter } from '../observability/capacity-meter';
import { type BatchCounts, inlineCountsAttribute, readInlineCounts } from './batch-counts';
import { getInBatches, writeInBatches } from './batch-items';
import { conditionalWrite } from './conditional-write';
import { countOfRuns, idRuns, idsOfRuns } from './id-blocks';
import {
  CHANGE_PREFIX,
  CHANGE_SLOT_PREFIX,
  datasetChangeKey,
  datasetChangeSlotKey,
  datasetMetaPartition,
} from './item-keys';
import { RecordAttr } from './table-definitions';

/** How long after its position's time a claim may land; a later one is withdrawn and made again. */
export const CLAIM_LATE_MS = 2_000;
/** How far apart the clocks of two hosts may be (they are synchronised to milliseconds; this is generous). */
export const CLOCK_SKEW_MS = 1_000;
/** A reader that read claims at time T reads again from T minus this: nothing older can still land. */
export const CLAIM_REREAD_MS = CLAIM_LATE_MS + CLOCK_SKEW_MS;

/** Per index slot (`countSlotKey`), a count key (`countKeyOf`). */
export type SlotValues = Readonly<Record<string, string>>;

export type ChangeClaim =
  | { kind: 'create'; id: string; values: SlotValues }
  | {
      kind: 'update';
      id: string;
      /**
       * The revision the write gives the record, as far as it is known when the claim is made: a keyed update's
       * is at least this (direct updates may come between its read and its write), a direct update's is not
       * known (absent). The writer writes the true one into the claim once its write told it (`settleRevision`).
       */
      revision?: number;
      /** The position of the change item of the record's previous keyed write (its `@cpos`), when it had one. */
      previous?: string;
      /** The slots the update changes, before and after. */
      before: SlotValues;
      after: SlotValues;
      /** A direct update: written without a read, it moves no index key and is no link of the `@cpos` chain. */
      direct?: true;
    }
  | {
      kind: 'batch';
      /** The new records' ids, ascending. */
      ids: readonly string[];
      /** Per slot, the count key of each record, in the order of `ids`. */
      values: Readonly<Record<string, readonly string[]>>;
    };

/** A claim as read back: where it is, and for a batch the records found written when only some were. */
export type StoredClaim =
  | { position: string; time: number; kind: 'create'; id: string; values: SlotValues }
  | {
      position: string;
      time: number;
      kind: 'update';
      id: string;
      /** Absent while a direct update's revision is not known (its writer had not written it yet, or died). */
      revision?: number;
      previous?: string;
      before: SlotValues;
      after: SlotValues;
      direct?: true;
    }
  | {
      position: string;
      time: number;
      kind: 'batch';
      ids: string[];
      landed?: ReadonlySet<string>;
      /** Per slot of few distinct keys, the batch's records per key (batch-counts.ts). */
      counts?: BatchCounts;
    };

/** A batch's values in one slot, as read back: per record id, its count key. */
export type BatchSlotValues = ReadonlyMap<string, string>;

const RADIX = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export class ChangeItems {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Write a claim at `position` (a batch: its item and its slots' items, at once). */
  async put(datasetCode: string, position: string, claim: ChangeClaim, meter: CapacityMeter): Promise<void> {
    const writes = [
      this.putItem({ ...datasetChangeKey(datasetCode, position), ...claimAttributes(position, claim) }, meter),
    ];
    if (claim.kind === 'batch') {
      for (const [slot, keys] of Object.entries(claim.values)) {
        writes.push(
          this.putItem({ ...datasetChangeSlotKey(datasetCode, slot, position), ...slotValuesAttributes(keys) }, meter),
        );
      }
    }
    await Promise.all(writes);
  }

  /** Withdraw a claim whose records were not written (its slots' items stay, unread without it). */
  async withdraw(datasetCode: string, position: string, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new DeleteCommand({
        TableName: this.table,
        Key: datasetChangeKey(datasetCode, position),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /** Withdraw several claims (found not written by a check). */
  async withdrawAll(datasetCode: string, positions: readonly string[], meter: CapacityMeter): Promise<void> {
    await writeInBatches(
      this.client,
      this.table,
      positions.map((position) => ({ DeleteRequest: { Key: datasetChangeKey(datasetCode, position) } })),
      meter,
    );
  }

  /** Write the revision an update's write gave its record into its claim (when the claim did not know it). */
  async settleRevision(datasetCode: string, position: string, revision: number, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: datasetChangeKey(datasetCode, position),
          UpdateExpression: 'SET #r = :r',
          ConditionExpression: 'attribute_exists(#sk)',
          ExpressionAttributeNames: { '#r': 'r', '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: { ':r': revision },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /** Say which records of a batch claim were written (the others never will be). */
  async markLanded(
    datasetCode: string,
    position: string,
    landed: readonly string[],
    meter: CapacityMeter,
  ): Promise<void> {
    const result = await this.client
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: datasetChangeKey(datasetCode, position),
          UpdateExpression: 'SET #m = :m',
          ConditionExpression: 'attribute_exists(#sk)',
          ExpressionAttributeNames: { '#m': 'm', '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: { ':m': idRuns([...landed].sort()) },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      )
      .catch((error: unknown) => {
        if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
        throw error;
      });
    meter.addWrite(result?.ConsumedCapacity);
  }

  /** One claim, read consistently (undefined when there is none at `position`). */
  async read(datasetCode: string, position: string, meter: CapacityMeter): Promise<StoredClaim | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: datasetChangeKey(datasetCode, position),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Item ? readClaim(position, result.Item) : undefined;
  }

  /** Whether a batch claim carries values for index slot `slot` (read consistently). */
  async hasSlotValues(datasetCode: string, slot: string, position: string, meter: CapacityMeter): Promise<boolean> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: datasetChangeSlotKey(datasetCode, slot, position),
        ConsistentRead: true,
        ProjectionExpression: '#sk',
        ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Item !== undefined;
  }

  /**
   * The claims positioned after `after` (all of them without it), oldest first, up to `through` (inclusive) when
   * given. `consistent`: every claim written before the read is in it (the checks and folds of totals, custom
   * SQL's catch-up).
   */
  async after(
    datasetCode: string,
    after: string | undefined,
    meter: CapacityMeter,
    consistent: boolean,
    through?: string,
  ): Promise<StoredClaim[]> {
    const { items } = await this.query(
      datasetCode,
      `${CHANGE_PREFIX}${after ?? ''}`,
      `${CHANGE_PREFIX}${through ?? '~'}`,
      after !== undefined,
      meter,
      consistent,
    );
    return items.map((item) => readClaim((item[RecordAttr.sortKey] as string).slice(CHANGE_PREFIX.length), item));
  }

  /**
   * A batch's values in one slot, by batch position, for the batches positioned after `after` (up to `through`,
   * inclusive, when given).
   */
  async slotValuesAfter(
    datasetCode: string,
    slot: string,
    after: string | undefined,
    ids: (position: string) => readonly string[] | undefined,
    meter: CapacityMeter,
    consistent: boolean,
    through?: string,
  ): Promise<Map<string, BatchSlotValues>> {
    const prefix = `${CHANGE_SLOT_PREFIX}${slot}#`;
    const { items } = await this.query(
      datasetCode,
      `${prefix}${after ?? ''}`,
      `${prefix}${through ?? '~'}`,
      after !== undefined,
      meter,
      consistent,
    );
    const found = new Map<string, BatchSlotValues>();
    for (const item of items) {
      const position = (item[RecordAttr.sortKey] as string).slice(prefix.length);
      const batchIds = ids(position);
      if (batchIds) found.set(position, readSlotValues(item, batchIds));
    }
    return found;
  }

  /** Some batches' values in one slot (a Get each, for a few batches among many), by batch position. */
  async slotValuesOf(
    datasetCode: string,
    slot: string,
    batches: ReadonlyMap<string, readonly string[]>,
    meter: CapacityMeter,
    consistent: boolean,
  ): Promise<Map<string, BatchSlotValues>> {
    const prefix = `${CHANGE_SLOT_PREFIX}${slot}#`;
    const found = new Map<string, BatchSlotValues>();
    const keys = [...batches.keys()].map((position) => datasetChangeSlotKey(datasetCode, slot, position));
    await getInBatches(this.client, this.table, keys, { ConsistentRead: consistent }, meter, (items) => {
      for (const item of items) {
        const position = (item[RecordAttr.sortKey] as string).slice(prefix.length);
        const ids = batches.get(position);
        if (ids) found.set(position, readSlotValues(item, ids));
      }
    });
    return found;
  }

  /**
   * The claims positioned after `after`, read consistently like `after`, but no more than a caller will pay for:
   * before each page, `allowance` is told the claims read so far and says how many more may be read (0: stop);
   * it may look something up first (custom SQL counts the dataset's records once when its share runs out).
   * `complete` says whether every claim after `after` was read (custom SQL deciding between a catch-up and a
   * fresh load reads no further than the cheaper of the two).
   */
  async afterWithin(
    datasetCode: string,
    after: string | undefined,
    meter: CapacityMeter,
    allowance: (read: readonly StoredClaim[]) => number | Promise<number>,
  ): Promise<{ claims: StoredClaim[]; complete: boolean }> {
    const claims: StoredClaim[] = [];
    const { complete } = await this.query(
      datasetCode,
      `${CHANGE_PREFIX}${after ?? ''}`,
      `${CHANGE_PREFIX}~`,
      after !== undefined,
      meter,
      true,
      (items) => {
        for (const item of items) {
          claims.push(readClaim((item[RecordAttr.sortKey] as string).slice(CHANGE_PREFIX.length), item));
        }
        return allowance(claims);
      },
    );
    return { claims, complete };
  }

  /**
   * The first claims positioned after `after` up to `through` (inclusive), read consistently like `after`, as
   * many as hold at most `records` records' worth (a batch its records written, every other claim one; at least
   * one claim), and whether they are all the claims up to `through`. Read page by page, each page asking for no
   * more claims than the records left would hold at the heaviest claim seen so far (`heaviest`, from the reads
   * before, and returned), and none once fewer records are left than that: a fold reads each round's claims this
   * way, so that what it holds follows a round, not the backlog. Only a claim heavier than any before makes a page
   * read past the window (what it read past is dropped, its ids not expanded, and read again by the next window).
   */
  async window(
    datasetCode: string,
    after: string | undefined,
    through: string,
    size: { records: number; heaviest: number },
    meter: CapacityMeter,
  ): Promise<{ claims: StoredClaim[]; complete: boolean; heaviest: number }> {
    const { records } = size;
    const claims: StoredClaim[] = [];
    let taken = 0;
    let heaviest = Math.max(1, size.heaviest);
    let full = false;
    const { complete } = await this.query(
      datasetCode,
      `${CHANGE_PREFIX}${after ?? ''}`,
      `${CHANGE_PREFIX}${through}`,
      after !== undefined,
      meter,
      true,
      (items) => {
        for (const item of items) {
          const weight = claimWeight(item);
          heaviest = Math.max(heaviest, weight);
          if (claims.length > 0 && taken + weight > records) {
            full = true;
            break;
          }
          claims.push(readClaim((item[RecordAttr.sortKey] as string).slice(CHANGE_PREFIX.length), item));
          taken += weight;
        }
        const fits = Math.floor((records - taken) / heaviest);
        if (full || (claims.length > 0 && fits < 1)) return 0;
        return Math.max(1, Math.min(WINDOW_PAGE_CLAIMS, fits));
      },
      false,
    );
    return { claims, complete: complete && !full, heaviest };
  }

  private async query(
    datasetCode: string,
    from: string,
    to: string,
    exclusive: boolean,
    meter: CapacityMeter,
    consistent: boolean,
    /** Given each page's items (none before the first), how many items the next page may hold (0: stop). */
    nextPage?: (page: readonly Record<string, unknown>[]) => number | Promise<number>,
    /** Whether to return the items read (a caller taking them page by page in `nextPage` needs not). */
    keep = true,
  ): Promise<{ items: Record<string, unknown>[]; complete: boolean }> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    let limit = await nextPage?.([]);
    do {
      if (limit !== undefined && limit <= 0) return { items, complete: false };
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: {
            ':pk': datasetMetaPartition(datasetCode),
            // Positions are ULIDs of one length: the least key after `from` is `from` and one more character.
            ':from': exclusive ? `${from}0` : from,
            ':to': to,
          },
          ConsistentRead: consistent,
          ExclusiveStartKey: startKey,
          ...(limit === undefined ? {} : { Limit: limit }),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      if (keep) items.push(...(result.Items ?? []));
      startKey = result.LastEvaluatedKey;
      if (nextPage) limit = await nextPage(result.Items ?? []);
    } while (startKey);
    return { items, complete: true };
  }

  private async putItem(item: Record<string, unknown>, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new PutCommand({ TableName: this.table, Item: item, ReturnConsumedCapacity: 'TOTAL' }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }
}

/**
 * Claim a write: the claim lands at a position taken from the clock just before, within `CLAIM_LATE_MS` of it,
 * or it is withdrawn and made again at a new position. Returns the position, which the record write stores in
 * `@cpos`. A create's position is its record id while the id is fresh; a create retried with an older id
 * withdraws the claim an earlier attempt may have left at that id first.
 */
export async function claimChange(
  changes: ChangeItems,
  datasetCode: string,
  claim: ChangeClaim,
  now: () => number,
  meter: CapacityMeter,
): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = now();
    let position: string;
    // A create's id is a ULID of the clock just before: its position, unless it is older (a retry's) or ahead.
    const idAge = claim.kind === 'create' ? started - decodeTime(claim.id) : Number.NaN;
    if (claim.kind === 'create' && attempt === 0 && idAge >= 0 && idAge < CLAIM_LATE_MS / 2) {
      position = claim.id;
    } else {
      if (claim.kind === 'create' && attempt === 0) await changes.withdraw(datasetCode, claim.id, meter);
      position = ulid(started);
    }
    await changes.put(datasetCode, position, claim, meter);
    if (now() - decodeTime(position) <= CLAIM_LATE_MS) return position;
    await changes.withdraw(datasetCode, position, meter);
  }
  throw new Error('change items took too long to write: the store is too slow to accept writes now');
}

function claimAttributes(position: string, claim: ChangeClaim): Record<string, unknown> {
  switch (claim.kind) {
    case 'create':
      return { k: 'c', v: { ...claim.values }, ...(claim.id === position ? {} : { id: claim.id }) };
    case 'update':
      return {
        k: 'u',
        id: claim.id,
        ...(claim.revision === undefined ? {} : { r: claim.revision }),
        ...(claim.previous === undefined ? {} : { p: claim.previous }),
        b: { ...claim.before },
        a: { ...claim.after },
        ...(claim.direct ? { d: 1 } : {}),
      };
    case 'batch': {
      const counts = inlineCountsAttribute(claim.values);
      return { k: 'b', ids: idRuns(claim.ids), n: claim.ids.length, ...(counts === undefined ? {} : { c: counts }) };
    }
  }
}

/** How many claims a fold's read asks for at most per page (a page of small claims stays well below 1 MB). */
const WINDOW_PAGE_CLAIMS = 1_000;

/** Records' worth of counting a stored claim holds, without expanding its ids: a batch its written records. */
function claimWeight(item: Record<string, unknown>): number {
  if (item.k !== 'b') return 1;
  return countOfRuns(typeof item.m === 'string' ? item.m : (item.ids as string));
}

function readClaim(position: string, item: Record<string, unknown>): StoredClaim {
  const time = decodeTime(position);
  switch (item.k) {
    case 'u':
      return {
        position,
        time,
        kind: 'update',
        id: item.id as string,
        ...(typeof item.r === 'number' ? { revision: item.r } : {}),
        ...(typeof item.p === 'string' ? { previous: item.p } : {}),
        before: (item.b as SlotValues | undefined) ?? {},
        after: (item.a as SlotValues | undefined) ?? {},
        ...(item.d === 1 ? { direct: true as const } : {}),
      };
    case 'b':
      return {
        position,
        time,
        kind: 'batch',
        ids: idsOfRuns(item.ids as string),
        ...(typeof item.m === 'string' ? { landed: new Set(idsOfRuns(item.m)) } : {}),
        ...(typeof item.c === 'string' ? { counts: readInlineCounts(item.c) } : {}),
      };
    default:
      return {
        position,
        time,
        kind: 'create',
        id: typeof item.id === 'string' ? item.id : position,
        values: (item.v as SlotValues | undefined) ?? {},
      };
  }
}

/** A slot's values of a batch: the distinct keys and one fixed-width base-64 index per record. */
function slotValuesAttributes(keys: readonly string[]): Record<string, unknown> {
  const distinct = [...new Set(keys)];
  const index = new Map(distinct.map((key, i) => [key, i]));
  const width = digitsFor(distinct.length);
  let digits = '';
  for (const key of keys) digits += encodeDigits(index.get(key) as number, width);
  return { d: JSON.stringify(distinct), r: digits };
}

function readSlotValues(item: Record<string, unknown>, ids: readonly string[]): BatchSlotValues {
  const distinct = JSON.parse(item.d as string) as string[];
  const digits = item.r as string;
  const width = digitsFor(distinct.length);
  const values = new Map<string, string>();
  ids.forEach((id, i) => {
    values.set(id, distinct[decodeDigits(digits, i * width, width)] as string);
  });
  return values;
}

function digitsFor(count: number): number {
  let width = 1;
  while (RADIX.length ** width < count) width += 1;
  return width;
}

function encodeDigits(value: number, width: number): string {
  let text = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    text = (RADIX[rest % RADIX.length] as string) + text;
    rest = Math.floor(rest / RADIX.length);
  }
  return text;
}

function decodeDigits(text: string, start: number, width: number): number {
  let value = 0;
  for (let i = 0; i < width; i++) value = value * RADIX.length + RADIX.indexOf(text.charAt(start + i));
  return value;
}
