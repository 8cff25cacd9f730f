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
 * (`catchUpPlan`). Each dataset of a query is planned and loaded over a meter of its own (`apart`), as they run at
 * once: what a load cost per row and what a plan spent are its own. The row budget
 * is checked before anything is read or caught up: a load from the dataset's count, a catch-up from the rows it
 * would add.
 * Without a feed, a copy is reused while the source's version is unchanged.
 *
 * A query that finds another one loading the same view waits for that load only within its own time limit.
 */
import { createHash } from 'node:crypto';
import type { ReadableTable } from '../access/permissions';
import { QueryTimeoutError } from '../contract/errors';
import { compareCodePoints } from '../records/value-encoding';
import { BackgroundLoad, stillLoading } from './background-load';
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
  /** Records whose revision the caller wants to know (changes in flight when the load began). */
  watch?: ReadonlySet<string>;
  /** Told the revision of each watched record the read returned. */
  seen?: (id: string, revision: number) => void;
  /** Told the rows read so far, after each page. */
  progress?: (rows: number) => void;
}

export interface LoadDeadline {
  at: number;
  /** What the caller is told: the limit, in words it can act on. */
  message: string;
}

/** A write the source recorded before making it: the records it names, at a position in time order. */
export interface DatasetChange {
  position: string;
  /** The time the position carries (epoch ms). */
  time: number;
  ids: readonly string[];
  /** The revision the write gives its records (1 for new records). */
  revision: number;
  /** How many of `ids` are new records (a create, a batch). */
  created: number;
}

/** A record read to catch up: its revision, and its row when the view may see it. */
export interface ChangedRecord {
  id: string;
  revision: number;
  row?: DatasetRecord;
}

/** What a source offers when it records every write before making it. */
export interface DatasetChangeFeed {
  /**
   * The changes recorded after time `sinceMs` (epoch ms), read consistently. A change is recorded at most
   * `rereadMs` after its position's time, so a reader that looked at time T asks again from T − `rereadMs`.
   * `known`: the caller read the changes after `known.fromMs` already, up to position `known.through` (none when
   * absent): those are not read again, nor returned.
   */
  changesSince(
    datasetCode: string,
    sinceMs: number,
    known?: { fromMs: number; through?: string },
  ): Promise<readonly DatasetChange[]>;
  /**
   * The same, read page by page and no further than the caller will pay for: before each page `allowance` is
   * told the changes read so far and says how many more may be read (0: stop there); it may look something up
   * first. `complete` says whether every change since `sinceMs` was read.
   */
  changesWithin(
    datasetCode: string,
    sinceMs: number,
    allowance: (read: readonly DatasetChange[]) => number | Promise<number>,
  ): Promise<{ changes: readonly DatasetChange[]; complete: boolean }>;
  readonly rereadMs: number;
  /** A change's write lands within this of its position's time, or never. */
  readonly settleMs: number;
  /**
   * The records the changes name as they are now (read consistently); absent ones are left out. Read as
   * `changedRecordReads` groups them: the records of each range at what a load pays for them (read consistently,
   * twice that), the others by id, at least a unit each.
   */
  readChanged(
    datasetCode: string,
    changes: readonly DatasetChange[],
    request: Omit<ReadRowsRequest, 'limit' | 'deadline'>,
  ): Promise<readonly ChangedRecord[]>;
  /**
   * The dataset's record count (as far as the source can tell without writing), to refuse a load that cannot
   * fit before reading anything; it may stop counting once past `atMost`. The load's own row limit stays the
   * exact guard.
   */
  countRecords(datasetCode: string, atMost: number): Promise<number>;
  /** Read units spent so far by this source, so that the cache knows what a load of a dataset costs. */
  unitsRead(): number;
  /**
   * The same source with its reads counted apart: the datasets of a query are read at once, and each one's plan
   * or load weighs what it spent itself, not the others' reads made meanwhile. What the part reads counts for
   * this source too (the request's capacity).
   */
  apart(): DatasetRowSource & { readonly changes: DatasetChangeFeed };
  /**
   * The same source with its reads counted on a meter of its own, not the request's: for a load that may outlive
   * the request (background-load.ts), whose units are charged to the requests that wait for it.
   */
  detached(): DatasetRowSource & { readonly changes: DatasetChangeFeed };
  /** Counts units read on this request's behalf by a detached source (a load it waited for). */
  charge(units: number): void;
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

interface FeedState {
  /** When the feed was last read. */
  readAt: number;
  /** Changes already applied, among those a read from `readAt − rereadMs` returns. */
  applied: ReadonlySet<string>;
  /** Changes whose writes had not landed when last read: read again until they have, or have settled. */
  pending: readonly DatasetChange[];
  /** Read units the load took per row (what catching up is weighed against). */
  unitsPerRow: number;
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
        slot.entry ? this.catchUpPlan(feed.apart().changes, slot.view, slot.entry) : undefined,
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

