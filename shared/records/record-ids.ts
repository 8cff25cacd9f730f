/**
 * Record ids: ULIDs, so ids sort in creation order and the base table's order is the default list order
 * (newest first is a reverse Query). Monotonic within a container, unique across containers by their randomness.
 */
import { decodeTime, monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

export function newRecordId(now: number): string {
  return nextUlid(now);
}

/** The creation time carried by an id. */
export function recordIdTime(id: string): number {
  return decodeTime(id);
}

/** Ids arrive as strings or numbers (docs/interface.md §4); either form names the same record. */
export function normalizeRecordId(value: unknown): string | undefined {
  if (typeof value === 'string') {
    const id = value.trim();
    return id.length >= 1 && id.length <= 128 ? id : undefined;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return undefined;
}
