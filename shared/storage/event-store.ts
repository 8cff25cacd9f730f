/**
 * The change log's events in the events table (docs/interface.md §18; what goes in them is changes/change-events.ts):
 * one item per record change, keyed by dataset, id and revision, written with a condition that it is new, so a
 * change read twice from the stream (a retried batch) is logged once. A writer that is the only one logging its
 * changes, and whose writes cannot land after it stopped, logs a batch with one consistent read and batch writes
 * instead (`logAll`): the same "logged once", without a request per change.
 *
 * Each event also carries its position (`@pos`, a ULID of the moment it was written) in the feed index: the feed
 * reads a dataset's events in that order. An event whose write ends more than `settleMs` after its position was
 * taken is moved to a fresh position at once (the writer's clock decides, before it reports the change done), so
 * once `settleMs` has passed since time T, no event with a position of time ≤ T can still appear: a reader that
 * stops at `now − settleMs` never skips one (the argument of storage/record-counter.ts, for another writer). A
 * reader that saw it at its first position may see it once more at the second: the feed is at least once, and
 * the `eventId` is the same.
 *
 * What changed (the record after the change, and the values before of the fields that changed) is kept as JSON,
 * compressed above 1 KB; an event too large for one item (a record near 400 KB that does not compress) is split
 * over pieces written before it, so every change can be logged whatever its size.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { decodeTime, encodeTime, ulid } from 'ulid';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordItem } from '../records/record-codec';
import { getInBatches, writeInBatches } from './batch-items';
import { conditionalWrite } from './conditional-write';
import { eventKey, eventPartition } from './item-keys';
import { EventAttr, FEED_INDEX } from './table-definitions';

/** What the change log keeps of one record change. */
export interface LoggedChange {
  datasetCode: string;
  id: string;
  revision: number;
  kind: 'created' | 'updated';
  /** When the write was made (epoch ms). */
  occurredAt: number;
  actor: { appCode: string; userId: string | null };
  requestId: string;
  /** The record after the change: its dataset fields (stored form) and timestamps, nothing of the service's own. */
  item: RecordItem;
  /** updated: the dataset fields the change changed. */
  changed?: string[];
  /**
   * updated: each changed field's stored value before the change (null when it had none). A value too large to
   * keep (over 4 KB) is left out: it is unknown (changes/change-events.ts says what that means).
   */
  before?: Record<string, unknown>;
}

/** A logged change with its place in the feed. */
export interface StoredChange extends LoggedChange {
  position: string;
}

/** Kept as text up to this size, compressed above it. */
const PLAIN_PAYLOAD_BYTES = 1024;
/** The largest piece of payload one item holds (an item is at most 400 KB, with its keys and metadata). */
const PIECE_BYTES = 350 * 1024;

/** The greatest position of time `ms`: every position taken at or before `ms` sorts at or before it. */
export function lastPositionAt(ms: number): string {
  return `${encodeTime(Math.max(0, ms), 10)}ZZZZZZZZZZZZZZZZ`;
}

/** A fresh position of time `ms` for an event written late (unique: its random part is new). */
function latePosition(ms: number): string {
  return ulid(ms);
}

/** The least position of time `ms`. */
export function firstPositionAt(ms: number): string {
  return `${encodeTime(Math.max(0, ms), 10)}0000000000000000`;
}

/** The time a position was taken (epoch ms); `undefined` when it is not a position. */
export function positionTime(position: string): number | undefined {
  if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(position)) return undefined;
  try {
    return decodeTime(position);
  } catch {
    return undefined;
  }
}

/** How long after its position an event's write may end, by default (the feed reads no later than now − this). */
export const DEFAULT_SETTLE_MS = 5_000;

/** A page of one dataset's events in feed order. */
export interface FeedRead {
  changes: StoredChange[];
  /** Whether the dataset has more events in the range asked for. */
  more: boolean;
}

