/**
 * Index jobs (docs/interface.md §17): the background work that brings the records stored before a configuration
 * change in line with the index registry (shared/catalog/index-registry.ts): keys written for each index being
 * built, keys removed for each index being dropped, and the registry moved on when that is done.
 *
 * Three steps, which a deployment runs as the tasks of a Step Functions state machine (functions/index-job.ts,
 * lib/index-builds.ts) and `npm start` runs in its own process (local-index-runner.ts), the same code in both:
 *
 * - `next`: what to do now. It moves the registry on where time allows (a dropped index stops being kept once
 *   no function can read it any more; an index waiting for a slot takes one that was freed), and answers one of:
 *   scan the segments of the job under way (or of a new job for every index that is ready: every function
 *   serves the configuration that started it), wait some seconds for the next index to be ready, or done.
 * - `runSegment`: read one segment of a dataset (an id range) page by page, hand each page to the job's
 *   consumers (segment-consumer.ts), and save where it stands after each page, until it ends or its time is up:
 *   a crashed or redeployed run resumes from the last page saved. Segments of a job run in parallel.
 *   Each page's records are also counted into the builds' per-value totals (build-totals.ts), saved with the
 *   position.
 * - `finish`: once every segment is done, the builds' count pages are written from the segments' counts, the
 *   built indexes become complete (answering totals from those pages), the dropped ones' per-value totals are
 *   removed (drop-totals.ts, in turns: a turn that runs out of time leaves the job for the next), and then the
 *   dropped indexes are gone.
 *
 * Only one run works at a time (the runner lease in the catalog item): a run started while another is still
 * going answers done at once, and the other picks up the new work in its next `next`. Every registry change is
 * a write on the condition that the catalog's revision is still the one read, so a configuration applied
 * meanwhile is never overwritten: the step reads again and decides again.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { encodeTime, ulid } from 'ulid';
import { CATALOG_TTL_MS, maxStaleFor } from '../catalog/catalog-provider';
import {
  type AppliedIndex,
  type DatasetIndex,
  freeSlot,
  type IndexRegistry,
  parseIndexRegistry,
} from '../catalog/index-registry';
import { CapacityMeter } from '../observability/capacity-meter';
import { logSideFoldFailure } from '../observability/change-metrics';
import { writeLogLine } from '../observability/request-log';
import { recordIdTime } from '../records/record-ids';
import { BatchIncomplete } from '../storage/batch-items';
import { CatalogRevisionConflict, readCatalogItem, updateCatalogIndexes } from '../storage/catalog-item';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import type { IdRange, IndexBuildStore, SegmentProgress } from '../storage/index-build-store';
import { estimateRecordCount, lastIdAt, MAX_INVOCATION_MS, SETTLE_MS } from '../storage/record-counter';
import { startSlotTotalsAt } from '../storage/slot-start';
import { foldDatasetTotals } from '../storage/value-fold';
import { buildTotalsCounter, countedSlot, mergeSegmentCounts, SegmentTotals } from './build-totals';
import { removeDroppedTotals } from './drop-totals';
import type { DatasetJob, JobDefinition, SegmentRef } from './job-definition';
import { indexKeyWriter, type SegmentConsumer, type SegmentCounts } from './segment-consumer';
import { WriteThrottle } from './write-throttle';

/**
 * How long after a change of the configuration or of the registry every function surely serves it, for functions
 * that cache the catalog `catalogCacheMs`: the oldest copy a container may serve, plus the longest request that may
 * have started with it, plus a second.
 */
export function settleWindow(catalogCacheMs: number): number {
  return maxStaleFor(catalogCacheMs) + MAX_INVOCATION_MS + 1_000;
}

/** The settle window of a deployment's functions (150 s). */
export const CONFIGURATION_SETTLE_MS = settleWindow(CATALOG_TTL_MS);

export type { DatasetJob, JobDefinition, SegmentRef };

/** What to do next, and how many indexes are not complete yet (building, waiting or being dropped). */
export type NextStep = (
  | { action: 'scan'; jobId: string; segments: SegmentRef[] }
  | { action: 'wait'; seconds: number }
  | { action: 'done' }
) & { pending: number };

/** Who runs the jobs now: a Step Functions execution, or a local server's runner. */
export interface RunnerLease {
  owner: string;
  at: number;
}

