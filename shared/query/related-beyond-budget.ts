/**
 * A get-list naming related fields that the read budget cannot serve (docs/interface.md §21), where the service
 * runs a MySQL engine (§20): the selection (conditions, sort, page) goes to the engine, which answers the page's
 * ids in order and the exact total (operations/related-on-mirror.ts); the page's records are then read here by
 * batch reads, as a page's related records are, and answered as every page is.
 *
 * The engine sees the mirror as of the request's start; a record of the page read after it is the newer one. A
 * record that has since left the caller's row filter is not shown (its place in the page stays empty rather than
 * showing a row the caller may no longer read).
 */
import type { Dataset } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { DataOperationContext } from '../operation/operation';
import { matchesFilter } from '../records/filter-matcher';
import type { Filter, SortKey } from '../records/list-query';
import type { RecordItem } from '../records/record-codec';
import type { ListReader } from '../storage/list-reader';
import type { ListResult } from './list-executor';
import type { RelatedScope } from './related-records';

/** What the engine runs: the listed dataset joined to its related datasets, as the caller may read them. */
export interface RelatedSelection {
  dataset: Dataset;
  /** The caller's conditions, without its row filters: the engine applies those from the grants. */
  filter: Filter;
  /** The caller's sort (the id tie-break is the engine's to add, as every list adds it). */
  sort: SortKey[];
  offset: number;
  limit: number;
  /** The relations the caller may read, by name. */
  scopes: ReadonlyMap<string, RelatedScope>;
}

/** The page's ids in the page's order, and how many records match in all. */
export interface SelectedIds {
  ids: string[];
  totalCount: number;
}

export type RelatedSelectionRunner = (selection: RelatedSelection) => Promise<SelectedIds>;

/** The engine a request's selection runs on, when the service has one. */
export type RelatedEngine = (context: DataOperationContext) => RelatedSelectionRunner | undefined;

/** The page's records, read by batch reads, in the engine's order, inside the caller's row filter. */
export async function pageOfIds(
  selected: SelectedIds,
  dataset: Dataset,
  rowScope: Filter | undefined,
  reader: ListReader,
  meter: CapacityMeter,
): Promise<ListResult> {
  const found = selected.ids.length > 0 ? await reader.batchGet(dataset.datasetCode, selected.ids, meter) : new Map();
  const items = selected.ids
    .map((id) => found.get(id) as RecordItem | undefined)
    .filter((item): item is RecordItem => item !== undefined && (!rowScope || matchesFilter(item, rowScope)));
  return { items, totalCount: selected.totalCount };
}