export class EventStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    /** How long after its position an event may still appear: the feed reads no later than now − this. */
    readonly settleMs = DEFAULT_SETTLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Log a change at `position`, unless it is logged already (then the first one stays, with its position).
   * `expiresAt`: when DynamoDB's TTL may remove it (epoch ms). Answers whether this call logged it.
   */
  async log(change: LoggedChange, position: string, expiresAt: number, meter: CapacityMeter): Promise<boolean> {
    const payload = encodePayload(change);
    // Pieces first: once the event is there, every piece it names is there too.
    for (const piece of pieceItems(change, expiresAt, payload)) {
      const result = await this.client.send(
        new PutCommand({ TableName: this.table, Item: piece, ReturnConsumedCapacity: 'TOTAL' }),
      );
      meter.addWrite(result.ConsumedCapacity);
    }
    const written = await conditionalWrite(meter, () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: eventItem(change, position, expiresAt, payload),
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': EventAttr.sortKey },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    if (written === undefined) return false;
    await this.moveIfLate(change, position, meter);
    return true;
  }

  /**
   * Log several changes, each at the position `nextPosition` gives it (taken in the order given, just before the
   * writes), unless it is logged already. For a writer that is the only one logging these changes and whose writes
   * cannot land after it stopped (the stream's only reader, in the process of an embedded store): which are logged
   * already is one consistent read, and the others are written in batches, without a condition. That is the same
   * "logged once" as `log` for such a writer, in a few requests instead of one per change. Answers, per change in
   * the order given, its position (the stored one when it was logged already) and whether this call logged it.
   */
  async logAll(
    entries: readonly { change: LoggedChange; expiresAt: number }[],
    nextPosition: () => string,
    meter: CapacityMeter,
  ): Promise<{ position: string; logged: boolean }[]> {
    const keyOf = ({ change }: { change: LoggedChange }) => eventKey(change.datasetCode, change.id, change.revision);
    const stored = new Map<string, string>();
    for (const item of await this.getAll(uniqueKeys(entries.map(keyOf)), meter)) {
      const position = item[EventAttr.position];
      stored.set(keyText(item), typeof position === 'string' ? position : '');
    }
    const answers: { position: string; logged: boolean }[] = [];
    const pieces: Record<string, unknown>[] = [];
    const events: Record<string, unknown>[] = [];
    for (const entry of entries) {
      const key = keyText(keyOf(entry));
      const position = nextPosition();
      const known = stored.get(key);
      if (known !== undefined) {
        answers.push({ position: known || position, logged: false });
        continue;
      }
      stored.set(key, position);
      const payload = encodePayload(entry.change);
      pieces.push(...pieceItems(entry.change, entry.expiresAt, payload));
      events.push(eventItem(entry.change, position, entry.expiresAt, payload));
      answers.push({ position, logged: true });
    }
    // Pieces first: once an event is there, every piece it names is there too.
    await this.putAll(pieces, meter);
    await this.putAll(events, meter);
    for (const [index, entry] of entries.entries()) {
      const answer = answers[index] as { position: string; logged: boolean };
      if (answer.logged) await this.moveIfLate(entry.change, answer.position, meter);
    }
    return answers;
  }

  /** Move an event whose write ended too late for a reader that has already passed `position` to a fresh one. */
  private async moveIfLate(change: LoggedChange, position: string, meter: CapacityMeter): Promise<void> {
    if (this.now() - (positionTime(position) ?? 0) <= this.settleMs) return;
    const result = await this.client.send(
      new UpdateCommand({
        TableName: this.table,
        Key: eventKey(change.datasetCode, change.id, change.revision),
        UpdateExpression: 'SET #pos = :pos',
        ExpressionAttributeNames: { '#pos': EventAttr.position },
        ExpressionAttributeValues: { ':pos': latePosition(this.now()) },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /** The items of these keys that exist (their keys and positions), read consistently. */
  private async getAll(keys: Record<string, string>[], meter: CapacityMeter): Promise<Record<string, unknown>[]> {
    const found: Record<string, unknown>[] = [];
    const read = {
      ConsistentRead: true,
      ProjectionExpression: '#pk, #sk, #pos',
      ExpressionAttributeNames: { '#pk': EventAttr.partitionKey, '#sk': EventAttr.sortKey, '#pos': EventAttr.position },
    };
    await getInBatches(this.client, this.table, keys, read, meter, (items) => found.push(...items));
    return found;
  }

  /** Put items in batches of 25, again for what DynamoDB left unprocessed. */
  private async putAll(items: readonly Record<string, unknown>[], meter: CapacityMeter): Promise<void> {
    await writeInBatches(
      this.client,
      this.table,
      items.map((item) => ({ PutRequest: { Item: item } })),
      meter,
    );
  }

  /** One logged change, read consistently; `undefined` when it is not (or no longer) there. */
  async get(
    datasetCode: string,
    id: string,
    revision: number,
    meter: CapacityMeter,
  ): Promise<StoredChange | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: eventKey(datasetCode, id, revision),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    if (!result.Item) return undefined;
    const [change] = await this.decode(datasetCode, [result.Item], meter);
    return change;
  }

  /**
   * A dataset's events with a position after `after` (exclusive; from the start of the range without it) and
   * at most `through`, oldest first, at most `limit` of them.
   */
  async read(
    datasetCode: string,
    range: { after?: string | undefined; from: string; through: string },
    limit: number,
    meter: CapacityMeter,
  ): Promise<FeedRead> {
    // Positions are 26 characters: the least string above `after` that a position can be is `after` + '0'.
    const from = range.after !== undefined && `${range.after}0` > range.from ? `${range.after}0` : range.from;
    if (from > range.through) return { changes: [], more: false };
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    let more = false;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: FEED_INDEX.indexName,
          KeyConditionExpression: '#pk = :pk AND #pos BETWEEN :from AND :through',
          ExpressionAttributeNames: { '#pk': EventAttr.partitionKey, '#pos': EventAttr.position },
          ExpressionAttributeValues: { ':pk': eventPartition(datasetCode), ':from': from, ':through': range.through },
          Limit: limit + 1 - items.length,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      items.push(...(result.Items ?? []));
      startKey = result.LastEvaluatedKey;
    } while (startKey && items.length <= limit);
    if (items.length > limit) {
      more = true;
      items.length = limit;
    }
    return { changes: await this.decode(datasetCode, items, meter), more };
  }

  private async decode(
    datasetCode: string,
    items: readonly Record<string, unknown>[],
    meter: CapacityMeter,
  ): Promise<StoredChange[]> {
    const pieces = await this.readPieces(datasetCode, items, meter);
    return items.map((item) => {
      const { id, revision } = changeOfSortKey(item[EventAttr.sortKey]);
      const payload = decodePayload(item, pieces.get(`${id}#${revision}`));
      const change: StoredChange = {
        datasetCode,
        id,
        revision,
        kind: item.k === 'created' ? 'created' : 'updated',
        occurredAt: item.t as number,
        actor: { appCode: item.a as string, userId: typeof item.u === 'string' ? item.u : null },
        requestId: item.r as string,
        item: payload.item,
        position: item[EventAttr.position] as string,
      };
      if (Array.isArray(item.c)) change.changed = item.c as string[];
      if (payload.before) change.before = payload.before;
      return change;
    });
  }

  /** The pieces of the events among `items` that were too large for one item, by `id#revision`. */
  private async readPieces(
    datasetCode: string,
    items: readonly Record<string, unknown>[],
    meter: CapacityMeter,
  ): Promise<Map<string, Uint8Array[]>> {
    const pieces = new Map<string, Uint8Array[]>();
    for (const item of items) {
      const count = typeof item.n === 'number' ? item.n : 0;
      if (count === 0) continue;
      const { id, revision } = changeOfSortKey(item[EventAttr.sortKey]);
      const keys = Array.from({ length: count }, (_, k) => eventKey(datasetCode, id, revision, k + 1));
      const found = new Map<string, unknown>();
      await getInBatches(this.client, this.table, keys, { ConsistentRead: true }, meter, (items) => {
        for (const piece of items) found.set(piece[EventAttr.sortKey] as string, piece.z);
      });
      const ordered = keys.map((key) => found.get(key[EventAttr.sortKey] as string));
      if (ordered.some((piece) => !(piece instanceof Uint8Array))) {
        throw new Error(`event ${datasetCode}/${id}#${revision} is missing a piece of its payload`);
      }
      pieces.set(`${id}#${revision}`, ordered as Uint8Array[]);
    }
    return pieces;
  }
}

/** The record id and revision an event's sort key names (`<id>#<revision>`; an id may hold `#` itself). */
function changeOfSortKey(sortKey: unknown): { id: string; revision: number } {
  const text = String(sortKey);
  const cut = text.lastIndexOf('#');
  return { id: text.slice(0, cut), revision: Number(text.slice(cut + 1)) };
}

interface EncodedPayload {
  /** Attributes of the event item itself. */
  inline: Record<string, unknown>;
  /** Pieces written as items of their own (an event too large for one item). */
  pieces: Uint8Array[];
}

/** An event's item: its key, its place in the feed, what the change was, and its payload (or how many pieces). */
function eventItem(
  change: LoggedChange,
  position: string,
  expiresAt: number,
  payload: EncodedPayload,
): Record<string, unknown> {
  return {
    ...eventKey(change.datasetCode, change.id, change.revision),
    [EventAttr.position]: position,
    [EventAttr.expires]: Math.ceil(expiresAt / 1000),
    k: change.kind,
    t: change.occurredAt,
    a: change.actor.appCode,
    u: change.actor.userId,
    r: change.requestId,
    ...(change.changed ? { c: change.changed } : {}),
    ...payload.inline,
  };
}

/** The items holding the pieces of a payload too large for its event's item. */
function pieceItems(change: LoggedChange, expiresAt: number, payload: EncodedPayload): Record<string, unknown>[] {
  return payload.pieces.map((piece, index) => ({
    ...eventKey(change.datasetCode, change.id, change.revision, index + 1),
    z: piece,
    [EventAttr.expires]: Math.ceil(expiresAt / 1000),
  }));
}

/** A key as text, to find it among others. */
function keyText(item: Record<string, unknown>): string {
  return `${String(item[EventAttr.partitionKey])}\u0000${String(item[EventAttr.sortKey])}`;
}

/** Keys without repeats (a batch read refuses a key asked twice). */
function uniqueKeys(keys: Record<string, string>[]): Record<string, string>[] {
  return [...new Map(keys.map((key) => [keyText(key), key])).values()];
}

function encodePayload(change: LoggedChange): EncodedPayload {
  const text = JSON.stringify(change.before ? { item: change.item, before: change.before } : { item: change.item });
  if (Buffer.byteLength(text) <= PLAIN_PAYLOAD_BYTES) return { inline: { j: text }, pieces: [] };
  const compressed = gzipSync(text);
  if (compressed.length <= PIECE_BYTES) return { inline: { z: new Uint8Array(compressed) }, pieces: [] };
  const pieces: Uint8Array[] = [];
  for (let offset = 0; offset < compressed.length; offset += PIECE_BYTES) {
    pieces.push(new Uint8Array(compressed.subarray(offset, offset + PIECE_BYTES)));
  }
  return { inline: { n: pieces.length }, pieces };
}

function decodePayload(
  item: Record<string, unknown>,
  pieces: Uint8Array[] | undefined,
): { item: RecordItem; before?: Record<string, unknown> } {
  let text: string;
  if (typeof item.j === 'string') text = item.j;
  else if (item.z instanceof Uint8Array) text = gunzipSync(item.z).toString('utf8');
  else if (pieces) text = gunzipSync(Buffer.concat(pieces)).toString('utf8');
  else throw new Error('event item without a payload');
  return JSON.parse(text) as { item: RecordItem; before?: Record<string, unknown> };
}
