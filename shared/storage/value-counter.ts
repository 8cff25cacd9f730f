/**
 * Per-value totals: the exact number of records whose value in one index slot lies in given key intervals
 * (an equality, an `_in`, a range, null or not null), at a cost that does not grow with the number of matches,
 * without transactions and without a counter item that every write touches (a value a quarter of all writes
 * carry must not become a hot item).
 *
 * Ingredients:
 * - Change items (change-items.ts): every write claims one before it writes its records, at a position taken
 *   from the clock just before (a ULID), naming the records and, per index slot, their count keys (a create's
 *   values, an update's values before and after in the slots it changes, a batch's values record by record).
 *   A claim lands within `CLAIM_LATE_MS` of its position's time; the write that follows it lands within the
 *   same invocation, so within `MAX_INVOCATION_MS`; the record stores the claim's position (`@cpos`).
 * - Per slot, count pages: each says "through position T, these count keys have these counts", for the keys
 *   from its lowest key up to the next page's lowest; a page splits in two when it grows past
 *   `PAGE_MAX_BYTES`. A head says through which position every page the slot's claims touched is folded. Folds
 *   find a key's page through the page list (an entry per page: its lowest key and, once a fold gave it one, the
 *   page's sum, the total of its counts, with the position that sum is true at), kept in parts split by key range
 *   as they grow past `PAGE_LIST_PART_MAX_BYTES` (value-count-store.ts), so that it never nears the 400 KB item
 *   limit and a round reads the parts covering its keys and writes only those holding entries it changes. Totals
 *   read it for intervals wider than a few pages, and take the sums of the pages inside them (see 9).
 * - Per dataset, a checked position: every claim at or before it that still exists is known to be written (its
 *   record write happened, or for a batch the records its `m` names).
 *
 * A total is, per count key inside the intervals, its count on its page plus the effect of every claim after
 * that page's position (`max(page through, head through)`): +1 for a create's key, −1/+1 for an update's keys
 * before and after, +1 per written record of a batch; for the pages wholly inside an interval, their entries' sums
 * instead of their counts, with the claims after `max(entry through, head through)`. Only the pages at the edges of
 * each interval, the page list's parts over it and the claims of the last seconds are read: the cost follows
 * neither the matches nor the distinct keys between the edges.
 *
 * Why it is exact:
 * 1. Every record write is preceded by its claim, so a total read after a write counts it (a claim counts from
 *    the moment it lands, its records a moment later: the same "exact up to the reads' consistency" as every
 *    list read).
 * 2. A claim whose write did not happen must stop counting. When the writer knows (its write's condition
 *    failed, the item was too large, a batch's writes failed part-way) it withdraws the claim or says which of
 *    its records exist before answering. When the writer died, the claim is found by the check below: once its
 *    position is older than `SETTLE_MS` (the longest invocation plus a second) no write of it can still land,
 *    so whether it did is final. The fold beside the writes (`foldDatasetTotals`, run by changes/value-folds.ts
 *    once a dataset's claims have settled) checks them, and a list that meets claims older than
 *    `SETTLE_MS + CHECK_SLACK_MS` past the checked position checks them first too (`checkClaims`): a create whose position is its id is written when the
 *    count index holds its id; a batch when its bulk group says all its records are written (else the records
 *    of its group are read, consistently, and the claim says which exist); an update (or a create that had to
 *    take a fresh position) when a later claim names it as the write it replaced (that writer read the record
 *    with this position) or the record's `@cpos` is still its position, read consistently, and else re-reading
 *    the claims after that read shows whether a later write replaced it. A direct update (one written without a
 *    read, which never sets an index key: operations/update.ts) moves no count key, so it is left as it is.
 *    Claims not written are withdrawn, then
 *    the checked position moves forward (conditionally, never back). So a claim whose writer died counts for
 *    at most `SETTLE_MS + CHECK_SLACK_MS`.
 * 3. A fold moves checked claims into the pages (beside the writes; a list only folds claims left
 *    `LIST_FOLD_GRACE_MS` past their check, when the folds beside the writes are behind): under a lease in the head
 *    (one folder at a time, for less than any invocation lasts plus a margin), in rounds of a prefix of them. It
 *    reads the claims after the oldest head up to the checked position a window at a time, from the oldest head
 *    up: the first claims after the last window's end that hold at most `FOLD_ROUND_LIMITS.records` records
 *    (`ChangeItems.window`), read page by page, each window once for every slot (consistently: withdrawals and
 *    partial batches were written before the checked position moved, and no claim can appear at or before it any
 *    more, so what it reads is final; a window is every claim between its start and its last, or the checked
 *    position for the last window, so a slot whose head is at or after its start folds exactly the claims after
 *    its head up to the window's end). So what a fold holds is one window, whatever the backlog. In a window a
 *    round takes the longest prefix that adds at most `pageBytes` of new keys to any page (at least one claim), so
 *    a load over values already counted folds in one round per window: each page is written once per round, not
 *    once per few thousand records. It adds each claim after a page's own position to that page, writes the page
 *    conditionally on its position, and only then moves the head to the round's last claim. A page untouched by
 *    the claims between its position and the head's counts the same at both, which is why a total may take
 *    `max(page, head)`; a fold cut short leaves pages further than the head, still true.
 *    A round holds at most `pages` count pages at once: it reads the pages its claims touch in key order, a group
 *    at a time, and each group may cut the prefix shorter (a page of it would take too many new keys). A group is
 *    written with the claims of the prefix as it stands when it is read, at that prefix's last position; a group
 *    written before a later one cut the prefix shorter holds claims past the round's end, at its own position,
 *    true as a page a fold cut short leaves (its entry gets the sum at that position, see 9); a page whose claims
 *    all fall past the cut is left as it is (none of the round's claims touches it). So when the head moves, every
 *    page the round's claims touch is at or past it, as before; the cut is the same as if every page were read at
 *    once (each page's own cut depends on its own keys only, and the round takes the smallest).
 * 4. A page a round would grow past `PAGE_MAX_BYTES` is never written whole. A split writes, in order: the page as
 *    it stands with `splitAt`, its split keys (nothing else changes); the new pages, each with the round's counts
 *    from its split key up to the next at the round's position (or, for a fold finishing an earlier split, the
 *    marked page's counts at its position), from the highest down; their keys in the page list (once for all the
 *    splits of a group of the round's pages, see 3: a list part that grows too large writes its upper parts before
 *    itself, and a part's keys count only below the next part's first, so the list names each page once at every
 *    step); the page with the counts below its first split key, conditionally on the mark's position. A reader
 *    takes each page's counts only below the next existing page's lowest key, and every page written so far holds
 *    exactly the counts of its keys at its own position (the claims after it are added by that page's position),
 *    so every state in between counts each key once. A new page already written by a fold that stopped is kept
 *    (it is true at its position); a fold that finds `splitAt` finishes the split before it adds anything.
 * 5. Pages, heads and the checked position are only written with values true at their positions, so an older
 *    copy read from a replica is true too (the tail it needs is longer, and it is read). Pages are read
 *    consistently all the same: `max(page, head)` holds for the page as it is, not for an older copy of it.
 *
 * A slot's totals start once for a dataset whose records were all written with claims (it holds none, or its
 * oldest record's creating claim carries the slot): from the first position. A slot of a dataset holding
 * records written before change items existed has none (its totals count index keys, as before). A slot is one
 * index build (`countSlotKey`): the caller asks only for builds that were complete from the moment they were made
 * (`exactTotals` in catalog/index-registry.ts). A build a job ran over stored records has claims of the writes
 * since it was made only, and the oldest-record test alone would not see a record a function still serving the
 * earlier configuration wrote without the build's key. Such a build's job counts what it scans instead
 * (indexing/build-totals.ts), and its totals start at the build's start position S with those counts
 * (`startSlotTotalsAt`); the index answers from them once the job completes it (`totalsFrom` in the registry):
 * 6. S is the last position of the build's `settlesAt`: every claim after S was made by a function serving the
 *    build, so it carries the build's count keys and its writer keeps the build's index key. The job reads no
 *    record before every write claimed at or before S has landed or never will (`SETTLE_MS` later; nothing was
 *    in flight when the build was made while nothing served the store), and reads records consistently.
 * 7. What a record adds at S is read from the record as the job's key writer left it: the count key its index
 *    attribute holds for the build (a key a function serving the earlier configuration left stale counts as the
 *    value it says, as the claims after S take it), with every write claimed after S that the read shows undone
 *    (its `@cpos`, then each update's `previous`: an update's keys after become its keys before; a create or a
 *    batch after S means the record did not exist at S), and moved to the key the job then set, when it set one
 *    (the job's own write carries no claim). So for every record, the counts at S plus the claims after S that
 *    the read did not show end at the key it holds once the job is done: the writes the read showed are undone
 *    and counted again from the claims, the writes after the read count from the claims alone, and a write that
 *    raced the job's key write made it read the record again and count from that read. A chain that does not add
 *    up (a claim missing, a key undone the record does not hold) leaves the build uncounted.
 * 8. A segment's counts are saved with its position after each page, in one item, so a crashed segment resumes
 *    with the counts of exactly the pages before its position, and a page read again counts once. The pages are
 *    written from every segment's counts when the job finishes, before the registry says the index answers from
 *    them; a build dropped while its job ran is not completed, and its counts are never read. A build a segment
 *    could not count (a chain that does not add up, counts past 16 KB in one segment) keeps counting index keys.
 * 9. Page sums. A round writes its pages (and finishes its splits), then the entries of every page its claims
 *    touch, each with the page's sum and position as the page now stands (a page an earlier fold that stopped had
 *    already written past the round's position is not written again, but its entry is, from the page as stored),
 *    and only then moves the head. So when the head is at H, no claim in (entry through, H] touches the keys of an
 *    entry's page, and an entry's sum stands for its keys up to the next entry's lowest at `max(entry, head)`
 *    exactly as a page does (3): an entry older than the head is true at the head, one newer (a fold that stopped
 *    after the list, before the head) is true at its own position. A fold that stops after pages and before the
 *    list leaves entries older than their pages: still true, at their own positions (the claims after them are
 *    read), and the next fold writes them. The sum covers the keys up to the next entry, so an entry must lose its
 *    sum before an entry appears within its range: a split takes the marked page's sum away (a list write before
 *    anything else of the split, after the mark, which changes no count), then writes the new pages, lists them
 *    without sums, trims the page, and the round's list write gives all of them sums (a new page another fold wrote
 *    first gets one from the next fold that writes it). An entry without a sum (a page being split, a page before
 *    page sums, a new page not yet summed) says "read the page". A total uses an entry's sum only when the entry's
 *    lowest key is inside the interval and the next entry's is not above it (count keys sort as the index keys they
 *    stand for, so every key between is inside; 'across' cannot hide between them), and below the highest pages
 *    it read; every other run of entries between them is read as pages, by a consistent Query over the
 *    page items from its lowest up to the next summed entry, each page's keys taken below the next page's lowest
 *    and below that entry. The sums and the pages a total reads meet at listed lowest keys, whose pages exist (a
 *    page is written before it is listed), and a split under a total changes no sum the total can take: the list
 *    it read either still had the marked page's sum and none of its new entries (the sum covers them all, at its
 *    position) or had lost it (the run is read as pages, point 4). An index build's start writes its pages, then
 *    their entries with sums at S (the same counts if a start cut short wrote them), then the head.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { logSideFoldFailure } from '../observability/change-metrics';
import { recordIdTime } from '../records/record-ids';
import { compareCodePoints, countKeyPlace, type KeyInterval } from '../records/value-encoding';
import { COMPACTION_LAG_MS } from './change-compaction';
import { CLOCK_SKEW_MS, type StoredClaim } from './change-items';
import type { DatasetBookkeeping } from './dataset-bookkeeping';
import { lastIdAt, MAX_INVOCATION_MS, SETTLE_MS } from './record-counter';
import { type PageSum, pageBytes, type ValueCountStore, type ValueHead, type ValuePage } from './value-count-store';

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
const FOLD_TIME_MS = 2_000;
/** A fold's lease: longer than any invocation. */
export const FOLD_LEASE_MS = MAX_INVOCATION_MS + 5_000;
/**
 * How long past their check a list leaves claims to the fold beside the writes before folding them itself: long
 * enough for that fold's queue to have run, short enough that a deployment whose queue is stuck still folds.
 */
