/**
 * The container-level cache of datasets loaded for custom SQL. Loading a dataset reads its whole partition, so
 * a loaded table is kept and reused while the dataset's version (bumped by every write) is unchanged. Entries
 * are per caller view: the same dataset seen with other visible fields or another row filter is another table,
 * because a table only ever holds what its caller may read (docs/interface.md §6, §8).
 *
 * Two bounds: a row budget per query (more rows than that would exhaust the function's memory and time, so the
 * query answers 2001 with a message saying why), and a least-recently-used bound on the rows kept in total.
 * A copy is used for at most `maxAgeMs` after its load (5 minutes), and dropped once past it, not only ignored:
 * `sweep` runs on every query and from an unref'd timer due when the oldest copy ages out (so an idle process
 * gives the memory back, and the timer never keeps it alive); a view whose load the row budget refuses drops its
 * old copy too. The SQL engine's workers stay warm for as long (sqljs-engine.ts, `idleMs`): what they hold then
 * belongs to copies no query can ask for any more.
 *
 * A source that keeps a change feed (the record store: every write claims a change item naming its records
 * before it writes them) is not asked for a version: a loaded copy catches up by reading the changes since it
 * last looked and the changed records alone, so one write to a large dataset costs the next query a few read
 * units instead of a reload, and a query after no write reads only the change items of the last seconds.
 * The records created by changes close in time (a burst of creates, a batch) are read as one key range, so they
 * cost what a load pays for them (by bytes, read consistently), not a unit each.
 * Catching up is never dearer than loading afresh: the change items are read no further than it takes to know
 * (a bounded read), and past that the copy is loaded again, from the change items that read found (only those
 * after it, and those of the settle window before it, are read). The read may spend 2 % of what the load costs;
 * when that is spent, a view without a row filter counts the dataset's records once (records are never deleted:
 * the count less the copy's rows is the records created since), and when catching up that many would cost less
 * than a load, the read may spend that estimate instead. So a load chosen after reading change items costs at most
 * 2 % more, or, when the count said a catch-up was cheaper, that estimate more (below the load: under twice the
 * load in all). Updates leave the count as it is: after a burst of updates the read spends the 2 % as before
 * (catch-up-plan.ts). Each dataset of a query is planned and loaded over a meter of its own (`apart`), as they run at
 * once: what a load cost per row and what a plan spent are its own. The row budget
 * is checked before anything is read or caught up: a load from the dataset's count, a catch-up from the rows it
 * would add.
 * Without a feed, a copy is reused while the source's version is unchanged.
 *
 * A query that finds another one loading the same view waits for that load only within its own time limit.
 */
import { createHash } from 'node:crypto';
import { QueryTimeoutError } from '../contract/errors';
import { BackgroundLoad, stillLoading } from './background-load';
import { type CatchUpPlan, catchUpPlan, type FeedState } from './catch-up-plan';
import type { DatasetChangeFeed, DatasetRowSource, DatasetView, LoadDeadline, ReadRowsRequest } from './dataset-source';
import { datasetColumns, toTableRow } from './dataset-table';
import type { EngineTable } from './query-engine';

export interface DatasetCacheOptions {
  /** Most rows one query may load across its datasets; above it the query answers 2001. Default 200,000. */
  rowBudget?: number;
  /** Most rows kept in the cache; least recently used tables go first. Default 400,000. */
  maxCachedRows?: number;
  /**
   * How long a loaded table is used at most, whatever its version says. The version is bumped after each record
   * write; should an invocation die between the two, this bounds how long the cache can miss that write. Past
   * it the table is dropped. Default 5 minutes (`DEFAULT_COPY_MAX_AGE_MS`).
   */
  maxAgeMs?: number;
  /**
   * How long a load may go on after the query that started it answered 2001 (docs/interface.md §20); past it the
   * load stops and the next query starts another. Default 5 minutes.
   */
  backgroundLimitMs?: number;
  now?: () => number;
}

interface Entry {
  version: string;
  loadedAt: number;
  table: EngineTable;
  /** Copies kept by a change feed. */
  feed?: FeedState;
}

export interface TablesOptions {
  /** How long loading may take (ms) before the query answers 2001, and what that answer says. */
  loadLimit?: { ms: number; message: string };
}

/** How long a loaded copy is used by default; the SQL engine keeps an idle worker as long (sqljs-engine.ts). */
export const DEFAULT_COPY_MAX_AGE_MS = 5 * 60_000;

