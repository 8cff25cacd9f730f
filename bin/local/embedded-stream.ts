/**
 * The embedded store's twin of DynamoDB Streams (NEW_AND_OLD_IMAGES), for the change log of local runs
 * (docs/interface.md §18). dynalite has no streams, so this adds one where dynalite writes an item: every put or
 * delete of an item of a streamed table is written together with its stream record (the item before and after)
 * in one LevelDB batch, while dynalite holds that item's lock. So, as with DynamoDB Streams:
 *
 * - each successful item change has exactly one stream record, and a failed one (a condition that did not hold)
 *   has none: they are one atomic write, which a `kill -9` cannot split (LevelDB replays or drops a batch whole);
 * - a given item's records are in the order its changes were made (the item's lock orders them, and sequence
 *   numbers only grow);
 * - a reader never passes a record still to land: writes of different items take their sequence numbers in one
 *   order but may land in another (LevelDB runs batches on several threads), so a read stops short of the oldest
 *   sequence number whose batch has not landed. Without that, a reader that read a later record first would move
 *   its checkpoint past the earlier one, which would land behind it and never be read: a lost event;
 * - records persist with the store (`--data-dir`), so what the process had not read when it stopped is read when
 *   it starts again; and their numbering goes on where it was, also when every record had been read and trimmed.
 *
 * It is read through the port of the stream poller (shared/changes/stream-poller.ts), as one shard per table.
 * It reaches into dynalite's store (the `dynalite/db` module's `create` and `getItemDb`), which the pinned version
 * has; test/integration/bin/local/embedded-stream.test.ts checks those parts are there.
 */
import { EventEmitter } from 'node:events';
import type { ItemChangeRecord } from '../../shared/changes/change-stream';
import type { ChangeStreamSource } from '../../shared/changes/stream-poller';

/** The parts of dynalite's LevelDB store this module uses. */
interface LevelIterator {
  all(): Promise<[string, unknown][]>;
}
interface LevelStore {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  batch(operations: { type: 'put' | 'del'; key: string; value?: unknown }[]): Promise<void>;
  iterator(options: { gt?: string; lt?: string; limit?: number; reverse?: boolean }): LevelIterator;
  clear(range: { gt: string; lte: string }): Promise<void>;
}
interface ItemDb {
  put(key: string, value: unknown, callback: (error?: Error | null) => void): void;
  del(key: string, callback: (error?: Error | null) => void): void;
}
export interface DynaliteStore {
  db: LevelStore;
  getItemDb(name: string): ItemDb;
  getTable(
    name: string,
    callback: (error: Error | null, table?: { KeySchema: { AttributeName: string }[] }) => void,
  ): void;
}

const SEQUENCE_DIGITS = 20;
const SHARD = 'shard-0';

function journalPrefix(table: string): string {
  return `stream-${table}~`;
}

/**
 * Where the last sequence number a trim forgot is kept: a trim through a table's last record leaves its journal
 * empty, and a store reopened then must go on numbering after it, not from 1 (the reader's checkpoint is past those
 * numbers, so it would skip every record until the numbers passed it again). No table name holds a `!`, so this
 * key is never inside a journal's range.
 */
function trimmedKey(table: string): string {
  return `stream!${table}`;
}

/** The stream of the streamed tables of one dynalite store. */
export class EmbeddedStream {
  private readonly changed = new EventEmitter();
  private sequence = 0n;
  /** Sequence numbers taken whose batch has not landed, ascending (they are taken in that order). */
  private readonly landing = new Set<bigint>();
  private ready: Promise<void>;
  private readonly hooked = new WeakSet<object>();
  /** Per table, the last record trimmed by this process (the next trim starts after it). */
  private readonly trimmedThrough = new Map<string, string>();

  constructor(
    private readonly store: DynaliteStore,
    private readonly tables: ReadonlySet<string>,
  ) {
    this.ready = this.loadSequence();
    // A store that fails to open fails its start (embedded-dynamo.ts); whoever awaits `ready` later sees the reason.
    this.ready.catch(() => undefined);
    const getItemDb = store.getItemDb;
    store.getItemDb = (name: string) => {
      const itemDb = getItemDb(name);
      if (this.tables.has(name) && !this.hooked.has(itemDb)) this.hook(name, itemDb);
      return itemDb;
    };
  }

  /** The stream source of one table, for the stream poller. */
  source(table: string): ChangeStreamSource {
    return {
      name: table,
      shards: async () => [SHARD],
      read: (_shard, after, limit) => this.read(table, after, limit),
      trim: (_shard, through) => this.trim(table, through),
      onChange: (wake) => {
        this.changed.on(table, wake);
        return () => this.changed.off(table, wake);
      },
      // The store's numbering is shared by its streamed tables: a table's own newest record is at or before it.
      latest: async () => {
        await this.ready;
        return this.sequence === 0n ? undefined : this.sequence.toString().padStart(SEQUENCE_DIGITS, '0');
      },
    };
  }

