/**
 * The mirror's backfill (docs/interface.md §20): the records a dataset already holds when its mirror table is
 * first made, read page by page in id order as an index build reads them (storage/index-build-store.ts) and
 * paced as one is (indexing/write-throttle.ts), so the API's own requests keep their throughput. Each page is
 * upserted guarded by revision, then its position saved: a backfill stopped anywhere resumes from its last saved
 * page, and a record it writes while the change log is applied too ends at whichever revision is newer.
 */
import { WriteThrottle } from '../indexing/write-throttle';
import { CapacityMeter } from '../observability/capacity-meter';
import { ID_ATTRIBUTE, type RecordItem } from '../records/record-codec';
import type { IdRange } from '../storage/index-build-store';
import { revisionOf } from '../storage/record-revisions';
import type { MirrorRow } from './mirror-schema';
import type { MirrorDataset, MirrorTables } from './mirror-tables';

export interface RecordPages {
  readRecords(
    datasetCode: string,
    range: IdRange,
    startAfter: Record<string, unknown> | undefined,
    limit: number,
    meter: CapacityMeter,
    consistent?: boolean,
  ): Promise<{ items: RecordItem[]; next?: Record<string, unknown> }>;
}

export interface MirrorBackfillOptions {
  tables: MirrorTables;
  records: RecordPages;
  /** Records read and written a second at most (0: unpaced). */
  recordsPerSecond: number;
  pageSize?: number;
}

/** A stored record item as a mirror row. */
export function mirrorRowOf(item: RecordItem): MirrorRow | undefined {
  const id = item[ID_ATTRIBUTE];
  if (typeof id !== 'string') return undefined;
  return { id, revision: revisionOf(item), item };
}

/** Backfills one dataset from where it stands; resolves when done, or when `stopped()` says to stop. */
export async function backfillDataset(
  options: MirrorBackfillOptions,
  dataset: MirrorDataset,
  stopped: () => boolean,
): Promise<boolean> {
  const pageSize = options.pageSize ?? 500;
  const state = await options.tables.state(dataset.datasetCode);
  if (state?.backfillDone) return true;
  let cursor = state?.backfillCursor;
  let rows = state?.backfillRows ?? 0;
  // One pause a page: the pace of `recordsPerSecond`, a page at a time.
  const throttle = new WriteThrottle({ writesPerSecond: options.recordsPerSecond / pageSize });
  while (!stopped()) {
    await throttle.take();
    // Consistent: a write acknowledged before the page was read is in it.
    const page = await options.records.readRecords(
      dataset.datasetCode,
      {},
      cursor,
      pageSize,
      new CapacityMeter(),
      true,
    );
    const mirrorRows = page.items.flatMap((item) => mirrorRowOf(item) ?? []);
    await options.tables.apply(dataset, mirrorRows);
    rows += mirrorRows.length;
    cursor = page.next;
    await options.tables.saveBackfill(dataset.datasetCode, { cursor, done: cursor === undefined, rows });
    if (cursor === undefined) return true;
  }
  return false;
}
