/**
 * Whether a loaded copy catches up with its dataset's change feed or is loaded afresh, and what catching up reads
 * (dataset-cache.ts says why: a catch-up is never dearer than a load, and deciding costs a small share of one).
 */
import { compareCodePoints } from '../records/value-encoding';
import type { DatasetChange, DatasetChangeFeed, DatasetView } from './dataset-source';

/** What a copy kept by a change feed knows of the feed. */
export interface FeedState {
  /** When the feed was last read. */
  readAt: number;
  /** Changes already applied, among those a read from `readAt − rereadMs` returns. */
  applied: ReadonlySet<string>;
  /** Changes whose writes had not landed when last read: read again until they have, or have settled. */
  pending: readonly DatasetChange[];
  /** Read units the load took per row (what catching up is weighed against). */
  unitsPerRow: number;
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
export async function catchUpPlan(
  feed: DatasetChangeFeed,
  view: DatasetView,
  state: FeedState,
  /** The rows the copy holds. */
  held: number,
  /** Most rows a query may load: a catch-up past it is refused anyway. */
  rowBudget: number,
  now: () => number,
): Promise<CatchUpPlan> {
  const readAt = now();
  const { applied, pending, unitsPerRow } = state;
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
    const most = perCreate > unitsPerRow ? Math.floor((held * unitsPerRow) / (perCreate - unitsPerRow)) : rowBudget;
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
    state.readAt - feed.rereadMs,
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
    seenFrom: state.readAt - feed.rereadMs,
    seen: changes,
    toApply,
    created,
    reload,
    ...(count?.records === undefined ? {} : { counted: count.records }),
  };
}

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
export interface CatchUpPlan {
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