  /** The last sequence number in use (the stream continues after it when the store is reopened). */
  private async loadSequence(): Promise<void> {
    for (const table of this.tables) {
      const prefix = journalPrefix(table);
      const [last] = await this.store.db.iterator({ gt: prefix, lt: `${prefix}~`, reverse: true, limit: 1 }).all();
      if (last) {
        const value = BigInt(last[0].slice(prefix.length));
        if (value > this.sequence) this.sequence = value;
      }
      const trimmed = await this.store.db.get(trimmedKey(table));
      if (typeof trimmed === 'string' && BigInt(trimmed) > this.sequence) this.sequence = BigInt(trimmed);
    }
  }

  /** Replace an item db's put and del with ones that write the stream record in the same batch. */
  private hook(table: string, itemDb: ItemDb): void {
    this.hooked.add(itemDb);
    const itemPrefix = `item-${table}~`;
    const write = (key: string, value: unknown, callback: (error?: Error | null) => void) => {
      this.journal(table, `${itemPrefix}${key}`, value).then(
        () => setImmediate(callback, null),
        (error: Error) => setImmediate(callback, error),
      );
    };
    itemDb.put = (key, value, callback) => write(key, value, callback);
    itemDb.del = (key, callback) => write(key, undefined, callback);
  }

  /** Write an item change and its stream record as one batch. The caller (dynalite) holds the item's lock. */
  private async journal(table: string, itemKey: string, after: unknown): Promise<void> {
    await this.ready;
    const before = (await this.store.db.get(itemKey)) as Record<string, unknown> | undefined;
    if (before === undefined && after === undefined) return;
    const keys = await this.keysOf(table, (after ?? before) as Record<string, unknown>);
    // Taken after the last await before the batch, and marked landing in the same turn (see `read`).
    this.sequence += 1n;
    const sequence = this.sequence;
    this.landing.add(sequence);
    const sequenceNumber = sequence.toString().padStart(SEQUENCE_DIGITS, '0');
    const record: ItemChangeRecord & { dynamodb: { ApproximateCreationDateTime: number } } = {
      eventName: before === undefined ? 'INSERT' : after === undefined ? 'REMOVE' : 'MODIFY',
      dynamodb: {
        Keys: keys,
        ...(after === undefined ? {} : { NewImage: after as Record<string, unknown> }),
        ...(before === undefined ? {} : { OldImage: before }),
        SequenceNumber: sequenceNumber,
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      },
    };
    try {
      await this.store.db.batch([
        after === undefined ? { type: 'del', key: itemKey } : { type: 'put', key: itemKey, value: after },
        { type: 'put', key: `${journalPrefix(table)}${sequenceNumber}`, value: record },
      ]);
    } finally {
      // Landed, or failed and never will: either way no reader need wait for it.
      this.landing.delete(sequence);
    }
    this.changed.emit(table);
  }

  private keysOf(table: string, item: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.store.getTable(table, (error, definition) => {
        if (error || !definition) {
          reject(error ?? new Error(`no table ${table}`));
          return;
        }
        resolve(
          Object.fromEntries(definition.KeySchema.map(({ AttributeName }) => [AttributeName, item[AttributeName]])),
        );
      });
    });
  }

  private async read(table: string, after: string | undefined, limit: number): Promise<ItemChangeRecord[]> {
    await this.ready;
    const prefix = journalPrefix(table);
    // Every record before the oldest one still landing has landed (or never will): read no further than that.
    const [oldest] = this.landing;
    const before = oldest === undefined ? '~' : oldest.toString().padStart(SEQUENCE_DIGITS, '0');
    const entries = await this.store.db
      .iterator({ gt: after === undefined ? prefix : `${prefix}${after}`, lt: `${prefix}${before}`, limit })
      .all();
    return entries.map(([, value]) => value as ItemChangeRecord);
  }

  /**
   * Forget the records up to `through`, which the change log has finished with: a range delete in the store, from
   * where the last trim ended. Not a read of the range from its start: every record trimmed before leaves a
   * deletion marker there until LevelDB compacts it away, so behind a bulk load each trim would step over all the
   * earlier ones again (and decode every record's images only to learn its key).
   */
  private async trim(table: string, through: string): Promise<void> {
    const prefix = journalPrefix(table);
    const from = this.trimmedThrough.get(table);
    // Kept before the records go: numbering goes on after `through` whenever the store is opened again.
    await this.store.db.put(trimmedKey(table), through);
    await this.store.db.clear({ gt: from === undefined ? prefix : `${prefix}${from}`, lte: `${prefix}${through}` });
    this.trimmedThrough.set(table, through);
  }
}
