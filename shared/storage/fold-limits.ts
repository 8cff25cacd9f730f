import { MAX_INVOCATION_MS } from './record-counter';

/** Claims are checked once this much past settling, so that checks run every few seconds, not on every list. */
export const CHECK_SLACK_MS = 5_000;

/** Fold a slot once this many records' worth of checked claims wait after its head. */
export const FOLD_MIN_WEIGHT = 64;

/** A page splits when its counts take more than this (one write unit or two per page written). */
export const PAGE_MAX_BYTES = 2_048;

/**
 * A part of a slot's page list splits when its keys take more than this: a split rewrites the parts its new pages
 * fall in, a few write units each, however many pages the slot has (a field with a million distinct values has
 * some 25,000 pages, whose keys would pass DynamoDB's 400 KB item limit in a single list).
 */
export const PAGE_LIST_PART_MAX_BYTES = 8_192;

/** The sizes at which count pages and the parts of their list split. */
export interface CountPageLimits {
  /** Bytes of counts a page holds at most (`PAGE_MAX_BYTES`). */
  page: number;
  /** Bytes of lowest keys a part of the page list holds at most (`PAGE_LIST_PART_MAX_BYTES`). */
  listPart: number;
}

export const COUNT_PAGE_LIMITS: CountPageLimits = { page: PAGE_MAX_BYTES, listPart: PAGE_LIST_PART_MAX_BYTES };

/** How a fold cuts the claims it folds into rounds (each round writes every page its claims touch once). */
export interface FoldRoundLimits {
  /**
   * Records' worth of claims a fold reads at once, and a round takes at most (they and their values are held in
   * memory while it runs).
   */
  records: number;
  /**
   * Bytes of new keys a round adds to one page at most (at least one claim): the split that follows writes the
   * page's mark with about one key per KiB added, so the mark stays a small item.
   */
  pageBytes: number;
  /**
   * Count pages a round holds at once: it reads and writes its pages in key order, a group of at most this many at a
   * time (each at most `PAGE_MAX_BYTES` of counts as stored), however many pages its claims touch.
   */
  pages: number;
}

/**
 * Rounds are cut where a page would take too many new keys, not after a number of records: a round writes each
 * page it touches once, so a load over values already counted folds in few rounds. The records bound what a fold
 * reads and holds at once (a window of claims with their ids, then one slot's values of a round): a smaller one
 * would hold less but write more, since a field of new values touches almost every page of its slot in each round.
 * What a round holds of count pages is bounded apart, by `pages`: a round over a field of spread values (an id, an
 * amount) touches most of its slot's pages (some 25,000 at a million distinct values) and reads and writes them 256
 * at a time (at most 512 KiB of counts as stored), each page still once per round.
 */
export const FOLD_ROUND_LIMITS: FoldRoundLimits = { records: 100_000, pageBytes: 262_144, pages: 256 };

/** A list folds for at most about this long (ms of wall time); what is left waits for the next lists. */
export const FOLD_TIME_MS = 2_000;

/** A fold's lease: longer than any invocation. */
export const FOLD_LEASE_MS = MAX_INVOCATION_MS + 5_000;

/**
 * How long past their check a list leaves claims to the fold beside the writes before folding them itself: long
 * enough for that fold's queue to have run, short enough that a deployment whose queue is stuck still folds. A list
 * folds only when no fold beside the writes began within this time either (`foldSeen`): folds running behind a bulk
 * load are left to catch up, and no list pays for them.
 */
export const LIST_FOLD_GRACE_MS = 60_000;
