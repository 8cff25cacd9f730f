/**
 * The exact number of records of a dataset, without counting them all on every request and without
 * transactions (DynamoDB's counter-in-the-same-write is impossible across two items, and dynalite has no
 * transactions or streams).
 *
 * Design: a checkpoint item `{count, through}` states "the dataset has exactly `count` records whose id is
 * at most `through`". The total is `count` plus the number of records after `through`, read from the base
 * table with a key condition `@sk > through` — a read of the recent tail only.
 *
 * Why it is correct without transactions:
 * 1. Records are never deleted (the contract has no delete) and ids are never reused, so the set of records
 *    with id ≤ X can only grow, and only by records whose id is ≤ X when they are written.
 * 2. An id is a ULID made from the clock when the create starts, and its PutItem happens within the same
 *    invocation. So once `SETTLE_MS` (longer than any function's timeout plus clock skew) has passed since
 *    time T, no record with an id of time ≤ T can still appear: the set of ids ≤ ulid(T, max) is final.
 * 3. A checkpoint is only ever written for such a settled bound, with a count read after the bound settled,
 *    so every checkpoint ever written is true forever. Writes are conditional on moving forward, so
 *    concurrent writers in different containers cannot move it back; whichever wins, it is true.
 * 4. Reading a stale (older) checkpoint is harmless: it is true, the tail read is just longer.
 * The total is then exact up to the eventual consistency of the reads, the same as every other list read.
 *
 * Anything that writes records with ids of its own choosing (an import of old data) must write them before
 * the first checkpoint or delete the checkpoint item afterwards. A future delete operation would need a
 * different counter (e.g. decrementing the checkpoint for deleted ids ≤ through in the delete's own write).
 */
import { encodeTime } from 'ulid';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { DatasetBookkeeping } from './dataset-bookkeeping';
import type { ListReader } from './list-reader';

/** How long after its id's time a record is guaranteed to have been written (Lambda's timeout cap is 15 min). */
export const SETTLE_MS = 16 * 60 * 1000;
/** Write a new checkpoint only when it moves past this many records, so reads rarely write. */
export const CHECKPOINT_MIN_ADVANCE = 64;

/** The greatest ULID of time `ms` (every id created at or before `ms` is ≤ it). */
export function lastIdAt(ms: number): string {
  return `${encodeTime(Math.max(0, ms), 10)}ZZZZZZZZZZZZZZZZ`;
}

/** The exact record count of a dataset; may move the checkpoint forward (one conditional write). */
export async function countRecords(
  reader: ListReader,
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  now: number,
  meter: CapacityMeter,
): Promise<number> {
  const checkpoint = await bookkeeping.readCountCheckpoint(datasetCode, meter);
  const tail = await reader.idsAfter(datasetCode, checkpoint?.through, meter);
  const total = (checkpoint?.count ?? 0) + tail.length;
  const settledThrough = lastIdAt(now - SETTLE_MS);
  const settled = tail.filter((id) => id <= settledThrough).length;
  if (settled >= CHECKPOINT_MIN_ADVANCE) {
    await bookkeeping.advanceCountCheckpoint(
      datasetCode,
      { count: (checkpoint?.count ?? 0) + settled, through: settledThrough },
      meter,
    );
  }
  return total;
}