export class DatasetCache {
  readonly rowBudget: number;
  readonly maxCachedRows: number;
  /** By dataset and view, least recently used first; each holds the latest version loaded. */
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<EngineTable>>();
  /** Loads from a change feed by view, running or done and not yet charged to a request in full. */
  private readonly loads = new Map<string, BackgroundLoad>();
  private readonly backgroundLimitMs: number;
  private rowsHeld = 0;
  /** Due when the oldest copy ages out; unref'd, so it never keeps the process alive. */
  private sweepTimer: NodeJS.Timeout | undefined;

  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: DatasetCacheOptions = {}) {
    this.rowBudget = options.rowBudget ?? 200_000;
    this.maxCachedRows = options.maxCachedRows ?? 400_000;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_COPY_MAX_AGE_MS;
    this.backgroundLimitMs = options.backgroundLimitMs ?? DEFAULT_COPY_MAX_AGE_MS;
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
    this.sweep();
    const deadline = options.loadLimit
      ? { at: this.now() + options.loadLimit.ms, message: options.loadLimit.message }
      : undefined;
    if (source.changes) return this.tablesByChanges(views, source.changes, deadline);
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
    clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  /** Drops the copies past their maximum age (never used again: a query loads afresh), so their memory returns. */
  sweep(): void {
    const now = this.now();
    for (const [viewKey, entry] of this.entries) {
      if (now - entry.loadedAt >= this.maxAgeMs) this.forget(viewKey);
    }
    // A finished load no query came back for holds its table until its copy goes: then it goes too.
    for (const [viewKey, load] of this.loads) {
      if (load.settled && !this.entries.has(viewKey)) this.loads.delete(viewKey);
    }
    this.scheduleSweep();
  }

  /** Sets the timer for the oldest copy's maximum age, when a copy is held and no timer is set. */
  private scheduleSweep(): void {
    if (this.sweepTimer || this.entries.size === 0) return;
    const oldest = Math.min(...[...this.entries.values()].map((entry) => entry.loadedAt));
    const due = Math.max(SWEEP_MIN_DELAY_MS, oldest + this.maxAgeMs - this.now());
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      this.sweep();
    }, due);
    this.sweepTimer.unref();
  }

  private forget(viewKey: string): void {
    const entry = this.entries.get(viewKey);
    if (!entry) return;
    this.entries.delete(viewKey);
    this.rowsHeld -= entry.table.rows.length;
  }

  private checkBudget(rows: number): void {
    if (rows > this.rowBudget) {
      throw new QueryTimeoutError(
        `the query's datasets hold more than ${this.rowBudget} rows, the most the embedded engine loads at once; ` +
          'the mysql engine runs it at any size (docs/interface.md §20), or narrow the data (a smaller dataset or a ' +
          'row filter) or read it page by page with get-list',
      );
    }
  }

  /**
   * Tables from a change feed: a copy younger than the maximum age catches up by the changes recorded since it
   * last looked (and reads only the changed records), unless loading afresh costs less; anything else is loaded.
   * The row budget is checked before anything is read.
   */
  private async tablesByChanges(
    views: readonly DatasetView[],
    feed: DatasetChangeFeed,
    deadline: LoadDeadline | undefined,
    replanned = false,
  ): Promise<EngineTable[]> {
    const slots = views.map((view) => {
      const viewKey = viewKeyOf(view);
      const entry = this.entries.get(viewKey);
      const feedState = entry?.feed;
      const usable =
        entry && feedState && this.now() - entry.loadedAt < this.maxAgeMs ? { ...entry, feed: feedState } : undefined;
      return { view, viewKey, entry: usable };
    });
    // A load that finished after the queries that waited for it gave up: this query pays the rest of its units.
    for (const slot of slots) {
      const done = this.loads.get(slot.viewKey);
      if (done?.settled) this.charge(done, feed);
    }
    // What each copy would hold, from the changes alone (no record read yet): refused here when too much. Each
    // plan and each load counts its own reads: they run at once.
    const plans = await Promise.all(
      slots.map(async (slot) =>
        slot.entry
          ? catchUpPlan(
              feed.apart().changes,
              slot.view,
              slot.entry.feed,
              slot.entry.table.rows.length,
              this.rowBudget,
              this.now,
            )
          : undefined,
      ),
    );
    let used = 0;
    for (const [i, slot] of slots.entries()) {
      const plan = plans[i];
      // A copy loaded afresh is counted from the dataset below, not from the copy it replaces.
      if (slot.entry && plan && !plan.reload) used += slot.entry.table.rows.length + plan.created;
    }
    this.checkBudget(used);
    const counted = await Promise.all(
      slots.map((slot, i) =>
        plans[i]?.reload === false || slot.view.rowFilter
          ? undefined
          : (plans[i]?.counted ?? feed.countRecords(slot.view.datasetCode, this.rowBudget)),
      ),
    );
    // Loads of views without a row filter are refused from the dataset's count before any record is read (a
    // row filter may narrow a view below the budget: then the read itself finds out).
    try {
      this.checkBudget(used + counted.reduce<number>((sum, count) => sum + (count ?? 0), 0));
    } catch (error) {
      // A copy that was to be loaded afresh is of no further use (unless a concurrent load has replaced it since).
      for (const [i, slot] of slots.entries()) {
        if (plans[i]?.reload && this.entries.get(slot.viewKey)?.table === slot.entry?.table) this.forget(slot.viewKey);
      }
      throw error;
    }
    // A load of one of these views that finished while this query was deciding (it looked before the copy was
    // stored) has stored its copy: the query decides again from that copy rather than load the dataset twice.
    if (!replanned && slots.some((slot) => !slot.entry && this.entries.get(slot.viewKey)?.feed)) {
      return this.tablesByChanges(views, feed, deadline, true);
    }
    const remaining = this.rowBudget - used;
    const loads: BackgroundLoad[] = [];
    const loading = Promise.all(
      slots.map((slot, i) => {
        const plan = plans[i];
        if (slot.entry && plan && !plan.reload) return this.catchUp(feed, slot.view, slot.viewKey, slot.entry, plan);
        const load = this.backgroundLoad(feed, slot.view, slot.viewKey, remaining, plan, counted[i]);
        loads.push(load);
        return load.promise;
      }),
    );
    let tables: EngineTable[];
    try {
      tables = await within(loading, deadline, this.now, () =>
        // A catch-up is never left running: only a load goes on.
        loads.some((load) => !load.settled) ? stillLoading(loads) : new QueryTimeoutError(deadline?.message ?? ''),
      );
    } finally {
      for (const load of loads) this.charge(load, feed);
    }
    this.checkBudget(tables.reduce((sum, table) => sum + table.rows.length, 0));
    for (const slot of slots) this.touch(slot.viewKey);
    return tables;
  }

  /**
   * The view's load from the feed: the one running, or a new one. It reads on a meter of its own and without the
   * query's deadline (within `backgroundLimitMs`), so that it goes on when the query gives up waiting for it.
   */
  private backgroundLoad(
    feed: DatasetChangeFeed,
    view: DatasetView,
    viewKey: string,
    remaining: number,
    plan: CatchUpPlan | undefined,
    expected: number | undefined,
  ): BackgroundLoad {
    const running = this.loads.get(viewKey);
    if (running && !running.settled) return running;
    // A finished load nobody charged in full: this request takes the rest of its units.
    if (running) this.charge(running, feed);
    const own = feed.detached();
    const limitMs = this.backgroundLimitMs;
    const deadline = {
      at: this.now() + limitMs,
      message: `loading the dataset '${view.datasetCode}' took longer than ${limitMs} ms and was stopped`,
    };
    const load = new BackgroundLoad(
      view.datasetCode,
      expected,
      () => own.changes.unitsRead(),
      this.now,
      (progress) => this.loadWithFeed(own, own.changes, view, viewKey, remaining, deadline, plan, progress),
    );
    this.loads.set(viewKey, load);
    return load;
  }

  /** Charges a load's units read so far to the request; a finished load charged in full is forgotten. */
  private charge(load: BackgroundLoad, feed: DatasetChangeFeed): void {
    load.chargeTo(feed);
    if (!load.settled) return;
    for (const [viewKey, held] of this.loads) if (held === load) this.loads.delete(viewKey);
  }

  private async loadWithFeed(
    source: DatasetRowSource,
    feed: DatasetChangeFeed,
    view: DatasetView,
    viewKey: string,
    remaining: number,
    deadline: LoadDeadline | undefined,
    /** The decision that chose this load, when one did: the change items it read are not read again. */
    decided?: CatchUpPlan,
    progress?: (rows: number) => void,
  ): Promise<EngineTable> {
    // The feed is read from this moment on. A change recorded before the load whose write lands as it reads may
    // be missed by it: those of the last `settleMs` are watched, and read again by the next query unless the load
    // showed their records at their revisions.
    const readAt = this.now();
    const since = readAt - feed.settleMs;
    const through = decided?.seen.at(-1)?.position;
    const known = decided ? { fromMs: decided.seenFrom, ...(through === undefined ? {} : { through }) } : undefined;
    const unread = await feed.changesSince(view.datasetCode, since, known);
    const recent = [...(decided?.seen.filter((change) => change.time > since) ?? []), ...unread];
    const watch = new Set(recent.flatMap((change) => [...change.ids]));
    const revisions = new Map<string, number>();
    const unitsBefore = feed.unitsRead();
    const table = await this.read(source, view, viewKey, undefined, remaining, deadline, {
      watch,
      seen: (id, revision) => revisions.set(id, revision),
      ...(progress ? { progress } : {}),
    });
    const units = feed.unitsRead() - unitsBefore;
    const pending = recent.filter((change) => !change.ids.every((id) => (revisions.get(id) ?? 0) >= change.revision));
    const loadedAt = this.now();
    table.key = `${view.datasetCode}@${readAt}.${loadedAt}#${digest(viewKey)}`;
    this.store(viewKey, {
      version: String(readAt),
      loadedAt,
      table,
      feed: {
        readAt,
        applied: new Set(recent.map((change) => change.position)),
        pending,
        unitsPerRow: table.rows.length > 0 ? units / table.rows.length : 0,
      },
    });
    return table;
  }

  private async catchUp(
    feed: DatasetChangeFeed,
    view: DatasetView,
    viewKey: string,
    entry: Entry & { feed: FeedState },
    plan: CatchUpPlan,
  ): Promise<EngineTable> {
    const applied = new Set(plan.seen.map((change) => change.position));
    if (plan.toApply.length === 0) {
      const current = this.entries.get(viewKey);
      if (current?.table === entry.table && current.feed)
        current.feed = { ...current.feed, readAt: plan.readAt, applied };
      return entry.table;
    }
    const records = await feed.readChanged(view.datasetCode, plan.toApply, {
      fields: view.fields.map((field) => field.name),
      ...(view.rowFilter ? { rowFilter: view.rowFilter } : {}),
    });
    const byId = new Map(records.map((record) => [record.id, record]));
    // A change whose records do not show it yet is read again next time, until it has settled.
    const pending = plan.toApply.filter(
      (change) =>
        change.time > plan.readAt - feed.settleMs &&
        !change.ids.every((id) => (byId.get(id)?.revision ?? 0) >= change.revision),
    );
    const rows = entry.table.rows.filter((row) => !byId.has(String(row[0])));
    for (const record of records) if (record.row) rows.push(toTableRow(view.fields, record.row));
    this.checkBudget(rows.length);
    const table: EngineTable = {
      name: view.datasetCode,
      columns: entry.table.columns,
      rows,
      key: `${view.datasetCode}@${plan.readAt}.${entry.loadedAt}#${digest(viewKey)}`,
    };
    // A concurrent query may have caught up further already: keep the newer copy.
    const current = this.entries.get(viewKey);
    if (!current?.feed || current.feed.readAt <= plan.readAt) {
      this.store(viewKey, {
        version: String(plan.readAt),
        loadedAt: entry.loadedAt,
        table,
        feed: { readAt: plan.readAt, applied, pending, unitsPerRow: entry.feed.unitsPerRow },
      });
    }
    return table;
  }

  /**
   * One load per key at a time: a query that finds one running waits for it, but only within its own time
   * limit (2001 with its own message after that), never past it.
   */
  private shared(
    loadKey: string,
    deadline: LoadDeadline | undefined,
    load: () => Promise<EngineTable>,
  ): Promise<EngineTable> {
    const pending = this.loading.get(loadKey);
    if (!pending) {
      const promise = load().finally(() => this.loading.delete(loadKey));
      this.loading.set(loadKey, promise);
      return promise;
    }
    if (!deadline) return pending;
    return new Promise<EngineTable>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new QueryTimeoutError(deadline.message)),
        Math.max(0, deadline.at - this.now()),
      );
      pending.then(
        (table) => {
          clearTimeout(timer);
          resolve(table);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
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
    return this.shared(`${viewKey}\n${version}`, deadline, () =>
      this.read(source, view, viewKey, version, remaining, deadline),
    );
  }

  private async read(
    source: DatasetRowSource,
    view: DatasetView,
    viewKey: string,
    version: string | undefined,
    remaining: number,
    deadline: LoadDeadline | undefined,
    watching?: Pick<ReadRowsRequest, 'watch' | 'seen' | 'progress'>,
  ): Promise<EngineTable> {
    const records = await source.readRows(view.datasetCode, {
      fields: view.fields.map((field) => field.name),
      ...(view.rowFilter ? { rowFilter: view.rowFilter } : {}),
      limit: remaining + 1,
      ...(deadline ? { deadline } : {}),
      ...watching,
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
    this.scheduleSweep();
  }

  private touch(viewKey: string): void {
    const entry = this.entries.get(viewKey);
    if (!entry) return;
    this.entries.delete(viewKey);
    this.entries.set(viewKey, entry);
  }
}

/**
 * The promise's value, or `timedOut()`'s error once the deadline has passed (the promise goes on: a load another
 * query may find).
 */
function within<T>(
  promise: Promise<T>,
  deadline: LoadDeadline | undefined,
  now: () => number,
  timedOut: () => Error,
): Promise<T> {
  if (!deadline) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), Math.max(0, deadline.at - now()));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The sweep's timer waits at least this long (ms), so that a clock that does not move never makes it spin. */
const SWEEP_MIN_DELAY_MS = 1_000;
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