export const LIST_FOLD_GRACE_MS = 60_000;
/** How long a dataset found to hold records written before change items is not checked again. */
const NOT_COVERED_RECHECK_MS = 5 * 60_000;

export interface SlotCountRequest {
  datasetCode: string;
  /** The slot's `countSlotKey`. */
  slot: string;
  /** Disjoint intervals of index keys. */
  intervals: readonly KeyInterval[];
  now: number;
  meter: CapacityMeter;
  /**
   * The dataset's other slots: a list that folds one slot folds these too (in the same time), so that a slot
   * nobody lists does not pile up claims its first list would read.
   */
  otherSlots?: readonly string[];
  /** The request that asks, named in the warning when the fold a list runs itself fails. */
  requestId?: string;
}

/** Datasets (and slots) found to hold records written before change items, until when not to look again. */
const notCovered = new Map<string, number>();

/**
 * The exact number of records whose value in the slot lies in the intervals, or undefined when per-value
 * totals cannot say: the slot has none (records older than change items), or a bound cuts a group of long
 * values (`countKeyPlace` 'across').
 */
export async function countSlotValues(
  bookkeeping: DatasetBookkeeping,
  request: SlotCountRequest,
): Promise<number | undefined> {
  const { datasetCode, slot, intervals, now, meter } = request;
  const read = await bookkeeping.readValueHead(datasetCode, slot, meter);
  const head = read.head ?? (await startSlotTotals(bookkeeping, datasetCode, slot, now, meter));
  if (!head) return undefined;
  const counted = await Promise.all(
    intervals.map((interval) => countOnPages(bookkeeping.values, datasetCode, slot, interval, meter)),
  );
  if (counted.some((interval) => interval === undefined)) return undefined;
  const covering = (counted as IntervalCounts[]).map((interval) => interval.counted);
  const effective = (page: CountedRange | undefined): string =>
    page && compareCodePoints(page.through, head.through) > 0 ? page.through : head.through;
  let tailFrom = head.through;
  for (const page of covering.flat()) if (compareCodePoints(effective(page), tailFrom) < 0) tailFrom = effective(page);
  let total = (counted as IntervalCounts[]).reduce((sum, interval) => sum + interval.total, 0);

  let claims = await bookkeeping.changes.after(datasetCode, tailFrom || undefined, meter, false);
  let checked = read.checked ?? '';
  const due = lastIdAt(now - SETTLE_MS - CHECK_SLACK_MS);
  if (claims.some((claim) => claim.position > checked && claim.position <= due)) {
    checked = lastIdAt(now - SETTLE_MS);
    const outcome = await checkClaims(bookkeeping, datasetCode, read.checked ?? '', checked, meter);
    claims = applyCheck(claims, outcome);
  }
  const batchValues = await readBatchValues(bookkeeping, datasetCode, slot, tailFrom, claims, meter, false);
  for (const { claim, key, delta } of claimDeltas(claims, slot, batchValues)) {
    for (const [i, interval] of intervals.entries()) {
      const place = countKeyPlace(key, interval);
      if (place === 'across') return undefined;
      if (place === 'outside') continue;
      if (compareCodePoints(claim.position, effective(rangeOf(covering[i] as CountedRange[], key))) > 0) total += delta;
    }
  }

  // The fold beside the writes (changes/value-folds.ts) moves settled claims into the pages; a list folds only
  // what it has left well past its time (its queue is behind or not running), so that lists never pay for a load.
  const overdue = lastIdAt(now - SETTLE_MS - CHECK_SLACK_MS - LIST_FOLD_GRACE_MS);
  const waiting = claims.filter(
    (claim) => compareCodePoints(claim.position, head.through) > 0 && compareCodePoints(claim.position, overdue) <= 0,
  );
  if (weight(waiting) >= FOLD_MIN_WEIGHT && (head.foldUntil ?? 0) < now) {
    // The total is known: a fold that meets another folder's writes (a page changed under it) or fails stops,
    // leaving only true items behind, and the list answers all the same; a failure is logged as a warning.
    await foldDatasetTotals(bookkeeping, {
      datasetCode,
      slots: [slot, ...(request.otherSlots ?? [])],
      now,
      meter,
      until: performance.now() + FOLD_TIME_MS,
    }).catch((error: unknown) => logSideFoldFailure({ requestId: request.requestId, datasetCode, slot, error }));
  }
  return total;
}

