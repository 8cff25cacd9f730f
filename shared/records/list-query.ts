/**
 * The parsed form of a get-list request: a filter tree over stored values, a sort list and a page. The parser
 * (`filter-parser.ts`) builds it from the wire syntax; the planner, the in-memory matcher and the DynamoDB
 * expression compiler all read it, so a filter means the same thing wherever it is evaluated.
 *
 * Values in conditions are already in stored form (numbers as numbers, json as text, ids as text), because
 * they went through the same coercion as writes.
 */
import type { FieldType } from '../catalog/schema';
import type { StoredValue } from './field-values';
import { ID_ATTRIBUTE, type RecordItem } from './record-codec';
import type { Bound } from './value-encoding';

/** A filterable or sortable field: a dataset field or one of the system fields. */
export interface FieldRef {
  name: string;
  /** `id` for the record id (compared as text); system timestamps are `datetime`. */
  type: FieldType | 'id';
}

export type Condition =
  | { op: 'eq'; field: FieldRef; value: StoredValue }
  /** Differs from the value; a null field differs from every value. */
  | { op: 'ne'; field: FieldRef; value: StoredValue }
  | { op: 'range'; field: FieldRef; lower?: Bound; upper?: Bound }
  | { op: 'in'; field: FieldRef; values: StoredValue[] }
  | { op: 'null'; field: FieldRef; isNull: boolean }
  /** Case-insensitive text match; `value` is lower-cased already. */
  | { op: 'text'; field: FieldRef; match: 'contains' | 'prefix' | 'suffix'; value: string };

export type Filter = Condition | { op: 'and'; items: Filter[] } | { op: 'or'; items: Filter[] };

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  field: FieldRef;
  direction: SortDirection;
}

export interface ListQuery {
  filter: Filter;
  /** The caller's sort, without the id tie-break (see `effectiveSort`). */
  sort: SortKey[];
  offset: number;
  limit: number;
}

export const ID_FIELD: FieldRef = { name: 'id', type: 'id' };
export const GMT_CREATE_FIELD: FieldRef = { name: 'gmt_create', type: 'datetime' };
export const GMT_MODIFIED_FIELD: FieldRef = { name: 'gmt_modified', type: 'datetime' };

/** The filter that matches everything. */
export const MATCH_ALL: Filter = { op: 'and', items: [] };

/** AND of filters, flattening nested ANDs so the planner sees every top-level condition. */
export function allOf(...filters: Filter[]): Filter {
  const items: Filter[] = [];
  for (const filter of filters) {
    if (filter.op === 'and') items.push(...filter.items);
    else items.push(filter);
  }
  return items.length === 1 ? (items[0] as Filter) : { op: 'and', items };
}

/** The top-level conditions that every match must satisfy. */
export function conjuncts(filter: Filter): Filter[] {
  return filter.op === 'and' ? filter.items : [filter];
}

/**
 * The complete order of a list: the caller's keys (default newest first), then the id, in the direction of
 * the last key, so that ties never make paging show a record twice or skip one. Taking the last key's
 * direction means a single-key sort is exactly the order of a generic index read in one direction.
 */
export function effectiveSort(sort: SortKey[]): SortKey[] {
  const keys = sort.length > 0 ? sort : [{ field: GMT_CREATE_FIELD, direction: 'desc' as const }];
  const last = keys[keys.length - 1] as SortKey;
  const withoutId = keys.filter((key) => key.field.name !== 'id');
  const idKey = keys.find((key) => key.field.name === 'id');
  // A key after the id can never matter; keep the caller's keys up to and including the id.
  if (idKey) return keys.slice(0, keys.indexOf(idKey) + 1);
  return [...withoutId, { field: ID_FIELD, direction: last.direction }];
}

/** A record's stored value of a field (the id lives in the sort key attribute). */
export function storedValueOf(item: RecordItem, field: FieldRef | string): StoredValue | null {
  const name = typeof field === 'string' ? field : field.name;
  const value = name === 'id' ? (item[ID_ATTRIBUTE] ?? item.id) : item[name];
  if (value === undefined || value === null) return null;
  return value as StoredValue;
}

/** Every field a filter refers to, for permission checks and 2001 messages. */
export function filterFields(filter: Filter): string[] {
  if (filter.op === 'and' || filter.op === 'or') return [...new Set(filter.items.flatMap(filterFields))];
  return [filter.field.name];
}
