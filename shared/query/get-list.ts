/**
 * get-list: a page of a dataset's records with the exact total and the column definitions (docs/interface.md §5),
 * narrowed by the caller's grant (docs/interface.md §6): the grant's row filter is ANDed into the query itself, so
 * `totalCount` counts only the rows the caller may see, and fields outside `readFields` are neither returned
 * nor usable in filters, sorts or `select` (1001, exactly as a field the dataset does not have).
 *
 * `select` narrows both `tableData` and `tableColumns`, so the columns always describe the data; `id` is
 * always returned.
 */
import type { Dataset } from '../catalog/catalog';
import { InvalidParameterError } from '../contract/errors';
import { dataContext, type Operation } from '../operation/operation';
import { readParamMap } from '../operation/param-map';
import { allOf, filterFields, type ListQuery, MATCH_ALL } from '../records/list-query';
import { type ApiRecord, toApiRecord } from '../records/record-codec';
import { assertEvaluable } from '../storage/filter-expression';
import { countSlotKey, exactTotalsIndexes, indexLayout } from '../storage/index-attributes';
import { countSlotValues } from '../storage/value-counter';
import { buildingIndexAdvice } from './building-indexes';
import { executeListPlan, ListBudgetExceeded } from './list-executor';
import { parseListParams } from './list-params';
import { pageStartCache } from './page-start-cache';
import { planListQuery } from './query-planner';

export const MAX_PAGE_SIZE = 100;

export interface Paging {
  currentPage: number;
  pageSize: number;
}

function positiveInteger(params: Record<string, unknown>, name: string, fallback: number): number {
  const raw = params[name];
  if (raw === undefined || raw === null) return fallback;
  const value = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidParameterError(`${name} must be an integer of at least 1`);
  }
  return value;
}

/**
 * `currentPage` (default 1) and `pageSize` (default from the configuration; above 100 is served as 100). The
 * platform's demo sends `page`: it is read as `currentPage` when that is absent (docs/interface.md §21).
 */
export function readPaging(params: Record<string, unknown>, defaultPageSize: number): Paging {
  const named = params.currentPage === undefined || params.currentPage === null ? 'page' : 'currentPage';
  return {
    currentPage: positiveInteger(params, named, 1),
    pageSize: Math.min(positiveInteger(params, 'pageSize', defaultPageSize), MAX_PAGE_SIZE),
  };
}

/** `{title, dataIndex}` for id, each visible field in definition order, then the timestamps. */
export function tableColumns(dataset: Dataset, visible?: ReadonlySet<string>) {
  return [
    { title: 'id', dataIndex: 'id' },
    ...dataset.fields
      .filter((field) => !visible || visible.has(field.name))
      .map((field) => ({ title: field.title ?? field.name, dataIndex: field.name })),
    { title: 'gmt_create', dataIndex: 'gmt_create' },
    { title: 'gmt_modified', dataIndex: 'gmt_modified' },
  ];
}

export const getListOperation: Operation = {
  name: 'get-list',
  readsBesideAdmission: true,
  async run(context, body) {
    const { dataset, view, ports, telemetry, catalog, now } = dataContext(context);
    const params = readParamMap(body, true);
    const paging = readPaging(params, catalog.defaultPageSize);
    // The access step has worked out what the grant shows: these fields, and the rows of its scope.
    const readable = view.readable;
    const parsed = parseListParams(params, dataset, readable ? { readable } : {});
    const query: ListQuery = {
      filter: allOf(parsed.filter, view.rowScope ?? MATCH_ALL),
      sort: parsed.sort,
      offset: (paging.currentPage - 1) * paging.pageSize,
      limit: paging.pageSize,
    };
    // A filter the store could not evaluate is refused before anything is read (docs/interface.md §7).
    assertEvaluable(query.filter);
    const layout = indexLayout(dataset);
    // Only the complete indexes whose totals count every record answer from them; the others count their keys.
    const exactTotals = exactTotalsIndexes(dataset);
    const plan = planListQuery(query, layout);
    const at = now();
    const result = await executeListPlan(plan, query, {
      store: ports.lists,
      bookkeeping: ports.bookkeeping,
      datasetCode: dataset.datasetCode,
      meter: telemetry.capacity,
      now: at,
      readBudget: ports.lists.listReadBudget,
      pageStarts: pageStartCache,
      nameable: new Set([...filterFields(parsed.filter), ...parsed.sort.map((key) => key.field.name)]),
      countPath: async (path) => {
        const slot = layout.get(path.field);
        if (!slot || !exactTotals.has(slot)) return undefined;
        const counted = countSlotKey(slot);
        return countSlotValues(ports.bookkeeping, {
          datasetCode: dataset.datasetCode,
          slot: counted,
          requestId: context.requestId,
          otherSlots: [...exactTotals].map(countSlotKey).filter((other) => other !== counted),
          intervals: path.intervals,
          now: at,
          meter: telemetry.capacity,
        });
      },
    }).catch(async (error: unknown) => {
      // A field whose index is being built is named with how far the build has come (docs/interface.md §17).
      if (!(error instanceof ListBudgetExceeded)) throw error;
      throw await buildingIndexAdvice(error, dataset, ports.indexBuilds, telemetry.capacity);
    });
    const selected = parsed.select ? new Set(['id', ...parsed.select]) : undefined;
    const narrow = (record: ApiRecord): ApiRecord =>
      selected ? Object.fromEntries(Object.entries(record).filter(([name]) => selected.has(name))) : record;
    return {
      paging: { pageSize: paging.pageSize, totalCount: result.totalCount, currentPage: paging.currentPage },
      tableData: result.items.map((item) => narrow(toApiRecord(dataset, item, readable))),
      tableColumns: tableColumns(dataset, readable).filter((column) => !selected || selected.has(column.dataIndex)),
    };
  },
};