export interface DatasetFoldRequest {
  datasetCode: string;
  /** The slots (`countSlotKey`) whose totals are kept: each is started when it has no head yet, then folded. */
  slots: readonly string[];
  now: number;
  meter: CapacityMeter;
  /** When to stop (a `performance.now()` time): what is left waits for the next fold. */
  until: number;
  /** How rounds are cut (`FOLD_ROUND_LIMITS` unless said). */
  rounds?: FoldRoundLimits;
  /** When pages and their list's parts split (`COUNT_PAGE_LIMITS` unless said). */
  pageLimits?: CountPageLimits;
}

export interface DatasetFoldOutcome {
  /** Records' worth of claims moved into count pages (of the slot that took most: each slot folds the same claims). */
  folded: number;
  /** Settled claims are left after a head: the time ran out, or another folder holds a slot's lease. */
  left: boolean;
  /**
   * The position after which these totals still read claims, as the fold leaves them: the oldest head and the checked
   * position (change-compaction.ts); undefined when none of the slots keeps totals.
   */
  readsFrom?: string;
}

/**
 * Check the dataset's settled claims and fold them into the count pages of its slots (2 and 3 above), as far as
 * the time allows. Idempotent and safe beside other folders (the leases and conditional writes of `foldSlot`), so
 * a fold asked for twice, or while a list folds, costs a few reads and changes nothing.
 */
