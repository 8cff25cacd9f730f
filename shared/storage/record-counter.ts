/**
 * The exact number of records of a dataset, at a cost that does not grow with the dataset or its write rate,
 * without transactions (DynamoDB's counter-in-the-same-write is impossible across two items, and dynalite has
 * no transactions or streams).
 *
 * Count entries. Every record is counted by exactly one entry of the count index (`COUNT_INDEX`, sparse, keys
 * only plus two small attributes):
 * - a record created on its own carries the index's partition attribute, so it is its own entry: key = its id,
 *   weight 1 (`countedRecordAttributes`, added by `RecordStore.create`);
 * - records written in bulk carry no entry of their own; one bookkeeping item per group of them is the entry:
 *   key = a fresh ULID taken when the bookkeeping item is written, weight = the group's record count
 *   (`beginBulkCreate`, below).
 * Records written before the count index existed are covered by the first checkpoint (see "Before the index").
 *
 * Design: a checkpoint item `{count, through}` states "the entries whose key is at most `through` weigh `count`
 * in all". The total is `count` plus the weights of the entries after `through`, read from the count index: a
 * few dozen bytes per entry, so a page's total costs about 0.5 read units per 60 recent entries.
 *
 * Why it is exact without transactions:
 * 1. Records are never deleted (the contract has no delete) and a record never changes the entry that counts
 *    it (updates do not touch the entry attributes; bulk writers never rewrite a record, rule 3 below).
 * 2. An entry's key is a ULID of the clock at the moment it is made, and its write happens within the same
 *    invocation. No invocation of a function that writes records lives longer than `MAX_INVOCATION_MS`
 *    (every operation function's timeout is below API Gateway's 29 s; the stack refuses a longer one and a test
 *    checks it; the create function's is 20 s). So once `SETTLE_MS` (that bound plus a second; with the slack
 *    of the bound, room for the last request in flight, for clocks of different hosts and for the index to show
 *    a written entry) has passed since time T, no entry with a key of time ≤ T can still appear: the set of
 *    entries with key ≤ `lastIdAt(T)` is final.
 * 3. A bulk group's weight is the number its writer claims until the group is settled. A checkpoint only ever
 *    covers settled entries, and before it covers a group its writer did not mark done (the invocation failed
 *    between its records and its last call), the group's records are counted with a consistent read and the
 *    count is written into the bookkeeping item. So every weight a checkpoint adds is the true number.
 * 4. A checkpoint is only ever written for a settled bound, so every checkpoint ever written is true forever.
 *    Writes are conditional on moving forward, so concurrent writers in different containers cannot move it
 *    back; whichever wins, it is true. Reading a stale (older) checkpoint is harmless: the tail is longer.
 * The total is then exact up to the eventual consistency of the reads, the same as every other list read: a
 * write is counted once the index shows it (typically well under a second), and a bulk group is counted in
 * full from its first call (its records appear within the same invocation).
 *
 * Before the index. The first checkpoint of a dataset counts, with one consistent read of the partition, the
 * records that no entry covers (written before this counter), and is written only when none of them is
 * recent enough to still be joined by another such record (within `SETTLE_MS`: the earlier version's functions
 * had the same timeouts). After that first checkpoint the partition is never
 * read for counting again.
 *
 * A future delete operation would need a different counter (e.g. a negative entry written with the delete).
 */
import { encodeTime, ulid } from 'ulid';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { CountEntry, CountStore } from './count-store';
import { datasetPartitionKey } from './item-keys';
import { RecordAttr } from './table-definitions';

/**
 * The longest invocation of any function that writes records. Every operation function's timeout is below
 * API Gateway's 29 s integration limit (the OperationFunction construct refuses a longer one).
 */
export const MAX_INVOCATION_MS = 29_000;
/**
 * How long after its key's time an entry is surely visible: the longest invocation plus a second. The bound
 * is generous already (the create function's own timeout is 20 s), which leaves room for the last request in
 * flight when an invocation ends, for the clocks of different hosts (synchronised to milliseconds) and for
 * the index to show the entry (well under a second). The recent tail a total reads is what was written in
 * this window.
 */