  /**
   * The changes a copy has not applied, what they add, and whether loading afresh costs less. The change items
   * are read no further than it takes to know: reading stops as soon as what the decision spent (on the changes
   * the copy has not applied, and on a count) plus reading the records they name would pass what a fresh load
   * costs, or once the decision has spent its allowance, whichever comes first; a read that stopped early means a
   * fresh load. The allowance is `DECIDE_SHARE` of a load (at least `DECIDE_MIN_UNITS`). When that is spent with
   * changes still unread, a view without a row filter counts the dataset's records once: records are never
   * deleted, so the count less the rows the copy holds is the records created since it was loaded, and when
   * catching up that many, at what the catch-up of the changes read so far costs per record they create, would
   * cost less than a load, that estimate (the count's cost included) becomes the allowance. (The re-read window's
   * changes, applied already, are read by every look whatever it decides, so they weigh on neither side.) So a
   * catch-up never costs more than a load, and a load chosen after reading changes costs at most the allowance
   * more: that share, or an estimate below the load (less than twice the load in all, and only when the count
   * said a catch-up was cheaper). Updates leave the count as it is: after a burst of updates (or with a row
   * filter) the allowance stays the share (every log of writes costs in proportion to the writes it holds: the
   * share is what keeps the decision small beside the load, and it still lets a catch-up of changes costing up to
   * half a load go ahead).
   */
  private async catchUpPlan(
    feed: DatasetChangeFeed,
    view: DatasetView,
    entry: Entry & { feed: FeedState },
  ): Promise<CatchUpPlan> {
    const readAt = this.now();
    const { applied, pending, unitsPerRow } = entry.feed;
    const held = entry.table.rows.length;
    // A record read by id, consistently, costs at least a unit; one read in a range costs what the load paid for it,
    // twice that (consistently), and the range a unit at most for its last part-filled 4 KB.
    const perRecord = Math.max(1, 2 * unitsPerRow);
    const recordUnits = (changes: readonly DatasetChange[]) => {
      const { ranges, byId } = changedRecordReads(changes);
      return ranges.reduce((sum, range) => sum + range.ids.length * 2 * unitsPerRow + 1, 0) + byId.length * perRecord;
    };
    let allowed = Math.max(DECIDE_MIN_UNITS, DECIDE_SHARE * held * unitsPerRow);
    // The dataset's count, once read: what it cost, and the count when it is exact (not stopped early).
    let count: { units: number; records?: number } | undefined;
    const unitsBefore = feed.unitsRead();
    const weigh = (changes: readonly DatasetChange[]) => {
      const fresh = changes.filter((change) => !applied.has(change.position));
      const toApply = [...pending.filter((change) => !fresh.some((f) => f.position === change.position)), ...fresh];
      const created = fresh.reduce((sum, change) => sum + change.created, 0);
      const countUnits = count?.units ?? 0;
      // What the change items cost; the decision spent a part on those the copy has not applied: those it re-reads
      // (the re-read window after its last look) every look reads, whatever it decides, so they weigh on neither side.
      const spent = feed.unitsRead() - unitsBefore - countUnits;
      const deciding = (changes.length > 0 ? (spent * fresh.length) / changes.length : 0) + countUnits;
      const catchUpUnits = deciding + recordUnits(toApply);
      const loadUnits = (held + created) * unitsPerRow;
      return { toApply, created, spent, deciding, catchUpUnits, loadUnits };
    };
    // What catching up the records created since the load would cost, by the dataset's count, when that is less
    // than a load; undefined when it is not, or the count cannot tell (a row filter; no create read yet).
    const countedCatchUp = async (read: readonly DatasetChange[]): Promise<number | undefined> => {
      const { created, catchUpUnits } = weigh(read);
      if (view.rowFilter || created === 0) return undefined;
      const perCreate = catchUpUnits / created;
      // Past this many creates a catch-up costs more than a load (which pays `unitsPerRow` for each of them too).
      const most =
        perCreate > unitsPerRow ? Math.floor((held * unitsPerRow) / (perCreate - unitsPerRow)) : this.rowBudget;
      if (most < created) return undefined;
      const before = feed.unitsRead();
      const records = await feed.countRecords(view.datasetCode, held + most);
      count = { units: feed.unitsRead() - before, ...(records <= held + most ? { records } : {}) };
      const since = records - held;
      // A count behind the creates already read is stale (the count index shows a write a moment after it).
      if (since < created || since > most) return undefined;
      const estimate = since * perCreate + count.units;
      return estimate < (held + since) * unitsPerRow ? estimate : undefined;
    };
    const { changes, complete } = await feed.changesWithin(
      view.datasetCode,
      entry.feed.readAt - feed.rereadMs,
      async (read) => {
        let weighed = weigh(read);
        if (weighed.catchUpUnits > weighed.loadUnits) return 0;
        if (weighed.deciding >= allowed) {
          // The share is spent: once, the count may tell that catching up is cheaper all the same.
          if (count) return 0;
          const estimate = await countedCatchUp(read);
          if (estimate === undefined) return 0;
          allowed = Math.max(allowed, estimate);
          weighed = weigh(read);
          if (weighed.catchUpUnits > weighed.loadUnits || weighed.deciding >= allowed) return 0;
        }
        const { spent, deciding, catchUpUnits, loadUnits } = weighed;
        // Each further change costs at least a record read in a range: read no more than could still fit under the
        // load, nor (at the rate the changes read so far cost) more than the rest of the allowance. A page costs a
        // unit for its first 4 KB whatever it holds, so a page is never smaller than the first one: fewer items
        // would cost as much, and a small copy would pay a unit for each of the re-read window's changes.
        const underLoad = Math.floor((loadUnits - catchUpUnits) / Math.max(2 * unitsPerRow, MIN_RECORD_UNITS)) + 1;
        const perChange = read.length > 0 ? spent / read.length : 0;
        const underShare = perChange > 0 ? Math.ceil((allowed - deciding) / perChange) : DECIDE_MIN_PAGE;
        return Math.max(DECIDE_MIN_PAGE, Math.min(underLoad, underShare, DECIDE_MAX_PAGE));
      },
    );
    const { toApply, created, catchUpUnits, loadUnits } = weigh(changes);
    const reload = !complete || (toApply.length > 0 && catchUpUnits > loadUnits);
    return {
      readAt,
      seenFrom: entry.feed.readAt - feed.rereadMs,
      seen: changes,
      toApply,
      created,
      reload,
      ...(count?.records === undefined ? {} : { counted: count.records }),
    };
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
/** Deciding between a catch-up and a fresh load reads change items costing at most this share of the load... */
const DECIDE_SHARE = 0.02;
/** ...or this many read units, when more (about fifty change items of single writes). */
const DECIDE_MIN_UNITS = 2;
/** The least a record read in a range is taken to cost, to bound a page of change items when the load cost nothing. */
const MIN_RECORD_UNITS = 0.01;
/** Changes created within this of each other (ms) have their records read as one key range. */
const CHANGE_RANGE_GAP_MS = 3_000;
/** Change items read in a page at least (about what 4 KB holds of single writes' items, a unit read consistently). */
const DECIDE_MIN_PAGE = 50;
/** Change items read in one page at most. */
const DECIDE_MAX_PAGE = 1_000;

/** What catching a copy up would take: the changes read, those to apply, the rows they add, or a reload instead. */
interface CatchUpPlan {
  readAt: number;
  /** The changes after this time (epoch ms) were read, up to the last of `seen`. */
  seenFrom: number;
  seen: readonly DatasetChange[];
  toApply: readonly DatasetChange[];
  created: number;
  reload: boolean;
  /** The dataset's record count, when the decision read it in full. */
  counted?: number;
}

/** A key range of records to read: the ids wanted in it, ascending, and the earliest time of the changes naming them. */
export interface ChangedRange {
  ids: readonly string[];
  fromMs: number;
}

/**
 * How the records the changes name are read: those new in changes (`created`) positioned within
 * `CHANGE_RANGE_GAP_MS` of each other as one key range (records created in a burst or by one batch have ids close
 * together, and a range read costs by the bytes it reads), an update of one of them included; the others (updates
 * of older records, a lone create) by id. The source may still read a range's outliers by id.
 */
export function changedRecordReads(changes: readonly DatasetChange[]): {
  ranges: ChangedRange[];
  byId: string[];
} {
  const creating = changes.filter((change) => change.created > 0).sort((a, b) => a.time - b.time);
  const groups: DatasetChange[][] = [];
  for (const change of creating) {
    const group = groups.at(-1);
    const last = group?.at(-1);
    if (group && last && change.time - last.time <= CHANGE_RANGE_GAP_MS) group.push(change);
    else groups.push([change]);
  }
  const inRange = new Set<string>();
  const ranges: ChangedRange[] = [];
  const byId = new Set<string>();
  for (const group of groups) {
    const ids = [...new Set(group.flatMap((change) => change.ids))].sort(compareCodePoints);
    if (ids.length < 2) continue;
    for (const id of ids) inRange.add(id);
    ranges.push({ ids, fromMs: group[0]?.time ?? 0 });
  }
  for (const change of changes) {
    for (const id of change.ids) if (!inRange.has(id)) byId.add(id);
  }
  return { ranges, byId: [...byId] };
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
