/**
 * Which indexes each dataset has and in what state (docs/interface.md §17): the part of the applied configuration
 * that a configuration file cannot say, because it depends on what was applied before and on the records stored.
 * The catalog item keeps it beside the configuration; every function reads both, and this module turns them into
 * what a request needs: the indexes the planner may use (complete ones only) and the ones every write keeps up to
 * date (complete, building, and dropped ones until no function can still read them).
 *
 * An index is a build of one field into one of the records table's generic indexes (its slot). Each build of a
 * dataset has a number of its own, never reused, and every index key it writes starts with a tag made from that
 * number (storage/index-attributes.ts), so an entry written for one field, or by an earlier build of the same
 * field, never answers for another: a slot can be reused without rewriting anything first.
 *
 * Lifecycle of one index:
 * - `building`: writes keep it up to date at once; the records stored before are indexed by a job
 *   (shared/indexing/) that scans the dataset once every function serves the configuration that started it
 *   (`settlesAt`). The planner does not use it.
 * - `complete`: the planner uses it.
 * - `dropping`: the planner no longer uses it; writes keep it (`maintained`) until no function can still read it,
 *   then stop, and a job removes its entries; then it is gone and its slot is free.
 * - `waiting`: every slot is taken (some by dropped indexes still kept); it starts building when one is free.
 */
import { type CatalogConfig, type DatasetConfig, MAX_INDEXED_FIELDS } from './schema';

export type IndexState = 'building' | 'complete' | 'dropping' | 'waiting';

export interface AppliedIndex {
  field: string;
  /** This build's number in its dataset: never reused, it names the build in every index key it writes. */
  build: number;
  /** The generic index (1-based) it occupies; absent while waiting for one. */
  slot?: number;
  state: IndexState;
  /** Dropping only: whether writes still keep its entries (while a function may still read it). */
  maintained?: boolean;
  /** When it entered its state (ms since the epoch). */
  since: number;
  /**
   * When every function surely serves the configuration that put it in this state (ms): a function caches the
   * catalog for a bounded time. A build's scan, or a drop's next step, waits until then.
   */
  settlesAt: number;
  /** The job that scans for it (building, or dropping once its entries are being removed). */
  job?: string;
  /** When its job started scanning, and when it became complete (or gone). */
  startedAt?: number;
  finishedAt?: number;
  /**
   * A build its job completed with per-value totals of every record: the position they count from (the job counted
   * the records as they stood there, the change items count the writes after it; indexing/build-totals.ts).
   */
  totalsFrom?: string;
}

export interface DatasetIndexRegistry {
  /** The number the next build of this dataset gets. */
  nextBuild: number;
  indexes: AppliedIndex[];
}

/** Per dataset code. Datasets removed from the configuration keep their entry (their records stay). */
export type IndexRegistry = Record<string, DatasetIndexRegistry>;

/** One index as a request sees it: a field kept in a slot by one build. */
export interface DatasetIndex {
  field: string;
  slot: number;
  build: number;
}

export interface DatasetIndexes {
  /** Complete indexes, by field: the only ones the query planner may use. */
  readonly queryable: ReadonlyMap<string, DatasetIndex>;
  /** Every index a write keeps up to date. */
  readonly maintained: readonly DatasetIndex[];
  /** The indexes whose per-value totals writes keep (storage/value-counter.ts): complete and building ones. */
  readonly totalled: readonly DatasetIndex[];
  /**
   * The builds (by number) whose per-value totals count every record: complete since they were made (nothing
   * stored to index, no function writing under an earlier configuration), so every record's writes carried their
   * count keys, or completed by a job that counted the records it scanned (`totalsFrom`). A build a job completed
   * without counting them (one of its segments could not, or a job begun before jobs counted) has counts of the
   * writes since it was made only: its totals do not answer (a list counts its index keys instead).
   */
  readonly exactTotals: ReadonlySet<number>;
  /** Indexes of the configuration's fields that are not complete yet (building or waiting), by field. */
  readonly pending: ReadonlyMap<string, AppliedIndex>;
  /** Every index of the dataset's registry entry, dropped ones still being removed included. */
  readonly all: readonly AppliedIndex[];
}

const hasSlot = (index: AppliedIndex): index is AppliedIndex & { slot: number } => index.slot !== undefined;

const toDatasetIndex = (index: AppliedIndex & { slot: number }): DatasetIndex => ({
  field: index.field,
  slot: index.slot,
  build: index.build,
});

/** What a request needs of a dataset's registry entry. */
export function datasetIndexes(entry: DatasetIndexRegistry | undefined): DatasetIndexes {
  const indexes = entry?.indexes ?? [];
  return {
    queryable: new Map(
      indexes
        .filter((index) => index.state === 'complete')
        .filter(hasSlot)
        .map((index) => [index.field, toDatasetIndex(index)]),
    ),
    maintained: indexes
      .filter(
        (index) =>
          index.state === 'complete' || index.state === 'building' || (index.state === 'dropping' && index.maintained),
      )
      .filter(hasSlot)
      .map(toDatasetIndex),
    totalled: indexes
      .filter((index) => index.state === 'complete' || index.state === 'building')
      .filter(hasSlot)
      .map(toDatasetIndex),
    exactTotals: new Set(
      indexes
        .filter(
          (index) =>
            index.state === 'complete' && (index.startedAt === undefined || typeof index.totalsFrom === 'string'),
        )
        .map((index) => index.build),
    ),
    pending: new Map(
      indexes
        .filter((index) => index.state === 'building' || index.state === 'waiting')
        .map((index) => [index.field, index]),
    ),
    all: indexes,
  };
}