export const SETTLE_MS = MAX_INVOCATION_MS + 1_000;
/** Write a new checkpoint only when it moves past this many entries, so reads rarely write. */
export const CHECKPOINT_MIN_ADVANCE = 16;

/** The greatest ULID of time `ms` (every key made at or before `ms` is ≤ it). */
export function lastIdAt(ms: number): string {
  return `${encodeTime(Math.max(0, ms), 10)}ZZZZZZZZZZZZZZZZ`;
}

/** The attributes that make a record created on its own its own count entry (weight 1, key = its id). */
export function countedRecordAttributes(datasetCode: string): Record<string, string> {
  return { [RecordAttr.countPartition]: datasetPartitionKey(datasetCode) };
}

/** The exact record count of a dataset; may move the checkpoint forward (one conditional write). */
export async function countRecords(
  counts: CountStore,
  datasetCode: string,
  now: number,
  meter: CapacityMeter,
): Promise<number> {
  const checkpoint = await counts.readCheckpoint(datasetCode, meter);
  const tail = await counts.entriesAfter(datasetCode, checkpoint?.through, meter);
  const total = (checkpoint?.count ?? 0) + weightOf(tail);
  const settledThrough = lastIdAt(now - SETTLE_MS);
  const settled = tail.filter((entry) => entry.key <= settledThrough);
  if (!checkpoint) return firstCheckpoint(counts, datasetCode, now, settled, total, meter);
  if (settled.length >= CHECKPOINT_MIN_ADVANCE || settled.some((entry) => entry.open)) {
    const weight = await settledWeight(counts, datasetCode, settled, meter);
    await counts.advanceCheckpoint(datasetCode, { count: checkpoint.count + weight, through: settledThrough }, meter);
    // A checked group may weigh less than it claimed: the total says what is there.
    return total - weightOf(settled) + weight;
  }
  return total;
}

/**
 * The count a reader that may not write starts from (custom SQL's early refusal): the checkpoint and the
 * weights after it, with no write and no check. Exact, except that before a dataset's first checkpoint it leaves
 * out records older than the count index, and that it takes a group a failed writer left open at its claim.
 * With `atMost`, it stops reading once the count is past it (a refusal needs no more): a checkpoint read and a
 * page of entries or two, whatever the dataset holds.
 */
export async function estimateRecordCount(
  counts: CountStore,
  datasetCode: string,
  meter: CapacityMeter,
  atMost = Number.POSITIVE_INFINITY,
): Promise<number> {
  const checkpoint = await counts.readCheckpoint(datasetCode, meter);
  const start = checkpoint?.count ?? 0;
  if (start > atMost) return start;
  const tail = await counts.entriesAfter(datasetCode, checkpoint?.through, meter, atMost - start);
  return start + weightOf(tail);
}

function weightOf(entries: readonly CountEntry[]): number {
  return entries.reduce((sum, entry) => sum + entry.weight, 0);
}

/** The weight of settled entries, after checking (and recording) the true size of groups left open. */
async function settledWeight(
  counts: CountStore,
  datasetCode: string,
  settled: readonly CountEntry[],
  meter: CapacityMeter,
): Promise<number> {
  let weight = 0;
  for (const entry of settled) {
    if (!entry.open) {
      weight += entry.weight;
      continue;
    }
    const group = await counts.readBulkGroup(datasetCode, entry.key, meter);
    if (!group) continue;
    if (group.done) {
      weight += group.count;
      continue;
    }
    const found = await counts.countBulkGroupRecords(datasetCode, group, meter);
    await counts.settleBulkGroup(datasetCode, { ...group, count: found }, meter);
    weight += found;
  }
  return weight;
}

/**
 * No checkpoint yet: count the records no entry covers (written before the count index), and write the first
 * checkpoint when none of them is recent. Returns the total.
 */
async function firstCheckpoint(
  counts: CountStore,
  datasetCode: string,
  now: number,
  settled: readonly CountEntry[],
  entriesTotal: number,
  meter: CapacityMeter,
): Promise<number> {
  const uncovered = await counts.uncoveredRecordIds(datasetCode, meter);
  // The functions of the earlier version had the same timeouts: its records settle in the same window.
  const recentUncovered = uncovered.some((id) => id > lastIdAt(now - SETTLE_MS));
  if (recentUncovered) return entriesTotal + uncovered.length;
  const weight = await settledWeight(counts, datasetCode, settled, meter);
  await counts.advanceCheckpoint(
    datasetCode,
    { count: uncovered.length + weight, through: lastIdAt(now - SETTLE_MS) },
    meter,
  );
  return entriesTotal - weightOf(settled) + weight + uncovered.length;
}

