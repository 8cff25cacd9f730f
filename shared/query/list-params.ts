/**
 * Everything get-list takes besides paging (docs/interface.md §5), into a filter, a sort and a selection: the
 * filters in the language of records/filter-parser.ts (`where` first: its size check is the cheapest refusal),
 * then `ytSortList` (or `orderBy`) and `select`, each field checked against the dataset as the caller's grant shows it.
 */
import type { Dataset } from '../catalog/catalog';
import { InvalidParameterError } from '../contract/errors';
import {
  type FieldAccess,
  FieldResolver,
  isPlainObject,
  parseSuffixFilters,
  parseWhere,
} from '../records/filter-parser';
import { allOf, type Filter, MATCH_ALL, type SortKey } from '../records/list-query';

export interface ParsedListParams {
  filter: Filter;
  sort: SortKey[];
  /** Field names to return, in the caller's order (id is always returned); undefined: every readable field. */
  select?: string[];
}

/**
 * `ytSortList`: an array of single-key objects `{field: "asc" | "desc"}`; earlier entries win. The platform SDK's
 * `orderBy` (docs/interface.md §21) is the same list under another name, with the direction in any letter case.
 */
export function parseSortList(
  value: unknown,
  dataset: Dataset,
  access: FieldAccess = {},
  name: 'ytSortList' | 'orderBy' = 'ytSortList',
): SortKey[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidParameterError(`${name}: expects an array of {"field": "asc" | "desc"}`);
  const resolver = new FieldResolver(dataset, access);
  const keys: SortKey[] = [];
  value.forEach((entry, i) => {
    const at = `${name}[${i}]`;
    const pairs = isPlainObject(entry) ? Object.entries(entry) : [];
    if (pairs.length !== 1) throw new InvalidParameterError(`${at}: expects one {"field": "asc" | "desc"}`);
    const [fieldName, sent] = pairs[0] as [string, unknown];
    const field = resolver.resolve(fieldName, `${at}.${fieldName}`);
    const direction = name === 'orderBy' && typeof sent === 'string' ? sent.toLowerCase() : sent;
    if (direction !== 'asc' && direction !== 'desc') {
      throw new InvalidParameterError(`${at}.${fieldName}: direction must be "asc" or "desc"`);
    }
    // A repeated field can never change the order after its first entry.
    if (!keys.some((key) => key.field.name === fieldName)) keys.push({ field, direction });
  });
  return keys;
}

/** The sort of `ytSortList` or `orderBy`; both at once is 1001 naming the two. */
export function parseListSort(params: Record<string, unknown>, dataset: Dataset, access: FieldAccess = {}): SortKey[] {
  const sent = (value: unknown) => value !== undefined && value !== null;
  if (sent(params.ytSortList) && sent(params.orderBy)) {
    throw new InvalidParameterError('ytSortList and orderBy: send one of them, not both (they are the same sort)');
  }
  return sent(params.orderBy)
    ? parseSortList(params.orderBy, dataset, access, 'orderBy')
    : parseSortList(params.ytSortList, dataset, access);
}

/** `select`: a non-empty array of field names (dataset or system fields). */
export function parseSelect(value: unknown, dataset: Dataset, access: FieldAccess = {}): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidParameterError('select: expects a non-empty array of field names');
  }
  const resolver = new FieldResolver(dataset, access);
  return value.map((name, i) => {
    if (typeof name !== 'string') throw new InvalidParameterError(`select[${i}]: expects a field name`);
    return resolver.resolve(name, `select[${i}]`).name;
  });
}

/** Everything get-list takes besides paging. */
export function parseListParams(
  params: Record<string, unknown>,
  dataset: Dataset,
  access: FieldAccess = {},
): ParsedListParams {
  // `where` first: its size check is the cheapest refusal, and must not wait for the rest to be parsed.
  const where =
    params.where === undefined || params.where === null ? MATCH_ALL : parseWhere(params.where, dataset, access);
  const suffixFilter = parseSuffixFilters(params, dataset, access);
  const parsed: ParsedListParams = {
    filter: allOf(suffixFilter, where),
    sort: parseListSort(params, dataset, access),
  };
  const select = parseSelect(params.select, dataset, access);
  if (select) parsed.select = select;
  return parsed;
}