export interface IndexJobsOptions {
  store: IndexBuildStore;
  /** The catalog item's table and client (the registry and the runner lease live there). */
  catalog: { client: DynamoDBDocumentClient; table: string };
  /** The record counter's items (a job's total). */
  bookkeeping: DatasetBookkeeping;
  /** Whether the run named `owner` may still be working (a Step Functions execution still running). */
  isRunning: (owner: string) => Promise<boolean>;
  /** How long after a registry change the runner makes every function serves it (ms). */
  settleMs: number;
  /** At most this many segments per dataset. */
  maxSegments: number;
  /** About this many records per segment, so a small dataset is one segment. */
  recordsPerSegment: number;
  /** Records read per page. */
  pageSize: number;
  /** Writes a second a job may make, all its segments together (0: unpaced). */
  writesPerSecond: number;
  /** How many segments run at once (the fan-out's concurrency): they share `writesPerSecond`. */
  concurrency: number;
  /** Consumers after the index keys' own (another piece of work that needs every record once). */
  consumers?: readonly SegmentConsumer[];
  now?: () => number;
}

export interface SegmentRun {
  done: boolean;
  counts: SegmentCounts;
  meter: CapacityMeter;
  throttled: number;
}

/** How long `next` asks to wait at most before it looks again. */
const MAX_WAIT_SECONDS = 300;
/** How long `finish` folds the claims its counted builds' totals start with. */
const FINISH_FOLD_MS = 5_000;
/** How often a step reads again after losing a race with another writer of the catalog item. */
const STEP_ATTEMPTS = 20;

/** The first ULID of time `ms` (every id made at or after `ms` is ≥ it). */
function firstIdAt(ms: number): string {
  return `${encodeTime(Math.max(0, ms), 10)}0000000000000000`;
}

/** The id range of segment `k` of a dataset's job: equal spans of creation time, the outer ones open. */
export function segmentRange(job: DatasetJob, k: number): IdRange {
  if (job.segments === 1) return {};
  const span = job.toMs - job.fromMs + 1;
  const start = (i: number) => job.fromMs + Math.floor((i * span) / job.segments);
  return {
    ...(k === 0 ? {} : { lower: firstIdAt(start(k)) }),
    ...(k === job.segments - 1 ? {} : { upper: lastIdAt(start(k + 1) - 1) }),
  };
}

function segmentsOf(definition: JobDefinition): SegmentRef[] {
  return Object.entries(definition.datasets).flatMap(([datasetCode, job]) =>
    Array.from({ length: job.segments }, (_, segment) => ({ jobId: definition.id, datasetCode, segment })),
  );
}

const withSlot = (index: AppliedIndex): DatasetIndex => ({
  field: index.field,
  slot: index.slot as number,
  build: index.build,
});

/**
 * When a job may start scanning for an index. A drop: once every function serves its state (`settlesAt`). A build:
 * that, and once every write claimed at or before then has landed or never will (`SETTLE_MS` more), so that the
 * records the job reads are the records as they stood at its totals' start position (build-totals.ts). A build
 * made while nothing served the store (a settle window of 0: `npm start` applying its configuration before it
 * serves) has no such write.
 */
export function scanReadyAt(index: AppliedIndex): number {
  if (index.state !== 'building' || index.settlesAt <= index.since) return index.settlesAt;
  return index.settlesAt + SETTLE_MS;
}

/** Whether an index is one a job scans for: being built, or being dropped and no longer kept by writes. */
function scanned(index: AppliedIndex): boolean {
  return index.state === 'building' || (index.state === 'dropping' && !index.maintained);
}

/**
 * Move the registry on where time allows; true when something changed. A dropped index stops being kept by writes
 * once every function has stopped reading it; an index waiting for a slot takes one that is free.
 */
export function advanceRegistry(registry: IndexRegistry, now: number, settleMs: number): boolean {
  let changed = false;
  for (const entry of Object.values(registry)) {
    for (const index of entry.indexes) {
      if (index.state === 'dropping' && index.maintained && index.settlesAt <= now) {
        index.maintained = false;
        index.since = now;
        index.settlesAt = now + settleMs;
        changed = true;
      }
    }
    for (const index of entry.indexes.filter((i) => i.state === 'waiting').sort((a, b) => a.build - b.build)) {
      const slot = freeSlot(entry);
      if (slot === undefined) break;
      Object.assign(index, { state: 'building', slot, since: now, settlesAt: now + settleMs });
      changed = true;
    }
  }
  return changed;
}

export class IndexJobs {
  private readonly now: () => number;
  private readonly consumers: readonly SegmentConsumer[];
  private readonly definitions = new Map<string, JobDefinition>();

