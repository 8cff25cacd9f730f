/**
 * Per-value totals of the indexes an index job builds over stored records: what each scanned record adds to its
 * build's counts at the build's start position, kept with the segment's saved position, and published as the
 * build's count pages when the job finishes (storage/value-counter.ts holds the exactness argument; this is the
 * job's half of it).
 *
 * A build's start position S is the last position of its `settlesAt`: every claim after S was made by a function
 * that serves the build (it carries the build's count key, and the writer keeps the build's index key), and the
 * job scans only once every write claimed at or before S has landed or never will (`scanReadyAt` in
 * index-jobs.ts). The totals are then "the counts at S" (this module) plus every claim after S (the change items,
 * as for any index).
 *
 * What one record adds, from the record as the index keys' writer left it (the last read of it, and whether the
 * writer set its keys after that read): start from the count key its index attribute holds for the build (none
 * when it holds no key of the build), undo every write claimed after S that the read shows (the record's `@cpos`
 * and the `previous` positions of its update claims, read back one by one: an update's keys after become its keys
 * before, a create or a batch after S leaves nothing, the record did not exist at S), and when the writer set the
 * key itself, move the held key to the one it set (the job's write carries no claim). Whatever a claim after the
 * read does comes from the claims. A record whose chain does not add up (a claim missing, a key undone that the
 * record does not hold) makes the build uncounted: it keeps counting its index keys.
 *
 * A segment's counts are saved with its position after each page, in the same item, so a page read again after
 * a crash adds to the counts saved before it, never twice.
 */
import type { StoredValue } from '../records/field-values';
import { ID_ATTRIBUTE } from '../records/record-codec';
import { compareCodePoints, countKeyOfIndexKey } from '../records/value-encoding';
import type { ChangeItems, StoredClaim } from '../storage/change-items';
import { countSlotKey, type IndexSlot, indexKey, indexSlot } from '../storage/index-attributes';
import type { SegmentTotalsState } from '../storage/index-build-store';
import { RecordAttr } from '../storage/table-definitions';
import type { DatasetJob } from './job-definition';
import type { HandledRecord, SegmentConsumer, SegmentCountsOfBuilds } from './segment-consumer';

/**
 * A segment's counts take at most this much of its progress item, which is written after every page: 16 write units
 * per page of 200 records at most (0.08 per record, beside the one its key write costs). About 800 distinct values
 * per segment; a build with more keeps counting its index keys.
 */
const MAX_SEGMENT_COUNTS_BYTES = 16_000;

/** The counts of one segment of a job, per build its job counts, as saved with the segment's position. */
export class SegmentTotals implements SegmentCountsOfBuilds {
  private constructor(
    private readonly counts: Map<number, Map<string, number>>,
    private readonly uncounted: Set<number>,
  ) {}

  /** The counts saved with a segment's progress, or fresh ones; `undefined` when the job counts no build. */
  static resume(job: DatasetJob, saved: SegmentTotalsState | undefined): SegmentTotals | undefined {
    const counted = job.builds.filter((build) => job.totalsFrom?.[build.build] !== undefined);
    if (counted.length === 0) return undefined;
    const uncounted = new Set(saved?.uncounted ?? []);
    const counts = new Map<number, Map<string, number>>();
    for (const build of counted) {
      if (!uncounted.has(build.build)) counts.set(build.build, new Map(saved?.counts[build.build] ?? []));
    }
    return new SegmentTotals(counts, uncounted);
  }

  /** Whether the build's counts are still kept. */
  counting(build: number): boolean {
    return this.counts.has(build);
  }

  add(build: number, key: string, delta: number): void {
    const counts = this.counts.get(build);
    if (counts) counts.set(key, (counts.get(key) ?? 0) + delta);
  }

  /** The build cannot be counted exactly: it keeps counting its index keys. */
  giveUp(build: number): void {
    this.counts.delete(build);
    this.uncounted.add(build);
  }

  /** What to save with the segment's position: builds whose counts grow too large are given up, largest first. */
  toState(): SegmentTotalsState {
    const state = (): SegmentTotalsState => ({
      counts: Object.fromEntries([...this.counts].map(([build, counts]) => [build, [...counts]])),
      uncounted: [...this.uncounted],
    });
    let saved = state();
    while (JSON.stringify(saved).length > MAX_SEGMENT_COUNTS_BYTES) {
      const largest = [...this.counts].sort((a, b) => b[1].size - a[1].size)[0];
      if (!largest) break;
      this.giveUp(largest[0]);
      saved = state();
    }
    return saved;
  }
}

