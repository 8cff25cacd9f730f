/**
 * Where custom SQL's datasets come from (the port the dataset cache reads through): a source of rows per request,
 * and the change feed a source may keep so that a loaded copy catches up instead of loading again.
 */
import type { ReadableTable } from '../access/permissions';

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
