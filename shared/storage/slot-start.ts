/**
 * Where a slot's totals start (value-counter.ts, points 5 to 8): from the first position when every record was
 * written with a claim carrying the slot, or at an index build's position with the counts its job took.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { recordIdTime } from '../records/record-ids';
import { compareCodePoints } from '../records/value-encoding';
import { COMPACTION_LAG_MS } from './change-compaction';
import { CLOCK_SKEW_MS } from './change-items';
import { inGroups, pageSum } from './count-page-writes';
import type { DatasetBookkeeping } from './dataset-bookkeeping';
import { COUNT_PAGE_LIMITS, PAGE_MAX_BYTES } from './fold-limits';
import { pageBytes, type ValueHead, type ValuePage } from './value-count-store';

/** How long a dataset found to hold records written before change items is not checked again. */
const NOT_COVERED_RECHECK_MS = 5 * 60_000;

/** Datasets (and slots) found to hold records written before change items, until when not to look again. */
const notCovered = new Map<string, number>();

/**
 * Start a slot's totals from the first position when every record of the dataset was written with a claim
 * that carries the slot: it holds none, or its oldest record's creating claim does (records are created in id
 * order, so any record older than change items would be older than it).
 */
export async function startSlotTotals(
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