  constructor(private readonly options: IndexJobsOptions) {
    this.now = options.now ?? Date.now;
    this.consumers = [
      indexKeyWriter(options.store),
      buildTotalsCounter(options.bookkeeping.changes),
      ...(options.consumers ?? []),
    ];
  }

  /** What the run named `owner` does next (see the module's comment). */
  async next(owner: string): Promise<NextStep> {
    const { client, table } = this.options.catalog;
    for (let attempt = 1; ; attempt++) {
      const item = await readCatalogItem(client, table);
      if (!item) return { action: 'done', pending: 0 };
      const registry = parseIndexRegistry(item.indexes) ?? {};
      const lease = item.runner as RunnerLease | null | undefined;
      if (lease?.owner && lease.owner !== owner && (await this.options.isRunning(lease.owner))) {
        return { action: 'done', pending: 0 };
      }
      const now = this.now();
      advanceRegistry(registry, now, this.options.settleMs);
      const { step, created } = await this.decide(registry, now);
      try {
        const runner = step.action === 'done' ? null : { owner, at: now };
        await updateCatalogIndexes(client, table, { indexes: registry, runner }, item.revision);
        return step;
      } catch (error) {
        // The job made for this registry is not referenced by any: remove its items before deciding again.
        if (created) await this.forget(created);
        if (!(error instanceof CatalogRevisionConflict) || attempt === STEP_ATTEMPTS) throw error;
      }
    }
  }