export async function foldDatasetTotals(
  bookkeeping: DatasetBookkeeping,
  request: DatasetFoldRequest,
): Promise<DatasetFoldOutcome> {
  const { datasetCode, now, meter, until } = request;
  const settled = lastIdAt(now - SETTLE_MS);
  const checkedBefore = (await bookkeeping.values.readChecked(datasetCode, meter)) ?? '';
  if (compareCodePoints(checkedBefore, settled) < 0) {
    await checkClaims(bookkeeping, datasetCode, checkedBefore, settled, meter);
  }
  const checked = compareCodePoints(checkedBefore, settled) < 0 ? settled : checkedBefore;
  const outcome: DatasetFoldOutcome = { folded: 0, left: false };
  const behind: { slot: string; head: ValueHead }[] = [];
  // Each slot's head as this fold leaves it (it moves only the heads it holds the lease of).
  const heads = new Map<string, string>();
  const readsFrom = () => {
    for (const through of heads.values()) {
      const from = compareCodePoints(through, checked) < 0 ? through : checked;
      if (outcome.readsFrom === undefined || compareCodePoints(from, outcome.readsFrom) < 0) outcome.readsFrom = from;
    }
    return outcome;
  };
  for (const slot of request.slots) {
    const head =
      (await bookkeeping.values.readHeadConsistently(datasetCode, slot, meter)) ??
      (await startSlotTotals(bookkeeping, datasetCode, slot, now, meter));
    if (!head) continue;
    heads.set(slot, head.through);
    if (compareCodePoints(head.through, checked) >= 0) continue;
    if ((head.foldUntil ?? 0) >= now) outcome.left = true;
    else behind.push({ slot, head });
  }
  if (behind.length === 0) return readsFrom();
  // The checked claims, read a round's worth at a time from the oldest head, each window once for every slot: none
  // can appear at or before the checked position any more, and withdrawals and partial batches were written before
  // it moved, so a consistent read now is final for them all. A fold holds one window, whatever the backlog.
  const limits = request.rounds ?? FOLD_ROUND_LIMITS;
  const turn = { now, meter, until, limits, pageLimits: request.pageLimits ?? COUNT_PAGE_LIMITS };
  const folding = behind.map(({ slot, head }) => ({ slot, from: head.through, folded: 0 }));
  let cursor = folding.map(({ from }) => from).sort(compareCodePoints)[0] as string;
  let heaviest = 1;
  while (folding.length > 0 && compareCodePoints(cursor, checked) < 0) {
    if (performance.now() >= until) {
      outcome.left = true;
      break;
    }
    const size = { records: limits.records, heaviest };
    const window = await bookkeeping.changes.window(datasetCode, cursor || undefined, checked, size, meter);
    heaviest = window.heaviest;
    const windowThrough = window.complete ? checked : (window.claims.at(-1) as StoredClaim).position;
    for (const slot of [...folding]) {
      const { from } = slot;
      if (compareCodePoints(from, windowThrough) >= 0) continue;
      const after = window.claims.filter((claim) => compareCodePoints(claim.position, from) > 0);
      const run = await foldSlot(bookkeeping, datasetCode, slot.slot, from, windowThrough, after, turn);
      slot.folded += run.folded;
      outcome.folded = Math.max(outcome.folded, slot.folded);
      if (run.reached) {
        slot.from = windowThrough;
        heads.set(slot.slot, windowThrough);
      } else {
        // Out of time, or another folder holds the slot's lease: what is left waits for the next fold.
        outcome.left = true;
        folding.splice(folding.indexOf(slot), 1);
      }
    }
    cursor = windowThrough;
  }
  return readsFrom();
}

/**
 * A run of count keys a total took the counts of at one position: a page it read whole, or a page-list entry whose
 * sum it took (each from its lowest key up to the next one's lowest).
 */
interface CountedRange {
  lowest: string;
  through: string;
}

/** What the pages and page sums say of one interval: their total, and the ranges it came from (ascending). */
interface IntervalCounts {
  total: number;
  counted: CountedRange[];
}

/** The range (of a contiguous run, ascending) whose keys include `key`. */
function rangeOf(ranges: readonly CountedRange[], key: string): CountedRange | undefined {
  let found: CountedRange | undefined;
  for (const range of ranges) {
    if (compareCodePoints(range.lowest, key) <= 0) found = range;
    else break;
  }
  return found;
}

/**
 * The counts of an interval's keys on the slot's pages (see 9 above), or undefined when a bound cuts a group of
 * long values. An interval of a few pages is read whole, as one Query from its upper bound down. A wider one takes
 * the sums of the page-list entries whose keys all lie inside it and reads only the rest of its pages: the highest
 * few (that first Query), and each run of pages between them that has no usable sum (an edge, a page being split,
 * a page a fold has not given a sum yet), as a Query over its pages.
 */
async function countOnPages(
  values: ValueCountStore,
  datasetCode: string,
  slot: string,
  interval: KeyInterval,
  meter: CapacityMeter,
): Promise<IntervalCounts | undefined> {
  const highest = await values.highestPagesCovering(datasetCode, slot, interval.lower, interval.upper, meter);
  const top = countPages(highest.pages, interval, undefined);
  if (!top || highest.all) return top;
  // The highest pages read cover the keys from the lowest of them up; below it, the list says where sums serve.
  const below = (highest.pages[0] as ValuePage).lowest;
  const entries = await values.readPageEntries(datasetCode, slot, interval.lower, below, meter);
  const counted: CountedRange[] = [];
  let total = 0;
  let gapFrom: string | undefined = interval.lower;
  const readGap = async (to: string): Promise<boolean> => {
    const pages = (await values.pagesCovering(datasetCode, slot, gapFrom as string, to, meter)).filter(
      (page) => compareCodePoints(page.lowest, to) < 0,
    );
    const gap = countPages(pages, interval, to);
    if (!gap) return false;
    total += gap.total;
    counted.push(...gap.counted);
    gapFrom = undefined;
    return true;
  };
  for (const [e, entry] of entries.entries()) {
    if (compareCodePoints(entry.lowest, below) >= 0) break;
    const next = entries[e + 1]?.lowest;
    // Every count key from the entry's lowest up to the next entry's lies inside the interval (count keys sort as
    // their index keys do), and no further than the highest pages read.
    const usable =
      entry.sum !== undefined &&
      next !== undefined &&
      compareCodePoints(next, below) <= 0 &&
      countKeyPlace(entry.lowest, interval) === 'inside' &&
      countKeyPlace(next, interval) !== 'outside';
    if (!usable) {
      gapFrom ??= entry.lowest;
      continue;
    }
    if (gapFrom !== undefined && !(await readGap(entry.lowest))) return undefined;
    total += (entry.sum as PageSum).sum;
    counted.push({ lowest: entry.lowest, through: (entry.sum as PageSum).through });
  }
  if (gapFrom !== undefined && !(await readGap(below))) return undefined;
  return { total: total + top.total, counted: [...counted, ...top.counted] };
}