/** The indexed fields of a dataset, in definition order. */
export function indexedFields(dataset: DatasetConfig): string[] {
  return dataset.fields.filter((field) => field.indexed).map((field) => field.name);
}

/**
 * The registry of a store that holds no records yet: every indexed field complete, in slots by definition order.
 * It is also the registry of a configuration in hand that no store applied (tools, unit tests).
 */
export function initialIndexRegistry(config: CatalogConfig, now = 0): IndexRegistry {
  const registry: IndexRegistry = {};
  for (const dataset of config.datasets) {
    const fields = indexedFields(dataset);
    registry[dataset.datasetCode] = {
      nextBuild: fields.length + 1,
      indexes: fields.map((field, i) => ({
        field,
        build: i + 1,
        slot: i + 1,
        state: 'complete',
        since: now,
        settlesAt: now,
        finishedAt: now,
      })),
    };
  }
  return registry;
}

/**
 * The lowest slot free for a new build: one no index holds, or held only by dropped indexes that writes no longer
 * keep. Reusing such a slot needs no rewrite first: the keys still in it carry the dropped build's tag, so no query
 * of the new build reads them, and the new build's job replaces them record by record.
 */
export function freeSlot(entry: DatasetIndexRegistry): number | undefined {
  const taken = new Set(
    entry.indexes.filter((index) => !(index.state === 'dropping' && !index.maintained)).map((index) => index.slot),
  );
  // One slot per generic index of the records table: as many as a dataset may have indexed fields.
  for (let slot = 1; slot <= MAX_INDEXED_FIELDS; slot++) if (!taken.has(slot)) return slot;
  return undefined;
}

export interface IndexChangeOptions {
  now: number;
  /** How long until every function serves the new configuration (ms). */
  settleMs: number;
  /**
   * Whether a dataset's new indexes may be complete at once: nothing stored needs indexing and no function can
   * write the dataset under an earlier configuration (a dataset no applied configuration had, with no records).
   */
  completeAtOnce: (datasetCode: string) => boolean;
}

/**
 * The registry after applying `next`: an index for every indexed field (an existing one is kept; a new one is
 * a new build), and every index whose field is no longer indexed (or no longer exists) dropped. Datasets `next`
 * does not have keep their entries untouched.
 */
export function registryForConfiguration(
  previous: IndexRegistry,
  next: CatalogConfig,
  options: IndexChangeOptions,
): IndexRegistry {
  const { now, settleMs } = options;
  const registry: IndexRegistry = structuredClone(previous);
  for (const dataset of next.datasets) {
    const code = dataset.datasetCode;
    const entry: DatasetIndexRegistry = registry[code] ?? { nextBuild: 1, indexes: [] };
    registry[code] = entry;
    const wanted = new Set(indexedFields(dataset));
    const kept: AppliedIndex[] = [];
    for (const index of entry.indexes) {
      if (index.state === 'dropping' || wanted.has(index.field)) {
        kept.push(index);
        continue;
      }
      // No longer indexed. Waiting: nothing was ever written. Otherwise its entries are removed in the background;
      // a complete one is kept up to date until no function can still be reading it.
      if (index.state === 'waiting') continue;
      const { job: _job, startedAt: _started, ...rest } = index;
      kept.push({
        ...rest,
        state: 'dropping',
        maintained: index.state === 'complete',
        since: now,
        settlesAt: now + settleMs,
      });
    }
    entry.indexes = kept;
    const present = new Set(kept.filter((index) => index.state !== 'dropping').map((index) => index.field));
    for (const field of wanted) {
      if (present.has(field)) continue;
      const build = entry.nextBuild++;
      const slot = freeSlot(entry);
      if (slot === undefined) {
        entry.indexes.push({ field, build, state: 'waiting', since: now, settlesAt: now });
      } else if (options.completeAtOnce(code)) {
        entry.indexes.push({ field, build, slot, state: 'complete', since: now, settlesAt: now, finishedAt: now });
      } else {
        entry.indexes.push({ field, build, slot, state: 'building', since: now, settlesAt: now + settleMs });
      }
    }
  }
  return registry;
}

/**
 * A registry as stored, read tolerantly: entries that are not well formed are left out (the dataset then has no
 * index for that field until the next configuration change builds one). `undefined` when there is none.
 */
export function parseIndexRegistry(value: unknown): IndexRegistry | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const registry: IndexRegistry = {};
  for (const [code, raw] of Object.entries(value as Record<string, unknown>)) {
    const entry = raw as { nextBuild?: unknown; indexes?: unknown } | null;
    if (!entry || typeof entry.nextBuild !== 'number' || !Array.isArray(entry.indexes)) continue;
    registry[code] = {
      nextBuild: entry.nextBuild,
      indexes: entry.indexes.filter(
        (index): index is AppliedIndex =>
          index !== null &&
          typeof index === 'object' &&
          typeof index.field === 'string' &&
          typeof index.build === 'number' &&
          ['building', 'complete', 'dropping', 'waiting'].includes(index.state) &&
          typeof index.since === 'number' &&
          typeof index.settlesAt === 'number',
      ),
    };
  }
  return registry;
}
