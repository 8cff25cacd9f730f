/** get-list: a page of a dataset's records with the exact total and the column definitions (contract §5). */
import type { Dataset } from '../catalog/catalog';
import { InvalidParameterError } from '../http/errors';
import { toApiRecord } from '../records/record-codec';
import { dataContext, type Operation } from './operation';
import { readParamMap } from './param-map';

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

/** `currentPage` (default 1) and `pageSize` (default from the configuration; above 100 is served as 100). */
export function readPaging(params: Record<string, unknown>, defaultPageSize: number): Paging {
  return {
    currentPage: positiveInteger(params, 'currentPage', 1),
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

const PAGING_KEYS = new Set(['currentPage', 'pageSize']);

export const getListOperation: Operation = {
  name: 'get-list',
  async run(context, body) {
    const { dataset, ports, capacity, catalog } = dataContext(context);
    const params = readParamMap(body, true);
    const paging = readPaging(params, catalog.defaultPageSize);
    for (const key of Object.keys(params)) {
      if (!PAGING_KEYS.has(key)) throw new InvalidParameterError(`unsupported parameter '${key}'`);
    }
    const [totalCount, items] = await Promise.all([
      ports.records.count(dataset.datasetCode, capacity),
      ports.records.listNewestFirst(
        dataset.datasetCode,
        { offset: (paging.currentPage - 1) * paging.pageSize, limit: paging.pageSize },
        capacity,
      ),
    ]);
    return {
      paging: { pageSize: paging.pageSize, totalCount, currentPage: paging.currentPage },
      tableData: items.map((item) => toApiRecord(dataset, item)),
      tableColumns: tableColumns(dataset),
    };
  },
};