/**
 * The counts inside the interval on a contiguous run of pages (ascending), each page's keys taken below the next
 * page's lowest (the last's below `upTo`, when given); undefined when a bound cuts a group of long values.
 */
function countPages(
  pages: readonly ValuePage[],
  interval: KeyInterval,
  upTo: string | undefined,
): IntervalCounts | undefined {
  let total = 0;
  for (const [p, page] of pages.entries()) {
    const next = pages[p + 1]?.lowest ?? upTo;
    for (const [key, count] of page.counts) {
      if (next !== undefined && compareCodePoints(key, next) >= 0) break;
      const place = countKeyPlace(key, interval);
      if (place === 'across') return undefined;
      if (place === 'inside') total += count;
    }
  }
  return { total, counted: pages.map((page) => ({ lowest: page.lowest, through: page.through })) };
}

/** How many records' worth of counting the claims hold. */
function weight(claims: readonly StoredClaim[]): number {
  return claims.reduce(
    (sum, claim) => sum + (claim.kind === 'batch' ? (claim.landed?.size ?? claim.ids.length) : 1),
    0,
  );
}

interface Delta {
  claim: StoredClaim;
  key: string;
  delta: number;
}

/** What each claim adds to one slot's counts, key by key. */
function claimDeltas(
  claims: readonly StoredClaim[],
  slot: string,
  batchValues: ReadonlyMap<string, ReadonlyMap<string, string>>,
): Delta[] {
  const deltas: Delta[] = [];
  for (const claim of claims) {
    if (claim.kind === 'create') {
      const key = claim.values[slot];
      if (key !== undefined) deltas.push({ claim, key, delta: 1 });
    } else if (claim.kind === 'update') {
      const before = claim.before[slot];
      const after = claim.after[slot];
      if (before === after) continue;
      if (before !== undefined) deltas.push({ claim, key: before, delta: -1 });
      if (after !== undefined) deltas.push({ claim, key: after, delta: 1 });
    } else {
      const values = batchValues.get(claim.position);
      if (!values) continue;
      const added = new Map<string, number>();
      for (const [id, key] of values) {
        if (claim.landed && !claim.landed.has(id)) continue;
        added.set(key, (added.get(key) ?? 0) + 1);
      }
      for (const [key, delta] of added) deltas.push({ claim, key, delta });
    }
  }
  return deltas;
}

async function readBatchValues(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  after: string,
  claims: readonly StoredClaim[],
  meter: CapacityMeter,
  consistent: boolean,
  through?: string,
): Promise<Map<string, ReadonlyMap<string, string>>> {
  const batches = new Map<string, string[]>();
  for (const claim of claims) if (claim.kind === 'batch') batches.set(claim.position, claim.ids);
  if (batches.size === 0) return new Map();
  return bookkeeping.changes.slotValuesAfter(
    datasetCode,
    slot,
    after || undefined,
    (position) => batches.get(position),
    meter,
    consistent,
    through,
  );
}

/** What a check found: claims withdrawn, and batches of which only some records were written. */
export interface CheckOutcome {
  withdrawn: ReadonlySet<string>;
  landed: ReadonlyMap<string, ReadonlySet<string>>;
}

function applyCheck(claims: readonly StoredClaim[], outcome: CheckOutcome): StoredClaim[] {
  return claims
    .filter((claim) => !outcome.withdrawn.has(claim.position))
    .map((claim) => {
      const landed = outcome.landed.get(claim.position);
      return claim.kind === 'batch' && landed ? { ...claim, landed } : claim;
    });
}

/**
 * Check the claims positioned after `from` up to `through` (settled: no write of theirs can still land),
 * withdraw those whose writes did not happen, say which records of partly written batches exist, and move
 * the dataset's checked position to `through`.
 */
export async function checkClaims(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  from: string,
  through: string,
  meter: CapacityMeter,
): Promise<CheckOutcome> {
  const claims = await bookkeeping.changes.after(datasetCode, from || undefined, meter, true);
  const due = claims.filter((claim) => compareCodePoints(claim.position, through) <= 0);
  const replaced = new Set(
    claims.flatMap((claim) => (claim.kind === 'update' && claim.previous ? [claim.previous] : [])),
  );
  const entries = new Map(
    (await bookkeeping.entriesAfter(datasetCode, from || undefined, meter)).map((entry) => [entry.key, entry]),
  );
  const withdrawn = new Set<string>();
  const landed = new Map<string, ReadonlySet<string>>();
  const byRecord: Extract<StoredClaim, { kind: 'update' | 'create' }>[] = [];
  for (const claim of due) {
    if (claim.kind === 'create' && claim.id === claim.position) {
      if (!entries.has(claim.id)) withdrawn.add(claim.position);
    } else if (claim.kind === 'batch') {
      if (claim.landed) continue;
      const entry = entries.get(claim.position);
      if (entry && !entry.open && entry.weight === claim.ids.length) continue;
      const group = { entryKey: claim.position, firstId: claim.ids[0] as string, lastId: claim.ids.at(-1) as string };
      const ids = new Set(claim.ids);
      const found = new Set(
        (await bookkeeping.bulkGroupRecordIds(datasetCode, group, meter)).filter((id) => ids.has(id)),
      );
      if (found.size === 0) withdrawn.add(claim.position);
      else if (found.size < claim.ids.length) {
        await bookkeeping.changes.markLanded(datasetCode, claim.position, [...found], meter);
        landed.set(claim.position, found);
      }
      if (entry?.open) {
        await bookkeeping.settleBulkGroup(datasetCode, { ...group, count: found.size, done: false }, meter);
      }
    } else if (claim.kind === 'update' && claim.direct) {
      // It moves no count key: whether it happened changes no total, and custom SQL reads its record again.
    } else if (!replaced.has(claim.position)) {
      byRecord.push(claim);
    }
  }
  if (byRecord.length > 0) {
    const positions = await bookkeeping.recordPositions(
      datasetCode,
      [...new Set(byRecord.map((claim) => claim.id))],
      meter,
    );
    const unsure: typeof byRecord = [];
    for (const claim of byRecord) {
      const record = positions.get(claim.id);
      const revision = claim.kind === 'update' ? (claim.revision ?? 1) : 1;
      if (!record || record.revision < revision) withdrawn.add(claim.position);
      else if (record.position !== claim.position) unsure.push(claim);
    }
    if (unsure.length > 0) {
      // The record moved on: a later write replaced this one if its claim, made before that write and so
      // before the read above, names it.
      const later = await bookkeeping.changes.after(datasetCode, from || undefined, meter, true);
      const named = new Set(
        later.flatMap((claim) => (claim.kind === 'update' && claim.previous ? [claim.previous] : [])),
      );
      for (const claim of unsure) if (!named.has(claim.position)) withdrawn.add(claim.position);
    }
  }
  if (withdrawn.size > 0) await bookkeeping.changes.withdrawAll(datasetCode, [...withdrawn], meter);
  await bookkeeping.values.advanceChecked(datasetCode, through, meter);
  return { withdrawn, landed };
}

