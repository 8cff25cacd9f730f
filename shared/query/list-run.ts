/**
 * One list query of one dataset, planned and executed with everything get-list gives it: the read budget, the
 * page-start cache, per-value totals for the indexes that keep them, and a 2001 that says how far an index being
 * built has come. get-list runs its own dataset's list through it, and a related dataset's when a condition on a
 * related field is resolved to the ids it matches (`related-list.ts`).
 */
import type { Dataset } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { ListQuery } from '../records/list-query';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { assertEvaluable } from '../storage/filter-expression';
import { countSlotKey, exactTotalsIndexes, indexLayout } from '../storage/index-attributes';
import type { IndexBuildStore } from '../storage/index-build-store';
import type { ListReader } from '../storage/list-reader';
import { countSlotValues } from '../storage/value-counter';
import { buildingIndexAdvice } from './building-indexes';
import { executeListPlan, ListBudgetExceeded, type ListResult } from './list-executor';
import { pageStartCache } from './page-start-cache';
import { planListQuery } from './query-planner';

/** What a list needs of the request: its store ports, its meter, its clock and its id. */
export interface ListRunContext {
  lists: ListReader;
  bookkeeping: DatasetBookkeeping;
  indexBuilds: IndexBuildStore;
  meter: CapacityMeter;
  requestId: string;
  now: number;
}

/**
 * Run `query` on `dataset`. `nameable`: the fields a 2001 may name (the caller's own conditions and sort, never
 * a grant's row filter). `readBudget`: the read units it may spend (default: the store's list read budget).
 */
export async function runListQuery(
  run: ListRunContext,
  dataset: Dataset,
  query: ListQuery,
  nameable: ReadonlySet<string>,
  readBudget = run.lists.listReadBudget,
): Promise<ListResult> {
  // A filter the store could not evaluate is refused before anything is read (docs/interface.md §7).
  assertEvaluable(query.filter);
  const layout = indexLayout(dataset);
  // Only the complete indexes whose totals count every record answer from them; the others count their keys.
  const exactTotals = exactTotalsIndexes(dataset);
  const plan = planListQuery(query, layout);
  return executeListPlan(plan, query, {
    store: run.lists,
    bookkeeping: run.bookkeeping,
    datasetCode: dataset.datasetCode,
    meter: run.meter,
    now: run.now,
    readBudget,
    pageStarts: pageStartCache,
    nameable,
    countPath: async (path) => {
      const slot = layout.get(path.field);
      if (!slot || !exactTotals.has(slot)) return undefined;
      const counted = countSlotKey(slot);
      return countSlotValues(run.bookkeeping, {
        datasetCode: dataset.datasetCode,
        slot: counted,
        requestId: run.requestId,
        otherSlots: [...exactTotals].map(countSlotKey).filter((other) => other !== counted),
        intervals: path.intervals,
        now: run.now,
        meter: run.meter,
      });
    },
  }).catch(async (error: unknown) => {
    // A field whose index is being built is named with how far the build has come (docs/interface.md §17).
    if (!(error instanceof ListBudgetExceeded)) throw error;
    throw await buildingIndexAdvice(error, dataset, run.indexBuilds, run.meter);
  });
}
