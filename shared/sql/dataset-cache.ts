/**
 * The container-level cache of datasets loaded for custom SQL. Loading a dataset reads its whole partition, so
 * a loaded table is kept and reused while the dataset's version (bumped by every write) is unchanged. Entries
 * are per caller view: the same dataset seen with other visible fields or another row filter is another table,
 * because a table only ever holds what its caller may read (docs/interface.md §6, §8).
 *
 * Two bounds: a row budget per query (more rows than that would exhaust the function's memory and time, so the
 * query answers 2001 with a message saying why), and a least-recently-used bound on the rows kept in total.
 *
 * A source that keeps a change feed (the record store: every write of a dataset read by SQL records which
 * records it changed) is not asked for a version: a loaded copy catches up by reading the changes since it last
 * looked and the changed records alone, so one write to a large dataset costs the next query a few read units
 * instead of a reload. Without a feed, a copy is reused while the source's version is unchanged.
 */
import { createHash } from 'node:crypto';
import type { ReadableTable } from '../access/permissions';
import { QueryTimeoutError } from '../contract/errors';
import { datasetColumns, toTableRow } from './dataset-table';
import type { EngineTable } from './query-engine';

/** A filter in get-list syntax (docs/interface.md §5), as in a grant's `rowFilter`. */
export type RowFilter = Readonly<Record<string, unknown>>;

/** A stored record: system fields (`id`, `gmt_create`, `gmt_modified`) and field values by name. */
export type DatasetRecord = Readonly<Record<string, unknown>>;

export interface ReadRowsRequest {
  /** The visible fields; the source may return more, the cache keeps only these (and system fields). */
  fields: readonly string[];
  /** Only records matching this filter, with get-list's semantics. */
  rowFilter?: RowFilter;
  /** Return at most this many records; the cache asks for one more than it can take, to notice excess. */
  limit: number;
  /** Stop reading at this time (epoch ms) with a 2001 that says `message`: the query's time is spent. */
  deadline?: LoadDeadline;
}

export interface LoadDeadline {
  at: number;
  /** What the caller is told: the limit, in words it can act on. */
  message: string;
}

/** A write recorded by the source: the records it changed, at a position in time order. */
export interface DatasetChange {
  position: string;
  /** When it was recorded (epoch ms), after the records' writes succeeded. */
  time: number;
  ids: readonly string[];
}

/** What a source offers when it records what every write changed. */
export interface DatasetChangeFeed {
  /**
   * The changes recorded after time `sinceMs` (epoch ms), read consistently. A change may be recorded up to
   * `rereadMs` after its position's time, so a reader that looked at time T asks again from T − `rereadMs`.
   */
  changesSince(datasetCode: string, sinceMs: number): Promise<readonly DatasetChange[]>;
  readonly rereadMs: number;
  /**
   * How long after a write a read that is not strongly consistent surely returns it (DynamoDB: "usually within
   * a second"). A change recorded longer than this before a load began is in what the load read.
   */
  readonly settledMs: number;
  /** The current records of `ids` as the view may read them (ids absent or outside its row filter are left out). */
  readRowsById(
    datasetCode: string,
    ids: readonly string[],
    request: Omit<ReadRowsRequest, 'limit' | 'deadline'>,
  ): Promise<readonly DatasetRecord[]>;
  /**
   * The dataset's record count (as far as the source can tell without writing), to refuse a load that cannot
   * fit before reading anything; the load's own row limit stays the exact guard.
   */
  countRecords(datasetCode: string): Promise<number>;
}

/**
 * Where datasets' rows come from (the record store over DynamoDB in the deployment). A source is given per
 * request, so that its reads can be counted against that request's capacity.
 */
export interface DatasetRowSource {
  /**
   * A value that changes whenever any record of the dataset is written; `undefined` when the source cannot
   * tell, and then the dataset is read afresh for every query and never cached. Not asked when `changes` is given.
   */
  version?(datasetCode: string): Promise<string | number | undefined>;
  readRows(datasetCode: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]>;
  /** The source's change feed, when it keeps one. */
  changes?: DatasetChangeFeed;
}

/** One dataset as one caller may read it: the fields its grant shows and the rows its row filter allows. */
/** A dataset as one caller may read it (access/permissions.ts decides it): the table a query sees. */
export type DatasetView = ReadableTable;

export interface DatasetCacheOptions {
  /** Most rows one query may load across its datasets; above it the query answers 2001. Default 200,000. */
  rowBudget?: number;
  /** Most rows kept in the cache; least recently used tables go first. Default 400,000. */
  maxCachedRows?: number;
  /**
   * How long a loaded table is used at most, whatever its version says. The version is bumped after each record
   * write; should an invocation die between the two, this bounds how long the cache can miss that write.
   * Default 5 minutes.
   */
  maxAgeMs?: number;
  now?: () => number;
}

interface Entry {
  version: string;
  loadedAt: number;
  table: EngineTable;
  /** Copies kept by a change feed: when the feed was last read, and the changes already applied since then. */
  feed?: { readAt: number; applied: Set<string> };
}