/**
 * Start a slot's totals from the first position when every record of the dataset was written with a claim
 * that carries the slot: it holds none, or its oldest record's creating claim does (records are created in id
 * order, so any record older than change items would be older than it).
 */
async function startSlotTotals(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  now: number,
  meter: CapacityMeter,
): Promise<ValueHead | undefined> {
  const cacheKey = `${datasetCode}\n${slot}`;
  if ((notCovered.get(cacheKey) ?? 0) > now) return undefined;
  const oldest = await bookkeeping.oldestRecord(datasetCode, meter);
  const created = oldest && (await createdWithSlot(bookkeeping, datasetCode, slot, oldest, meter));
  if (oldest && (created === undefined || (await compactedSince(bookkeeping, datasetCode, created, now, meter)))) {
    notCovered.set(cacheKey, now + NOT_COVERED_RECHECK_MS);
    return undefined;
  }
  await bookkeeping.values.createHead(datasetCode, slot, '', meter);
  return (await bookkeeping.values.readHeadConsistently(datasetCode, slot, meter)) ?? { through: '' };
}

/**
 * Start a slot's totals at `through` with the counts of its keys there (`counts`, ascending, none zero): the
 * pages of a build an index job counted (indexing/build-totals.ts). Pages first, about half a page's size each,
 * then their list, then the head, which is what makes the totals exist: a start cut short is done again whole
 * (the same counts, from the job's saved segments), and a slot whose head exists is left alone.
 */
export async function startSlotTotalsAt(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  through: string,
  counts: readonly [string, number][],
  meter: CapacityMeter,
): Promise<void> {
  const values = bookkeeping.values;
  if (await values.readHeadConsistently(datasetCode, slot, meter)) return;
  const pages: ValuePage[] = [{ lowest: '', through, counts: [] }];
  let bytes = 0;
  for (const entry of counts) {
    const size = pageBytes([entry]);
    const page = pages.at(-1) as ValuePage;
    if (page.counts.length > 0 && bytes + size > PAGE_MAX_BYTES / 2) {
      pages.push({ lowest: entry[0], through, counts: [entry] });
      bytes = size;
    } else {
      page.counts.push(entry);
      bytes += size;
    }
  }
  // A page already there was written by a start cut short, with these same counts: so are the sums.
  await inGroups(pages, (page) => values.putPage(datasetCode, slot, page, undefined, meter));
  await values.updatePageList(
    datasetCode,
    slot,
    { added: pages.map((page) => page.lowest), sums: new Map(pages.map((page) => [page.lowest, pageSum(page)])) },
    COUNT_PAGE_LIMITS.listPart,
    meter,
  );
  await values.createHead(datasetCode, slot, through, meter);
}

/** The position of the record's creating claim when it carries the slot; undefined when it does not, or is gone. */
async function createdWithSlot(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  record: { id: string; bulkGroup?: string; position?: string },
  meter: CapacityMeter,
): Promise<string | undefined> {
  const candidates = [record.bulkGroup, record.id, record.position].filter((p): p is string => p !== undefined);
  for (const position of new Set(candidates)) {
    const claim = await bookkeeping.changes.read(datasetCode, position, meter);
    if (claim?.kind === 'create' && claim.id === record.id) {
      return claim.values[slot] !== undefined ? position : undefined;
    }
    if (claim?.kind === 'batch' && claim.ids.includes(record.id)) {
      return (await bookkeeping.changes.hasSlotValues(datasetCode, slot, position, meter)) ? position : undefined;
    }
  }
  return undefined;
}

/**
 * Whether claims at or after `position` may be gone, or about to go (change-compaction.ts): then a slot cannot start
 * from the first position, since the claims between would not all be read.
 */
async function compactedSince(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  position: string,
  now: number,
  meter: CapacityMeter,
): Promise<boolean> {
  // No pass deletes or proposes a claim younger than the lag (by its own clock, at most the skew ahead of this one).
  if (recordIdTime(position) > now - COMPACTION_LAG_MS + CLOCK_SKEW_MS) return false;
  const mark = await bookkeeping.compaction.readMark(datasetCode, meter);
  return [mark.through, mark.next ?? ''].some((gone) => compareCodePoints(gone, position) >= 0);
}

interface FoldTurn {
  now: number;
  meter: CapacityMeter;
  /** When to stop starting rounds (a `performance.now()` time). */
  until: number;
  limits: FoldRoundLimits;
  pageLimits: CountPageLimits;
}

/**
 * Fold the checked claims after the slot's head (at `head`) up to `through` (all of them, `claims`, ascending: one
 * window, at most a round's records) into its pages (see 3 and 4 above), round by round. Runs only for the holder
 * of the fold's lease; returns without folding when another folder holds it.
 */