/** The counts of a build over every segment, or `undefined` when a segment gave it up (or a count is negative). */
export function mergeSegmentCounts(
  build: number,
  segments: readonly (SegmentTotalsState | undefined)[],
): [string, number][] | undefined {
  const merged = new Map<string, number>();
  for (const segment of segments) {
    if (!segment || segment.uncounted.includes(build)) return undefined;
    for (const [key, count] of segment.counts[build] ?? []) merged.set(key, (merged.get(key) ?? 0) + count);
  }
  const counts = [...merged].filter(([, count]) => count !== 0);
  if (counts.some(([, count]) => count < 0)) return undefined;
  return counts.sort((a, b) => compareCodePoints(a[0], b[0]));
}

/** Reads claims by position once per page, however many builds or records ask. */
type ClaimReader = (position: string) => Promise<StoredClaim | undefined>;

/**
 * What one record adds to a build's counts at `from` (key → +1/−1, at most one key left), or `undefined` when its
 * chain of claims does not add up. See the module's comment.
 */
export async function recordContribution(
  handled: HandledRecord,
  slot: IndexSlot,
  from: string,
  readClaim: ClaimReader,
): Promise<Map<string, number> | undefined> {
  const { record, written } = handled;
  const id = record[ID_ATTRIBUTE] as string;
  const slotKey = countSlotKey(slot);
  const keyOf = (attribute: unknown): string | undefined =>
    typeof attribute === 'string' && attribute.startsWith(slot.tag)
      ? countKeyOfIndexKey(attribute.slice(slot.tag.length), id)
      : undefined;
  const counts = new Map<string, number>();
  const add = (key: string | undefined, delta: number) => {
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + delta);
  };
  const held = keyOf(record[slot.attribute]);
  add(held, 1);
  // Undo the writes claimed after `from` that the read shows, newest first.
  let position = record[RecordAttr.changePosition];
  while (typeof position === 'string' && compareCodePoints(position, from) > 0) {
    const claim = await readClaim(position);
    if (!claim) return undefined;
    if (claim.kind === 'update') {
      if (claim.id !== id) return undefined;
      const before = claim.before[slotKey];
      const after = claim.after[slotKey];
      if (before !== after) {
        add(after, -1);
        add(before, 1);
      }
      position = claim.previous;
      continue;
    }
    if (claim.kind === 'create') {
      if (claim.id !== id) return undefined;
      add(claim.values[slotKey], -1);
      // The record did not exist at `from`.
      if ([...counts.values()].some((count) => count !== 0)) return undefined;
    } else {
      if (!claim.ids.includes(id)) return undefined;
      // Its key is in the batch's slot values; the record held one key at most when it was made.
      if ([...counts.values()].reduce((sum, count) => sum + count, 0) !== 1) return undefined;
      counts.clear();
    }
    position = undefined;
  }
  if (written) {
    // The job set the build's key after its read, without a claim: the record moves from the key it held.
    const raw = record[slot.field];
    const set = keyOf(indexKey(slot, raw === undefined || raw === null ? null : (raw as StoredValue), id));
    if (set !== held) {
      add(held, -1);
      add(set, 1);
    }
  }
  const left = [...counts].filter(([, count]) => count !== 0);
  if (left.some(([, count]) => count < 0) || left.length > 1) return undefined;
  return new Map(left);
}

/**
 * The consumer that counts each record the index keys' writer handled into the segment's totals (it runs right
 * after that writer, and only for jobs that count builds).
 */
export function buildTotalsCounter(changes: ChangeItems): SegmentConsumer {
  return {
    name: 'per-value totals',
    async consume(records, context) {
      const { totals, job, datasetCode, meter } = context;
      if (!totals) return;
      // Every record read must have been handled (records are never deleted): else nothing here is counted.
      const whole = context.handled.length === records.length;
      const claims = new Map<string, Promise<StoredClaim | undefined>>();
      const readClaim: ClaimReader = (position) => {
        let read = claims.get(position);
        if (!read) {
          read = changes.read(datasetCode, position, meter);
          claims.set(position, read);
        }
        return read;
      };
      for (const build of job.builds) {
        const from = job.totalsFrom?.[build.build];
        if (from === undefined || !totals.counting(build.build)) continue;
        if (!whole) {
          totals.giveUp(build.build);
          continue;
        }
        const slot = indexSlot(build);
        for (const handled of context.handled) {
          const contribution = await recordContribution(handled, slot, from, readClaim);
          if (!contribution) {
            totals.giveUp(build.build);
            break;
          }
          for (const [key, delta] of contribution) totals.add(build.build, key, delta);
        }
      }
    },
  };
}

/** The count pages of a build that a job counted: how its totals are started when the job finishes. */
export function countedSlot(build: DatasetJob['builds'][number]): string {
  return countSlotKey(indexSlot(build));
}
