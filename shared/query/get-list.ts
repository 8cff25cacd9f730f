/**
 * get-list: a page of a dataset's records with the exact total and the column definitions (docs/interface.md §5),
 * narrowed by the caller's grant (docs/interface.md §6): the grant's row filter is ANDed into the query itself, so
 * `totalCount` counts only the rows the caller may see, and fields outside `readFields` are neither returned
 * nor usable in filters, sorts or `select` (1001, exactly as a field the dataset does not have).
 *
 * `select` narrows both `tableData` and `tableColumns`, so the columns always describe the data; `id` is
 * always returned. A dataset's relations add `<relation>.<field>` to `select`, `where` and the sort, through the
 * caller's own grant on the related dataset (docs/interface.md §21: `related-scopes.ts`, `related-list.ts`,
 * `related-selection.ts`).
 */
import type { Dataset } from '../catalog/catalog';
import { InvalidParameterError } from '../contract/errors';
import { type DataOperationContext, dataContext, type Operation } from '../operation/operation';
import { readParamMap } from '../operation/param-map';
import { type FieldAccess, relatedName } from '../records/filter-parser';
import { allOf, filterFields, type ListQuery, MATCH_ALL } from '../records/list-query';
import { type ApiRecord, toApiRecord } from '../records/record-codec';
import { parseListParams } from './list-params';
import { type ListRunContext, runListQuery } from './list-run';
import { pageOfIds, type RelatedEngine } from './related-beyond-budget';
import { listWithRelations, usesRelations } from './related-list';
import { RelatedRecords } from './related-records';
import { relatedScopes } from './related-scopes';
import { nestedSelection } from './related-selection';

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

export interface GetListDependencies {
  /** Where a list naming related fields runs when the read budget cannot serve it (none: 2001). */
  relatedEngine?: RelatedEngine;
}

/** get-list, its engine beyond the read budget given (operations/get-list-operation.ts composes the service's). */
export function createGetListOperation(dependencies: GetListDependencies = {}): Operation {
  return {
    name: 'get-list',
    readsBesideAdmission: true,
    run: (context, body) => runGetList(dataContext(context), body, dependencies),
  };
}

async function runGetList(
  context: DataOperationContext,
  body: Record<string, unknown>,
  dependencies: GetListDependencies,
) {
  const { dataset, view, ports, telemetry, catalog, now, caller } = context;
  const params = readParamMap(body, true);
  const paging = readPaging(params, catalog.defaultPageSize);
  // The access step has worked out what the grant shows: these fields, and the rows of its scope.
  const readable = view.readable;
  // Related fields (docs/interface.md §21) through the caller's own grants on the related datasets.
  const related = dataset.relations.size > 0 ? relatedScopes(catalog, caller, dataset) : undefined;
  const access: FieldAccess = { ...(readable ? { readable } : {}), ...(related ? { related: related.access } : {}) };
  const parsed = parseListParams(params, dataset, access);
  const query: ListQuery = {
    filter: allOf(parsed.filter, view.rowScope ?? MATCH_ALL),
    sort: parsed.sort,
    offset: (paging.currentPage - 1) * paging.pageSize,
    limit: paging.pageSize,
  };
  const run: ListRunContext = {
    lists: ports.lists,
    bookkeeping: ports.bookkeeping,
    indexBuilds: ports.indexBuilds,
    meter: telemetry.capacity,
    requestId: context.requestId,
    now: now(),
  };
  const nameable = new Set([...filterFields(parsed.filter), ...parsed.sort.map((key) => key.field.name)]);
  const records = new RelatedRecords(ports.lists, telemetry.capacity);
  const engine = related && dependencies.relatedEngine?.(context);
  const beyondBudget =
    engine && related
      ? async () => {
          const selection = { dataset, filter: parsed.filter, sort: parsed.sort, scopes: related.scopes };
          const ids = await engine({ ...selection, offset: query.offset, limit: query.limit });
          return pageOfIds(ids, dataset, view.rowScope, ports.lists, telemetry.capacity);
        }
      : undefined;
  const result =
    related && usesRelations(query)
      ? await listWithRelations(query, {
          dataset,
          scopes: related.scopes,
          records,
          meter: telemetry.capacity,
          readBudget: ports.lists.listReadBudget,
          nameable,
          list: (listed, listQuery, named, budget) => runListQuery(run, listed, listQuery, named, budget),
          ...(beyondBudget ? { beyondBudget } : {}),
        })
      : await runListQuery(run, dataset, query, nameable);
  const local = parsed.select?.filter((name) => !relatedName(name));
  const selected = parsed.select ? new Set(['id', ...(local ?? [])]) : undefined;
  const narrow = (record: ApiRecord): ApiRecord =>
    selected ? Object.fromEntries(Object.entries(record).filter(([name]) => selected.has(name))) : record;
  const nested = related
    ? await nestedSelection(parsed.select ?? [], related.scopes, records, result.items)
    : undefined;
  return {
    paging: { pageSize: paging.pageSize, totalCount: result.totalCount, currentPage: paging.currentPage },
    tableData: result.items.map((item) => {
      const record = narrow(toApiRecord(dataset, item, readable));
      return nested ? { ...record, ...nested.of(item) } : record;
    }),
    tableColumns: [
      ...tableColumns(dataset, readable).filter((column) => !selected || selected.has(column.dataIndex)),
      ...(nested?.columns ?? []),
    ],
  };
}