async function foldSlot(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  head: string,
  through: string,
  claims: readonly StoredClaim[],
  turn: FoldTurn,
): Promise<{ folded: number; reached: boolean }> {
  const { now, meter, until, limits } = turn;
  const values = bookkeeping.values;
  let from = head;
  let next = 0;
  let folded = 0;
  while (compareCodePoints(from, through) < 0 && performance.now() < until) {
    if (!(await values.takeFold(datasetCode, slot, from, now, now + FOLD_LEASE_MS, meter))) {
      return { folded, reached: false };
    }
    // The round's candidates: a prefix of the claims left, of at most `limits.records` records' worth.
    let end = next;
    let taken = 0;
    while (end < claims.length) {
      const size = weight([claims[end] as StoredClaim]);
      if (end > next && taken + size > limits.records) break;
      taken += size;
      end += 1;
    }
    const candidates = claims.slice(next, end);
    const candidatesThrough = end < claims.length ? (candidates.at(-1) as StoredClaim).position : through;
    const count = await foldRound(bookkeeping, datasetCode, slot, from, candidatesThrough, candidates, turn);
    const roundThrough =
      count < candidates.length ? (candidates[count - 1] as StoredClaim).position : candidatesThrough;
    await values.finishFold(datasetCode, slot, from, roundThrough, meter);
    folded += weight(candidates.slice(0, count));
    next += count;
    from = roundThrough;
  }
  return { folded, reached: compareCodePoints(from, through) >= 0 };
}

/**
 * Add a prefix of the claims (all those after `from` up to `through`, ascending) to the slot's pages, splitting
 * pages that grow: the longest prefix that adds at most `limits.pageBytes` of new keys to any page (at least one
 * claim). The pages are read and written in key order, `limits.pages` at a time (see 3 above): each group cuts the
 * prefix where one of its pages would grow too much, and is written with the claims of the prefix as it stands
 * then, so a page of an earlier group may hold claims past the round's end (true at its own position). Returns how
 * many claims it folded; the round reaches the last of them, or `through` when it took all.
 */
async function foldRound(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  from: string,
  through: string,
  claims: readonly StoredClaim[],
  turn: Pick<FoldTurn, 'meter' | 'limits' | 'pageLimits'>,
): Promise<number> {
  const { meter, limits, pageLimits } = turn;
  const values = bookkeeping.values;
  const batchValues = await readBatchValues(bookkeeping, datasetCode, slot, from, claims, meter, true, through);
  const order = new Map(claims.map((claim, index) => [claim, index]));
  // Key order (a stable sort: a key's deltas stay in claim order), each with its claim's index in the round.
  const deltas: RoundDelta[] = claimDeltas(claims, slot, batchValues)
    .map((delta) => ({ ...delta, index: order.get(delta.claim) as number }))
    .sort((a, b) => compareCodePoints(a.key, b.key));
  // The part of the page list that covers the round's keys (a few list parts, not the whole list).
  let lowests =
    deltas.length === 0
      ? ['']
      : await values.readPageList(
          datasetCode,
          slot,
          (deltas[0] as RoundDelta).key,
          (deltas.at(-1) as RoundDelta).key,
          meter,
        );
  // Every page the round's claims touch, as it stands once the round's pages are written: its entry's sum.
  const sums = new Map<string, PageSum>();
  let count = claims.length;
  let next = 0;
  for (let attempt = 0; next < deltas.length; ) {
    // The next group: the pages of the next keys the prefix still holds, at most `limits.pages` of them.
    const group: { lowest: string; deltas: RoundDelta[] }[] = [];
    let end = next;
    for (; end < deltas.length; end++) {
      const delta = deltas[end] as RoundDelta;
      if (delta.index >= count) continue;
      const lowest = lowestFor(lowests, delta.key);
      const last = group.at(-1);
      if (last?.lowest === lowest) last.deltas.push(delta);
      else if (group.length < limits.pages) group.push({ lowest, deltas: [delta] });
      else break;
    }
    if (group.length === 0) break;
    const pages = await values.readPages(
      datasetCode,
      slot,
      group.map(({ lowest }) => lowest),
      meter,
    );
    const splitting = [...pages.values()].filter((page) => page.splitAt !== undefined);
    if (splitting.length > 0) {
      // An earlier fold stopped in a split: finish it, then read the group again over the pages it made.
      if (++attempt > 3) throw new Error(`count pages of ${datasetCode} ${slot} keep changing under a fold`);
      const splits = splitting.map((marked) => ({
        marked: { ...marked, splitAt: marked.splitAt ?? [] },
        counted: { lowest: marked.lowest, through: marked.through, counts: marked.counts },
      }));
      lowests = (await finishSplits(bookkeeping, datasetCode, slot, splits, lowests, pageLimits, meter)).lowests;
      continue;
    }
    attempt = 0;
    for (const { lowest, deltas: pageDeltas } of group) {
      count = Math.min(count, pageCut(pageDeltas, pages.get(lowest), limits.pageBytes));
    }
    const roundThrough = count < claims.length ? (claims[count - 1] as StoredClaim).position : through;
    const splits: Split[] = [];
    await inGroups(group, async ({ lowest, deltas: pageDeltas }) => {
      // A page whose claims all fell past the cut a later page made is left to the next round.
      if (!pageDeltas.some(({ index }) => index < count)) return;
      const stored = pages.get(lowest);
      const page = stored ?? { lowest, through: from, counts: [] };
      if (compareCodePoints(page.through, roundThrough) >= 0) {
        // A fold that stopped before moving the head wrote it already; its entry may not say so yet.
        sums.set(lowest, pageSum(page));
        return;
      }
      const added = new Map<string, number>();
      for (const { claim, key, delta, index } of pageDeltas) {
        if (index < count && compareCodePoints(claim.position, page.through) > 0) {
          added.set(key, (added.get(key) ?? 0) + delta);
        }
      }
      const written: ValuePage = { lowest, through: roundThrough, counts: mergeCounts(page.counts, added) };
      const splitAt = splitKeys(written.counts, pageLimits.page);
      // A page that grows past its size is never written whole: it is marked, as it stands, with its split's keys
      // (see 4 above), and its parts are written with the round's counts.
      const write = splitAt ? { ...page, splitAt } : written;
      if (!(await values.putPage(datasetCode, slot, write, stored?.through, meter))) {
        throw new Error(`count page of ${datasetCode} ${slot} changed under its fold`);
      }
      if (splitAt) splits.push({ marked: { ...page, splitAt }, counted: written });
      else sums.set(lowest, pageSum(written));
    });
    if (splits.length > 0) {
      const split = await finishSplits(bookkeeping, datasetCode, slot, splits, lowests, pageLimits, meter);
      for (const [lowest, sum] of split.sums) sums.set(lowest, sum);
      lowests = split.lowests;
    }
    next = end;
  }
  // Then the entries of every page touched, before the head moves past the claims (see 9 above).
  await values.updatePageList(datasetCode, slot, { sums }, pageLimits.listPart, meter);
  return count;
}