  /** The step for a registry already moved on; marks the indexes a new job takes (`created`). */
  private async decide(registry: IndexRegistry, now: number): Promise<{ step: NextStep; created?: JobDefinition }> {
    const entries = Object.entries(registry);
    const pending = entries.reduce(
      (sum, [, entry]) => sum + entry.indexes.filter((i) => i.state !== 'complete').length,
      0,
    );
    const underWay = entries.flatMap(([, entry]) => entry.indexes.filter((i) => scanned(i) && i.job)).map((i) => i.job);
    const current = underWay[0];
    if (current !== undefined) {
      const definition = await this.definition(current);
      if (definition) return { step: { action: 'scan', jobId: current, segments: segmentsOf(definition), pending } };
      // Its definition is gone (removed by hand?): scan again under a new job.
      for (const [, entry] of entries) for (const index of entry.indexes) if (index.job === current) delete index.job;
    }
    const ready = entries
      .map(
        ([code, entry]) => [code, entry.indexes.filter((i) => scanned(i) && !i.job && scanReadyAt(i) <= now)] as const,
      )
      .filter(([, indexes]) => indexes.length > 0);
    if (ready.length > 0) {
      const definition = await this.createJob(ready, now);
      for (const [, indexes] of ready) {
        for (const index of indexes) Object.assign(index, { job: definition.id, startedAt: now });
      }
      return {
        step: { action: 'scan', jobId: definition.id, segments: segmentsOf(definition), pending },
        created: definition,
      };
    }
    if (pending === 0) return { step: { action: 'done', pending } };
    const settling = entries.flatMap(([, entry]) =>
      entry.indexes.filter((i) => i.state === 'building' || i.state === 'dropping').map(scanReadyAt),
    );
    const until = settling.length > 0 ? Math.min(...settling) : now + MAX_WAIT_SECONDS * 1000;
    const seconds = Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.ceil((until - now) / 1000)));
    return { step: { action: 'wait', seconds, pending } };
  }

  /**
   * Remove a job's items. No registry references the job any more, so items a table too busy to take every
   * delete leaves behind are never read again: they stay (logged), rather than failing a step whose work is done.
   */
  private async forget(definition: JobDefinition): Promise<void> {
    this.definitions.delete(definition.id);
    try {
      await this.options.store.deleteJob(definition.id, segmentsOf(definition));
    } catch (error) {
      if (!(error instanceof BatchIncomplete)) throw error;
      writeLogLine({
        level: 'WARN',
        operation: 'index-job',
        jobId: definition.id,
        jobItemsLeft: true,
        error: `${error.name}: ${error.message}`,
      });
    }
  }

  private async createJob(
    ready: ReadonlyArray<readonly [string, AppliedIndex[]]>,
    now: number,
  ): Promise<JobDefinition> {
    const { store, bookkeeping, recordsPerSegment, maxSegments } = this.options;
    const meter = new CapacityMeter();
    const id = ulid(now);
    const datasets: Record<string, DatasetJob> = {};
    for (const [code, indexes] of ready) {
      const first = await store.firstRecordId(code, meter);
      const total = await estimateRecordCount(bookkeeping, code, meter);
      const builds = indexes.filter((i) => i.state === 'building');
      datasets[code] = {
        builds: builds.map(withSlot),
        drops: indexes.filter((i) => i.state === 'dropping').map(withSlot),
        fromMs: first === undefined ? now : Math.min(now, recordIdTime(first)),
        toMs: now,
        segments: Math.min(maxSegments, Math.max(1, Math.ceil(total / recordsPerSegment))),
        total,
        ...(builds.length > 0
          ? { totalsFrom: Object.fromEntries(builds.map((i) => [i.build, lastIdAt(i.settlesAt)])) }
          : {}),
      };
    }
    const segments = Object.values(datasets).reduce((sum, job) => sum + job.segments, 0);
    const segmentWritesPerSecond = this.options.writesPerSecond / Math.min(this.options.concurrency, segments);
    const definition: JobDefinition = { id, createdAt: now, datasets, segmentWritesPerSecond };
    await store.putJob(id, { ...definition });
    for (const [code, job] of Object.entries(datasets)) await store.startProgress(id, code, job.total);
    this.definitions.set(id, definition);
    return definition;
  }

  private async definition(jobId: string): Promise<JobDefinition | undefined> {
    let definition = this.definitions.get(jobId);
    if (!definition) {
      definition = (await this.options.store.readJob(jobId)) as JobDefinition | undefined;
      if (definition) this.definitions.set(jobId, definition);
    }
    return definition;
  }

  /**
   * Work on one segment: page after page until it ends or `budgetMs` is spent (at least one page). Pages are
   * saved as they are done, so a crash loses at most the page in flight, which the next run does again.
   */
  async runSegment(ref: SegmentRef, budgetMs: number): Promise<SegmentRun> {
    const { store, pageSize } = this.options;
    const meter = new CapacityMeter();
    const counts: SegmentCounts = { records: 0, written: 0, conflicts: 0 };
    const definition = await this.definition(ref.jobId);
    const job = definition?.datasets[ref.datasetCode];
    // A job that is gone was finished by another run: nothing left to do here.
    if (!definition || !job) return { done: true, counts, meter, throttled: 0 };
    const throttle = new WriteThrottle({ writesPerSecond: definition.segmentWritesPerSecond, now: this.now });
    let progress = (await store.readSegment(ref.jobId, ref.datasetCode, ref.segment)) ?? { processed: 0, done: false };
    const range = segmentRange(job, ref.segment);
    const deadline = this.now() + budgetMs;
    // Counts resume from those saved with the position: a page read again after a crash is counted once.
    const totals = SegmentTotals.resume(job, progress.totals);
    while (!progress.done) {
      const page = await store.readRecords(ref.datasetCode, range, progress.position, pageSize, meter, !!totals);
      const context = {
        ...{ jobId: ref.jobId, datasetCode: ref.datasetCode, job, meter, throttle, counts, handled: [] },
        ...(totals ? { totals } : {}),
      };
      for (const consumer of this.consumers) await consumer.consume(page.items, context);
      counts.records += page.items.length;
      progress = {
        ...(page.next ? { position: page.next } : {}),
        processed: progress.processed + page.items.length,
        done: page.next === undefined,
        ...(totals ? { totals: totals.toState() } : {}),
      };
      await store.saveSegment(ref.jobId, ref.datasetCode, ref.segment, progress);
      if (page.items.length > 0) await store.addProgress(ref.jobId, ref.datasetCode, page.items.length);
      if (this.now() >= deadline) break;
    }
    return { done: progress.done, counts, meter, throttled: throttle.throttled };
  }

  /**
   * Close a job whose segments are all done, working at most about `budgetMs` on removing its dropped indexes'
   * totals (drop-totals.ts). `finished: false` when some segments are not done (scan them again), or when totals
   * of a dropped index are left: its builds are complete, the dropped indexes stay in the registry with the job, and
   * the next `next` answers the same job again, whose `finish` goes on removing them.
   */
  async finish(jobId: string, budgetMs: number): Promise<{ finished: boolean }> {
    const { store, catalog } = this.options;
    const deadline = this.now() + budgetMs;
    const definition = await this.definition(jobId);
    const segments = definition ? segmentsOf(definition) : [];
    const saved: { ref: SegmentRef; progress: SegmentProgress }[] = [];
    for (const ref of segments) {
      const progress = await store.readSegment(jobId, ref.datasetCode, ref.segment);
      if (!progress?.done) return { finished: false };
      saved.push({ ref, progress });
    }
    const counted = definition ? await this.startCountedTotals(definition, saved) : new Map<string, string>();
    const dropped = definition ? await this.removeDroppedTotals(definition, deadline) : true;
    for (let attempt = 1; ; attempt++) {
      const item = await readCatalogItem(catalog.client, catalog.table);
      if (!item) return { finished: true };
      const registry = parseIndexRegistry(item.indexes) ?? {};
      const now = this.now();
      let changed = false;
      for (const [code, entry] of Object.entries(registry)) {
        const kept = entry.indexes.filter((i) => !(dropped && i.job === jobId && i.state === 'dropping'));
        changed ||= kept.length < entry.indexes.length;
        entry.indexes = kept;
        for (const index of entry.indexes) {
          if (index.job !== jobId || index.state !== 'building') continue;
          delete index.job;
          Object.assign(index, { state: 'complete', since: now, settlesAt: now, finishedAt: now });
          const totalsFrom = counted.get(`${code}\n${index.build}`);
          if (totalsFrom !== undefined) index.totalsFrom = totalsFrom;
          changed = true;
        }
      }
      // A turn that only removed some of a dropped index's totals leaves the registry as it is.
      if (!changed) break;
      try {
        await updateCatalogIndexes(
          catalog.client,
          catalog.table,
          { indexes: registry, runner: item.runner },
          item.revision,
        );
        break;
      } catch (error) {
        if (!(error instanceof CatalogRevisionConflict) || attempt === STEP_ATTEMPTS) throw error;
      }
    }
    if (definition && dropped) await this.forget(definition);
    if (counted.size > 0 && definition) await this.foldCounted(definition, counted);
    return { finished: dropped };
  }

  /** Remove the per-value totals of the job's dropped indexes until `deadline`; true once none is left. */
  private async removeDroppedTotals(definition: JobDefinition, deadline: number): Promise<boolean> {
    const turn = await removeDroppedTotals(definition, {
      removal: this.options.bookkeeping.droppedTotals,
      // The job's segments are done: its removal has the job's whole pace.
      throttle: new WriteThrottle({ writesPerSecond: this.options.writesPerSecond, now: this.now }),
      meter: new CapacityMeter(),
      deadline,
      now: this.now,
    });
    return turn.done;
  }

  /**
   * Start the per-value totals of every build the job counted and the registry still has it build: its count
   * pages at its start position, from every segment's counts (a build a segment gave up is left out: it keeps
   * counting its index keys). Per `dataset\nbuild`, the start position of those started.
   */
  private async startCountedTotals(
    definition: JobDefinition,
    saved: readonly { ref: SegmentRef; progress: SegmentProgress }[],
  ): Promise<Map<string, string>> {
    const { catalog, bookkeeping } = this.options;
    const started = new Map<string, string>();
    const item = await readCatalogItem(catalog.client, catalog.table);
    const registry = parseIndexRegistry(item?.indexes) ?? {};
    const meter = new CapacityMeter();
    for (const [code, job] of Object.entries(definition.datasets)) {
      for (const build of job.builds) {
        const from = job.totalsFrom?.[build.build];
        const building = registry[code]?.indexes.some(
          (index) => index.build === build.build && index.job === definition.id && index.state === 'building',
        );
        if (from === undefined || !building) continue;
        const segments = saved.filter(({ ref }) => ref.datasetCode === code).map(({ progress }) => progress.totals);
        const counts = mergeSegmentCounts(build.build, segments);
        if (!counts) continue;
        await startSlotTotalsAt(bookkeeping, code, countedSlot(build), from, counts, meter);
        started.set(`${code}\n${build.build}`, from);
      }
    }
    return started;
  }

  /**
   * Fold the claims written while the job ran into the counted builds' pages, as far as a few seconds allow, so that
   * the first lists do not read them all (the folds beside the writes and the lists do the rest). A fold that fails
   * is logged as a warning and leaves the job finished: the next fold catches up.
   */
  private async foldCounted(definition: JobDefinition, counted: ReadonlyMap<string, string>): Promise<void> {
    for (const [code, job] of Object.entries(definition.datasets)) {
      const slots = job.builds.filter((build) => counted.has(`${code}\n${build.build}`)).map(countedSlot);
      if (slots.length === 0) continue;
      await foldDatasetTotals(this.options.bookkeeping, {
        datasetCode: code,
        slots,
        now: this.now(),
        meter: new CapacityMeter(),
        until: performance.now() + FINISH_FOLD_MS,
      }).catch((error: unknown) =>
        logSideFoldFailure({ foldBy: 'index-job', jobId: definition.id, datasetCode: code, slots, error }),
      );
    }
  }
}