/**
 * Start counting a dataset a configuration names for the first time while it holds no records: every record it will
 * hold is written with a count entry, so its first checkpoint (0 through the first key) is true now, and its first
 * count reads the entries only, never the partition ("Before the index" above), however large a bulk load made it
 * before any list. A checkpoint there already is left as it is.
 */
export async function startCountingEmpty(counts: CountStore, datasetCode: string, meter: CapacityMeter): Promise<void> {
  await counts.advanceCheckpoint(datasetCode, { count: 0, through: '' }, meter);
}

/**
 * A group of records being written in bulk, counted by one bookkeeping item (see `beginBulkCreate`).
 */
export interface BulkCreateGroup {
  /** The bookkeeping item's key (a ULID of when the group began). */
  readonly entryKey: string;
  /**
   * Attributes every record of the group must carry, merged into its item. A record of a group must NOT carry
   * `countedRecordAttributes` (it would be counted twice).
   */
  readonly recordAttributes: Readonly<Record<string, string>>;
  /** Say that every record of the group is written. Call once, after the last record's write succeeded. */
  complete(meter: CapacityMeter): Promise<void>;
}

export interface BulkCreateGroupInput {
  /** How many records the group writes (1 or more). */
  count: number;
  /** The least and the greatest id among the group's records (ids are strings compared by code point). */
  firstId: string;
  lastId: string;
  /** The clock now (ms); the group's entry key is a ULID of this time. */
  now: number;
  /** The group's entry key when the writer took it already (its change item's position, a ULID of its clock). */
  entryKey?: string;
}

/**
 * Count a group of records written in bulk (batch create, imports) with one bookkeeping item, so that later
 * totals read one small entry for the whole group instead of one per record.
 *
 * The rule for bulk writers:
 * 1. Call `beginBulkCreate` before writing any record of the group, in the same invocation as the writes,
 *    with the group's size and id range. The group counts in every total from this call on.
 * 2. Write each record of the group with `group.recordAttributes` merged in (and without
 *    `countedRecordAttributes`), within the same invocation (the writes must end within `MAX_INVOCATION_MS`
 *    of the call: a function's timeout guarantees it).
 * 3. After the last record's write has succeeded (unprocessed items retried until none is left), call
 *    `group.complete(meter)`. If the invocation fails first, the group stays open and the counter counts its
 *    records once it is settled: nothing is lost and nothing is counted twice.
 * 4. Never rewrite a record that exists. A retry of a failed batch (same ids, an idempotency key) writes only
 *    the records that do not exist yet (find them with a consistent read of the batch's ids), as a new group
 *    of exactly those records: steps 1–3 again.
 * One group per batch is cheapest (1,000 records: one entry); one per chunk works the same. Each call costs one
 * small write (`complete` one more); a group adds one short entry to the totals read in the next `SETTLE_MS`.
 */
export async function beginBulkCreate(
  counts: CountStore,
  datasetCode: string,
  input: BulkCreateGroupInput,
  meter: CapacityMeter,
): Promise<BulkCreateGroup> {
  if (!Number.isSafeInteger(input.count) || input.count < 1) throw new RangeError('a bulk group has 1 record or more');
  if (input.firstId > input.lastId) throw new RangeError('a bulk group needs firstId ≤ lastId');
  // Not monotonic: a key must carry the time it was made, never a later one a factory carried over.
  const entryKey = input.entryKey ?? ulid(input.now);
  const item = { entryKey, count: input.count, firstId: input.firstId, lastId: input.lastId, done: false };
  await counts.putBulkGroup(datasetCode, item, meter);
  return {
    entryKey,
    recordAttributes: { [RecordAttr.bulkGroup]: entryKey },
    complete: (completeMeter) => counts.settleBulkGroup(datasetCode, item, completeMeter),
  };
}