/** A claim's delta in a round, with the claim's index among the round's claims. */
interface RoundDelta extends Delta {
  index: number;
}

/**
 * How many of the round's claims one page takes: the first claim (after the first) whose keys not yet on the page
 * would bring the page's new keys past `pageBytesLimit`, or Infinity. A round takes the smallest over its pages: the
 * longest prefix whose new keys take at most `pageBytesLimit` on any page.
 */
function pageCut(pageDeltas: readonly RoundDelta[], page: ValuePage | undefined, pageBytesLimit: number): number {
  const onPage = new Set((page?.counts ?? []).map(([key]) => key));
  // Each key not yet on the page, at the first claim that brings it.
  const firstClaim = new Map<string, number>();
  for (const { key, index } of pageDeltas) {
    if (!onPage.has(key)) firstClaim.set(key, Math.min(firstClaim.get(key) ?? index, index));
  }
  const growth = new Map<number, number>();
  for (const [key, index] of firstClaim) growth.set(index, (growth.get(index) ?? 0) + pageBytes([[key, 1]]));
  let grown = 0;
  for (const [index, bytes] of [...growth].sort((a, b) => a[0] - b[0])) {
    if (index > 0 && grown + bytes > pageBytesLimit) return index;
    grown += bytes;
  }
  return Number.POSITIVE_INFINITY;
}

/** The keys to split counts at when they take more than `pageMaxBytes`, into parts of about half that. */
function splitKeys(counts: readonly [string, number][], pageMaxBytes: number): string[] | undefined {
  if (pageBytes(counts) <= pageMaxBytes || counts.length < 2) return undefined;
  const splitAt: string[] = [];
  let bytes = 0;
  for (const [i, entry] of counts.entries()) {
    const size = pageBytes([entry]);
    if (i > 0 && bytes + size > pageMaxBytes / 2) {
      splitAt.push(entry[0]);
      bytes = 0;
    }
    bytes += size;
  }
  return splitAt.length > 0 ? splitAt : undefined;
}

/**
 * A split: the page as marked (its stored counts and position, with `splitAt`), and the counts it is split into,
 * at a position at or after the mark's (the round's, or the mark's own when a fold finishes an earlier split).
 */
interface Split {
  marked: ValuePage & { splitAt: string[] };
  counted: ValuePage;
}

/**
 * Steps 2 to 5 of splits: each marked page's sum taken from its entry, each page's new pages from the highest
 * down, then their keys in the page list (once for them all: the parts they fall in), then each page without the
 * counts it gave away, conditionally on the mark's position. Returns the list as the round knows it (`lowests`
 * with the new pages), and the sums of the pages it wrote (a page another fold wrote first has none here).
 */
async function finishSplits(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  splits: readonly Split[],
  lowests: readonly string[],
  pageLimits: CountPageLimits,
  meter: CapacityMeter,
): Promise<{ lowests: string[]; sums: Map<string, PageSum> }> {
  const values = bookkeeping.values;
  const part = (page: ValuePage, from: string, to: string | undefined) =>
    page.counts.filter(
      ([key]) => compareCodePoints(key, from) >= 0 && (to === undefined || compareCodePoints(key, to) < 0),
    );
  // A marked page's sum holds for its keys up to the next entry: not once its new pages' entries appear.
  const unsummed = new Map(splits.map(({ marked }) => [marked.lowest, undefined]));
  await values.updatePageList(datasetCode, slot, { sums: unsummed }, pageLimits.listPart, meter);
  const sums = new Map<string, PageSum>();
  await inGroups(splits, async ({ marked, counted }) => {
    const keys = marked.splitAt;
    for (let i = keys.length - 1; i >= 0; i--) {
      const lowest = keys[i] as string;
      const page = { lowest, through: counted.through, counts: part(counted, lowest, keys[i + 1]) };
      // Already there when an earlier fold stopped after writing it: then it holds true counts of its keys.
      if (await values.putPage(datasetCode, slot, page, undefined, meter)) sums.set(lowest, pageSum(page));
    }
  });
  const added = splits.flatMap(({ marked }) => marked.splitAt);
  await values.addToPageList(datasetCode, slot, added, pageLimits.listPart, meter);
  const listed = [...new Set([...lowests, ...added])].sort(compareCodePoints);
  await inGroups(splits, async ({ marked, counted }) => {
    const page = {
      lowest: marked.lowest,
      through: counted.through,
      counts: part(counted, marked.lowest, marked.splitAt[0]),
    };
    if (await values.putPage(datasetCode, slot, page, marked.through, meter)) sums.set(page.lowest, pageSum(page));
  });
  return { lowests: listed, sums };
}

/** A page's sum for its entry: the total of its counts (all below the next page's lowest), true at its position. */
function pageSum(page: ValuePage): PageSum {
  return { sum: page.counts.reduce((sum, [, count]) => sum + count, 0), through: page.through };
}

/** How many pages a fold writes at the same time. */
const PAGE_WRITES_AT_ONCE = 16;

/** Run `write` for every item, `PAGE_WRITES_AT_ONCE` at a time. */
async function inGroups<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += PAGE_WRITES_AT_ONCE) {
    await Promise.all(items.slice(i, i + PAGE_WRITES_AT_ONCE).map(write));
  }
}

/** The lowest key of the listed page (ascending list, starting with '') whose keys include `key`. */
function lowestFor(lowests: readonly string[], key: string): string {
  let low = 0;
  let high = lowests.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (compareCodePoints(lowests[middle] as string, key) <= 0) low = middle;
    else high = middle - 1;
  }
  return lowests[low] ?? '';
}

/** Counts with deltas added, ascending, without zeros. */
function mergeCounts(counts: readonly [string, number][], added: ReadonlyMap<string, number>): [string, number][] {
  const merged = new Map(counts);
  for (const [key, delta] of added) merged.set(key, (merged.get(key) ?? 0) + delta);
  const out: [string, number][] = [];
  for (const [key, count] of merged) {
    if (count < 0) throw new Error(`a count went below zero for key ${JSON.stringify(key)}`);
    if (count > 0) out.push([key, count]);
  }
  return out.sort((a, b) => compareCodePoints(a[0], b[0]));
}
