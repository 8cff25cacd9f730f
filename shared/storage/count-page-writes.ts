/**
 * Writing count pages (value-counter.ts, points 4 and 9): where a round cuts a page, how a page splits, the splits a
 * fold finishes before adding to a page, and page sums.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { compareCodePoints } from '../records/value-encoding';
import type { Delta } from './claim-deltas';
import type { DatasetBookkeeping } from './dataset-bookkeeping';
import type { CountPageLimits } from './fold-limits';
import { type PageSum, pageBytes, type ValuePage } from './value-count-store';

/**
 * How many of the round's claims one page takes: the first claim (after the first) whose keys not yet on the page
 * would bring the page's new keys past `pageBytesLimit`, or Infinity. A round takes the smallest over its pages: the
 * longest prefix whose new keys take at most `pageBytesLimit` on any page.
 */
/** A claim's delta in a round, with the claim's index among the round's claims. */
export interface RoundDelta extends Delta {
  index: number;
}

export function pageCut(
  pageDeltas: readonly RoundDelta[],
  page: ValuePage | undefined,
  pageBytesLimit: number,
): number {
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
export function splitKeys(counts: readonly [string, number][], pageMaxBytes: number): string[] | undefined {
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
export interface Split {
  marked: ValuePage & { splitAt: string[] };
  counted: ValuePage;
}

/**
 * Steps 2 to 5 of splits: each marked page's sum taken from its entry, each page's new pages from the highest
 * down, then their keys in the page list (once for them all: the parts they fall in), then each page without the
 * counts it gave away, conditionally on the mark's position. Returns the list as the round knows it (`lowests`
 * with the new pages), and the sums of the pages it wrote (a page another fold wrote first has none here).
 */
export async function finishSplits(
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
export function pageSum(page: ValuePage): PageSum {
  return { sum: page.counts.reduce((sum, [, count]) => sum + count, 0), through: page.through };
}

/** How many pages a fold writes at the same time. */
const PAGE_WRITES_AT_ONCE = 16;

/** Run `write` for every item, `PAGE_WRITES_AT_ONCE` at a time. */
export async function inGroups<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += PAGE_WRITES_AT_ONCE) {
    await Promise.all(items.slice(i, i + PAGE_WRITES_AT_ONCE).map(write));
  }
}

/** The lowest key of the listed page (ascending list, starting with '') whose keys include `key`. */
export function lowestFor(lowests: readonly string[], key: string): string {
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
export function mergeCounts(
  counts: readonly [string, number][],
  added: ReadonlyMap<string, number>,
): [string, number][] {
  const merged = new Map(counts);
  for (const [key, delta] of added) merged.set(key, (merged.get(key) ?? 0) + delta);
  const out: [string, number][] = [];
  for (const [key, count] of merged) {
    if (count < 0) throw new Error(`a count went below zero for key ${JSON.stringify(key)}`);
    if (count > 0) out.push([key, count]);
  }
  return out.sort((a, b) => compareCodePoints(a[0], b[0]));
}
