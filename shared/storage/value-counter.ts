/**
 * Per-value totals: the exact number of records whose value in one index slot lies in given key intervals
 * (an equality, an `_in`, a range, null or not null), at a cost that does not grow with the number of matches,
 * without transactions and without a counter item that every write touches (a value a quarter of all writes
 * carry must not become a hot item).
 *
 * Ingredients:
 * - Change items (change-items.ts): every write claims one before it writes its records, at a position taken
 *   from the clock just before (a ULID), naming the records and, per index slot, their count keys (a create's
 *   values, an update's values before and after in the slots it changes, a batch's values record by record, in an
 *   item per slot, and in the claim itself each key's number of records for the slots where they take few keys).
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
 * before and after, +1 per written record of a batch (a batch all of whose records count, none named missing by
 * `m`, adds the counts its claim carries for the slot when it carries them: they are its records' keys tallied by
 * its writer, so the same sum without reading its values item, claim-deltas.ts); for the pages wholly inside an interval, their entries' sums
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
 *    `LIST_FOLD_GRACE_MS` past their check, when no fold beside the writes began within that time, `foldSeen`):
 *    under a lease in the head (one folder at a time, for less than any invocation lasts plus a margin), in rounds
 *    of a prefix of them. It reads the claims after the oldest head up to the checked position a window at a time, from the oldest head
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
import { compareCodePoints, countKeyPlace, type KeyInterval } from '../records/value-encoding';
import { applyCheck, checkClaims } from './claim-check';
import { claimDeltas, readBatchValues, weight } from './claim-deltas';
import type { DatasetBookkeeping } from './dataset-bookkeeping';
import { CHECK_SLACK_MS, FOLD_MIN_WEIGHT, FOLD_TIME_MS, LIST_FOLD_GRACE_MS } from './fold-limits';
import { lastIdAt, SETTLE_MS } from './record-counter';
import { startSlotTotals } from './slot-start';
import type { PageSum, ValueCountStore, ValuePage } from './value-count-store';
import { foldDatasetTotals } from './value-fold';

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
  // what it has left well past its time while no fold beside the writes has begun within that time (its queue is
  // not running), so that lists never pay for a load, even one the folds are behind.
  const overdue = lastIdAt(now - SETTLE_MS - CHECK_SLACK_MS - LIST_FOLD_GRACE_MS);
  const waiting = claims.filter(
    (claim) => compareCodePoints(claim.position, head.through) > 0 && compareCodePoints(claim.position, overdue) <= 0,
  );
  const foldsRunning = read.foldSeen !== undefined && now - read.foldSeen < LIST_FOLD_GRACE_MS;
  if (!foldsRunning && weight(waiting) >= FOLD_MIN_WEIGHT && (head.foldUntil ?? 0) < now) {
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