export interface TablesOptions {
  /** How long loading may take (ms) before the query answers 2001, and what that answer says. */
  loadLimit?: { ms: number; message: string };
}

export class DatasetCache {
  readonly rowBudget: number;
  readonly maxCachedRows: number;
  /** By dataset and view, least recently used first; each holds the latest version loaded. */
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<EngineTable>>();
  private rowsHeld = 0;

  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: DatasetCacheOptions = {}) {
    this.rowBudget = options.rowBudget ?? 200_000;
    this.maxCachedRows = options.maxCachedRows ?? 400_000;
    this.maxAgeMs = options.maxAgeMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Rows held in the cache now. */
  get cachedRows(): number {
    return this.rowsHeld;
  }

  /** Tables held in the cache now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The tables for a query's datasets, each as its view allows, from the cache when the dataset has not
   * changed since it was loaded.
   *
   * @throws QueryTimeoutError when the views hold more rows together than the row budget
   */
  async tables(
    views: readonly DatasetView[],
    source: DatasetRowSource,
    options: TablesOptions = {},
  ): Promise<EngineTable[]> {
    const deadline = options.loadLimit
      ? { at: this.now() + options.loadLimit.ms, message: options.loadLimit.message }
      : undefined;
    if (source.changes) return this.tablesByChanges(views, source, source.changes, deadline);
    // The version is read before the rows: a write in between then makes the cached copy look older than it
    // is (reloaded next time), never newer.
    const versions = await Promise.all(views.map((view) => source.version?.(view.datasetCode)));
    const slots = views.map((view, i) => {
      const viewKey = viewKeyOf(view);
      const known = versions[i];
      const version = known === undefined ? undefined : String(known);
      const entry = this.entries.get(viewKey);
      return {
        view,
        viewKey,
        version,
        cached:
          version !== undefined && entry?.version === version && this.now() - entry.loadedAt < this.maxAgeMs
            ? entry
            : undefined,
      };
    });
    let used = 0;
    for (const slot of slots) {
      if (slot.cached) used += slot.cached.table.rows.length;
    }
    this.checkBudget(used);
    const remaining = this.rowBudget - used;
    const tables = await Promise.all(
      slots.map((slot) =>
        slot.cached ? slot.cached.table : this.load(source, slot.view, slot.viewKey, slot.version, remaining, deadline),
      ),
    );
    this.checkBudget(tables.reduce((sum, table) => sum + table.rows.length, 0));
    for (const slot of slots) this.touch(slot.viewKey);
    return tables;
  }

  /** Forgets everything (e.g. when the configuration changes). */
  clear(): void {
    this.entries.clear();
    this.rowsHeld = 0;
  }

  private checkBudget(rows: number): void {
    if (rows > this.rowBudget) {
      throw new QueryTimeoutError(
        `the query's datasets hold more than ${this.rowBudget} rows, the most custom SQL loads at once; ` +
          'narrow the data (a smaller dataset or a row filter) or read it page by page with get-list',
      );
    }
  }

  /**
   * Tables from a change feed: a copy younger than the maximum age catches up by the changes recorded since it
   * last looked (and reads only the changed records); anything else is loaded.
   */
  private async tablesByChanges(
    views: readonly DatasetView[],
    source: DatasetRowSource,
    feed: DatasetChangeFeed,
    deadline: LoadDeadline | undefined,
  ): Promise<EngineTable[]> {
    const slots = views.map((view) => {
      const viewKey = viewKeyOf(view);
      const entry = this.entries.get(viewKey);
      const feedState = entry?.feed;
      const usable =
        entry && feedState && this.now() - entry.loadedAt < this.maxAgeMs ? { ...entry, feed: feedState } : undefined;
      return { view, viewKey, entry: usable };
    });
    let used = 0;
    for (const slot of slots) if (slot.entry) used += slot.entry.table.rows.length;
    this.checkBudget(used);
    const remaining = this.rowBudget - used;
    const tables = await Promise.all(
      slots.map((slot) =>
        slot.entry
          ? this.catchUp(feed, slot.view, slot.viewKey, slot.entry)
          : this.loadWithFeed(source, feed, slot.view, slot.viewKey, remaining, deadline),
      ),
    );
    this.checkBudget(tables.reduce((sum, table) => sum + table.rows.length, 0));
    for (const slot of slots) this.touch(slot.viewKey);
    return tables;
  }

  private async loadWithFeed(
    source: DatasetRowSource,
    feed: DatasetChangeFeed,
    view: DatasetView,
    viewKey: string,
    remaining: number,
    deadline: LoadDeadline | undefined,
  ): Promise<EngineTable> {
    // Too many records, whatever the view: refused before anything is read. (A row filter may narrow the view
    // below the budget: then the read itself finds out.)
    if (!view.rowFilter) this.checkBudget((await feed.countRecords(view.datasetCode)) + (this.rowBudget - remaining));
    // The feed is read from this moment on: writes during the load are caught up by the next query. Changes
    // recorded more than `settledMs` before it are in what the load reads (its read is eventually consistent);
    // later ones are read again by the next query.
    const readAt = this.now();
    const before = await feed.changesSince(view.datasetCode, readAt - feed.rereadMs);
    const applied = new Set(
      before.filter((change) => change.time < readAt - feed.settledMs).map((change) => change.position),
    );
    const table = await this.read(source, view, viewKey, undefined, remaining, deadline);
    const loadedAt = this.now();
    table.key = `${view.datasetCode}@${readAt}.${loadedAt}#${digest(viewKey)}`;
    this.store(viewKey, { version: String(readAt), loadedAt, table, feed: { readAt, applied } });
    return table;
  }

  private async catchUp(
    feed: DatasetChangeFeed,
    view: DatasetView,
    viewKey: string,
    entry: Entry & { feed: NonNullable<Entry['feed']> },
  ): Promise<EngineTable> {
    const readAt = this.now();
    const changes = await feed.changesSince(view.datasetCode, entry.feed.readAt - feed.rereadMs);
    const fresh = changes.filter((change) => !entry.feed.applied.has(change.position));
    const applied = new Set(changes.map((change) => change.position));
    if (fresh.length === 0) {
      const current = this.entries.get(viewKey);
      if (current?.table === entry.table) current.feed = { readAt, applied };
      return entry.table;
    }
    const ids = new Set(fresh.flatMap((change) => [...change.ids]));
    const records = await feed.readRowsById(view.datasetCode, [...ids], {
      fields: view.fields.map((field) => field.name),
      ...(view.rowFilter ? { rowFilter: view.rowFilter } : {}),
    });
    const rows = entry.table.rows.filter((row) => !ids.has(String(row[0])));
    for (const record of records) rows.push(toTableRow(view.fields, record));
    this.checkBudget(rows.length);
    const table: EngineTable = {
      name: view.datasetCode,
      columns: entry.table.columns,
      rows,
      key: `${view.datasetCode}@${readAt}.${entry.loadedAt}#${digest(viewKey)}`,
    };
    // A concurrent query may have caught up further already: keep the newer copy.
    const current = this.entries.get(viewKey);
    if (!current?.feed || current.feed.readAt <= readAt) {
      this.store(viewKey, { version: String(readAt), loadedAt: entry.loadedAt, table, feed: { readAt, applied } });
    }
    return table;
  }

  private load(
    source: DatasetRowSource,
    view: DatasetView,
    viewKey: string,
    version: string | undefined,
    remaining: number,
    deadline: LoadDeadline | undefined,
  ): Promise<EngineTable> {
    // Without a version every query reads afresh: nothing is shared, not even a load in flight.
    if (version === undefined) return this.read(source, view, viewKey, undefined, remaining, deadline);
    const loadKey = `${viewKey}\n${version}`;
    const pending = this.loading.get(loadKey);
    if (pending) return pending;
    const promise = this.read(source, view, viewKey, version, remaining, deadline).finally(() =>
      this.loading.delete(loadKey),
    );
    this.loading.set(loadKey, promise);
    return promise;
  }

  private async read(
    source: DatasetRowSource,
    view: DatasetView,
    viewKey: string,
    version: string | undefined,
    remaining: number,
    deadline: LoadDeadline | undefined,
  ): Promise<EngineTable> {
    const records = await source.readRows(view.datasetCode, {
      fields: view.fields.map((field) => field.name),
      ...(view.rowFilter ? { rowFilter: view.rowFilter } : {}),
      limit: remaining + 1,
      ...(deadline ? { deadline } : {}),
    });
    this.checkBudget(records.length + (this.rowBudget - remaining));
    const table: EngineTable = {
      name: view.datasetCode,
      columns: datasetColumns(view.fields),
      rows: records.map((record) => toTableRow(view.fields, record)),
    };
    if (version === undefined) return table;
    // The key tells the engine it may keep this table loaded: same dataset, view, version and load, same rows.
    const loadedAt = this.now();
    table.key = `${view.datasetCode}@${version}.${loadedAt}#${digest(viewKey)}`;
    this.store(viewKey, { version, loadedAt, table });
    return table;
  }

  private store(viewKey: string, entry: Entry): void {
    const previous = this.entries.get(viewKey);
    if (previous) {
      this.entries.delete(viewKey);
      this.rowsHeld -= previous.table.rows.length;
    }
    // A table larger than the whole cache is used for this query and not kept.
    if (entry.table.rows.length > this.maxCachedRows) return;
    this.entries.set(viewKey, entry);
    this.rowsHeld += entry.table.rows.length;
    for (const [key, old] of this.entries) {
      if (this.rowsHeld <= this.maxCachedRows) break;
      if (key === viewKey) continue;
      this.entries.delete(key);
      this.rowsHeld -= old.table.rows.length;
    }
  }

  private touch(viewKey: string): void {
    const entry = this.entries.get(viewKey);
    if (!entry) return;
    this.entries.delete(viewKey);
    this.entries.set(viewKey, entry);
  }
}

/** Identity of a view: the dataset, the visible fields in order and the row filter with its keys sorted. */
function viewKeyOf(view: DatasetView): string {
  return JSON.stringify([view.datasetCode, view.fields.map((f) => [f.name, f.type]), canonical(view.rowFilter ?? {})]);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
