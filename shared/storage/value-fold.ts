/**
 * Folds (value-counter.ts, points 4 to 9): checked claims moved into a slot's count pages under the slot's lease, a
 * window of claims at a time and a round per window, the page list's entries and sums written before the head moves.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { compareCodePoints } from '../records/value-encoding';
import type { StoredClaim } from './change-items';
import { checkClaims } from './claim-check';
import { claimDeltas, readBatchValues, weight } from './claim-deltas';
import {
  finishSplits,
  inGroups,
  lowestFor,
  mergeCounts,
  pageCut,
  pageSum,
  type RoundDelta,
  type Split,
  splitKeys,
} from './count-page-writes';
import type { DatasetBookkeeping } from './dataset-bookkeeping';
import {
  COUNT_PAGE_LIMITS,
  type CountPageLimits,
  FOLD_LEASE_MS,
  FOLD_ROUND_LIMITS,
  type FoldRoundLimits,
} from './fold-limits';
import { lastIdAt, SETTLE_MS } from './record-counter';
import { startSlotTotals } from './slot-start';
import type { PageSum, ValueHead, ValuePage } from './value-count-store';

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
