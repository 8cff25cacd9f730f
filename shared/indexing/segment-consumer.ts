/**
 * What an index job does with each page of records it reads. The job reads every record of a dataset once, one
 * segment (id range) at a time; each page goes to every consumer of the job in turn, so another piece of work
 * that needs every stored record once (per-value totals' contributions, for one) plugs in here and shares the
 * read instead of scanning again. A consumer must be idempotent per record: after a crash a segment resumes
 * from its last saved page, so the records of the page in flight are handed over again.
 *
 * The first consumer is the index keys' own: `indexKeyWriter` sets each record's key of every index the job
 * builds and removes its key of every index the job drops, and says how it left each record (`handled`). The
 * second counts the builds' per-value totals from that (build-totals.ts): idempotent by page instead, since its
 * counts are saved with the segment's position.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import type { StoredValue } from '../records/field-values';
import type { RecordItem } from '../records/record-codec';
import { ID_ATTRIBUTE } from '../records/record-codec';
import { indexKey, indexSlot } from '../storage/index-attributes';
import type { IndexBuildStore, IndexKeyWrite } from '../storage/index-build-store';
import type { DatasetJob } from './job-definition';
import { isThrottling, type WriteThrottle } from './write-throttle';

/** What a page's consumer is told besides the records. */
export interface SegmentPageContext {
  jobId: string;
  datasetCode: string;
  /** What the job does for the dataset: the indexes it builds and drops. */
  job: DatasetJob;
  meter: CapacityMeter;
  /** Paces the page's writes (shared by every consumer of the segment). */
  throttle: WriteThrottle;
  /** Counters for the job's metrics. */
  counts: SegmentCounts;
  /** Each record of the page as the index keys' writer left it (filled by it, for the consumers after it). */
  handled: HandledRecord[];
  /** The segment's per-value totals of the builds the job counts (build-totals.ts); absent when it counts none. */
  totals?: SegmentCountsOfBuilds;
}

/** Per-value counts of a segment, per build (build-totals.ts `SegmentTotals`). */
export interface SegmentCountsOfBuilds {
  /** Whether the build's counts are still kept. */
  counting(build: number): boolean;
  add(build: number, key: string, delta: number): void;
  /** The build cannot be counted exactly: it keeps counting its index keys. */
  giveUp(build: number): void;
}

/** A record as the index keys' writer last read it, and whether it then set or removed keys of it. */
export interface HandledRecord {
  record: RecordItem;
  written: boolean;
}

export interface SegmentCounts {
  /** Records read. */
  records: number;
  /** Records whose index keys were written (set or removed). */
  written: number;
  /** Writes whose record had changed since it was read (read again and redone). */
  conflicts: number;
}

export interface SegmentConsumer {
  /** A name for logs. */
  readonly name: string;
  consume(records: readonly RecordItem[], context: SegmentPageContext): Promise<void>;
}

/** How many records of a page are written at once (the throttle sets the pace; this hides round trips). */
const WRITES_IN_FLIGHT = 8;
/** A record that keeps changing under the job is retried this many times before the job stops with an error. */
const MAX_RECORD_ATTEMPTS = 6;

/** The keys one record needs written and removed for the job, or `undefined` when it has them already. */
export function recordIndexWrite(record: RecordItem, job: DatasetJob): IndexKeyWrite | undefined {
  const id = record[ID_ATTRIBUTE] as string;
  const write: IndexKeyWrite = { set: [], remove: [] };
  for (const build of job.builds) {
    const slot = indexSlot(build);
    const raw = record[build.field];
    const value = raw === undefined || raw === null ? null : (raw as StoredValue);
    const key = indexKey(slot, value, id);
    if (record[slot.attribute] !== key) write.set.push({ attribute: slot.attribute, key, field: build.field, value });
  }
  for (const drop of job.drops) {
    const slot = indexSlot(drop);
    const current = record[slot.attribute];
    // A slot a build of the same job reuses gets the build's key instead: nothing to remove.
    if (job.builds.some((build) => build.slot === drop.slot)) continue;
    if (typeof current === 'string' && current.startsWith(slot.tag)) {
      write.remove.push({ attribute: slot.attribute, tag: slot.tag });
    }
  }
  return write.set.length + write.remove.length > 0 ? write : undefined;
}

/** Sets and removes the index keys of the job's builds and drops, record by record, at the throttle's pace. */
export function indexKeyWriter(store: IndexBuildStore): SegmentConsumer {
  const writeRecord = async (first: RecordItem, context: SegmentPageContext): Promise<void> => {
    const id = first[ID_ATTRIBUTE] as string;
    let record: RecordItem | undefined = first;
    let changes = 0;
    while (record) {
      const write = recordIndexWrite(record, context.job);
      if (!write) {
        context.handled.push({ record, written: false });
        return;
      }
      await context.throttle.take();
      let written: boolean;
      try {
        written = await store.writeIndexKeys(context.datasetCode, id, write, context.meter);
      } catch (error) {
        if (!isThrottling(error)) throw error;
        await context.throttle.backOff();
        continue;
      }
      context.throttle.succeeded();
      if (written) {
        context.counts.written += 1;
        context.handled.push({ record, written: true });
        return;
      }
      // Changed since it was read: its writer set the keys of the new values itself; read it and check.
      context.counts.conflicts += 1;
      if (++changes >= MAX_RECORD_ATTEMPTS)
        throw new Error(`record ${id} kept changing while its index keys were written`);
      record = await store.readRecord(context.datasetCode, id, context.meter);
    }
  };
  return {
    name: 'index keys',
    async consume(records, context) {
      let next = 0;
      const worker = async () => {
        while (next < records.length) await writeRecord(records[next++] as RecordItem, context);
      };
      await Promise.all(Array.from({ length: Math.min(WRITES_IN_FLIGHT, records.length) }, worker));
    },
  };
}
