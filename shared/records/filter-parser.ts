/**
 * The filter language of get-list (docs/interface.md §5) into a parsed `Filter`: the suffix filters and the
 * structured `where`, checked against the dataset and the caller's readable fields; a grant's row filter is read
 * the same way. The rest of get-list's parameters (`select`, `ytSortList`) are query/list-params.ts's.
 *
 * - An unknown field, a suffix or operator the field's type does not support, or a malformed value is 1001
 *   naming the key. A field the grant hides (readFields) is, to this caller, a field the dataset does not have
 *   (docs/interface.md §6): it gets exactly the message an unknown field gets, so hidden names cannot be listed. An
 *   unknown name near one the caller may use gets "did you mean" that one, chosen among the readable fields only.
 * - `where` holds at most `MAX_WHERE_CONDITIONS` conditions (docs/interface.md §7), counted before anything else of the
 *   parameters is read and stopping at the first one past the limit, so an oversized filter costs less to refuse
 *   than a valid one costs to parse.
 * - Values are coerced exactly as writes coerce them (`toStoredValue`), so `"42"` filters an integer field
 *   as 42 and an enum filter must name one of its options.
 * - Text operators (`_like`, `$contain`, `$startWith`, `$endWith`) are case-insensitive.
 * - In `where`, `{"f": v}` is `$eq`; `$eq: null` means null and `$ne: null` means not null. `$ne` matches
 *   records where the field is null too (a null differs from every value).
 * - `where`, `select`, `ytSortList`, `orderBy`, `currentPage`, `page` and `pageSize` are reserved names: a dataset
 *   field with one of those names cannot be filtered by the suffix syntax (it can through `where`).
 * - `$gteq` and `$lteq` (the platform SDK's spelling, docs/interface.md §21) are `$gte` and `$lte`.
 */
import type { Dataset } from '../catalog/catalog';
import { filterKeyField } from '../catalog/schema';
import { didYouMean } from '../contract/did-you-mean';
import { AccessDeniedError, InvalidParameterError } from '../contract/errors';
import { type StoredValue, toStoredValue } from './field-values';
import {
  allOf,
  type Condition,
  type FieldRef,
  type Filter,
  GMT_CREATE_FIELD,
  GMT_MODIFIED_FIELD,
  ID_FIELD,
  MATCH_ALL,
} from './list-query';
import { normalizeRecordId } from './record-ids';

/** `_in` and `$in` take at most this many values: each is one index query. */
export const MAX_IN_VALUES = 100;
/** `where` nests at most this deep (a bound on the work a request can ask for). */
export const MAX_WHERE_DEPTH = 8;
/** `where` holds at most this many conditions in all (docs/interface.md §7). */
export const MAX_WHERE_CONDITIONS = 100;

export const RESERVED_LIST_PARAMS = new Set([
  'currentPage',
  'pageSize',
  'ytSortList',
  'where',
  'select',
  // The platform SDK's names (docs/interface.md §21): a sort and the page number.
  'orderBy',
  'page',
]);

type Operator = 'eq' | 'like' | 'range' | 'in' | 'is_null';

/** Which operators each type supports (docs/interface.md §5's table; the system fields behave as `id` and `datetime`). */
const SUPPORT: Record<FieldRef['type'], ReadonlySet<Operator>> = {
  string: new Set(['eq', 'like', 'range', 'in', 'is_null']),
  text: new Set(['eq', 'like', 'in', 'is_null']),
  enum: new Set(['eq', 'like', 'in', 'is_null']),
  integer: new Set(['eq', 'range', 'in', 'is_null']),
  number: new Set(['eq', 'range', 'in', 'is_null']),
  date: new Set(['eq', 'range', 'in', 'is_null']),
  datetime: new Set(['eq', 'range', 'in', 'is_null']),
  boolean: new Set(['eq', 'is_null']),
  json: new Set(['is_null']),
  id: new Set(['eq', 'range', 'in', 'is_null']),
};

/** The suffix-filter keys of each operator (`f`, `f_like`, `f_start`, ...). */
const SUFFIXES: Record<Operator, readonly string[]> = {
  eq: [''],
  like: ['_like'],
  range: ['_start', '_end'],
  in: ['_in'],
  is_null: ['_is_null'],
};

/** A related dataset (docs/interface.md §21) as the caller sees it through its own grant on that dataset. */
export interface RelatedAccess {
  dataset: Dataset;
  /** The fields its grant shows (undefined: all of them). */
  readable?: ReadonlySet<string>;
  /** Set when the caller may not read the related dataset: the message of the 1006 a use of it answers. */
  denied?: string;
}

/** Who reads: the fields the grant makes visible (undefined: all of them). */
export interface FieldAccess {
  readable?: ReadonlySet<string>;
  /**
   * The dataset's relations, by name, where related fields (`<relation>.<field>`) are accepted (get-list's
   * `select`, `where` and sort); elsewhere a dotted name is an unknown field.
   */
  related?: ReadonlyMap<string, RelatedAccess>;
}

/** The two parts of a related field's name, `customer.name` → [`customer`, `name`]; undefined for a plain name. */
export function relatedName(name: string): [relation: string, field: string] | undefined {
  const dot = name.indexOf('.');
  return dot < 0 ? undefined : [name.slice(0, dot), name.slice(dot + 1)];
}

/** Resolves field names against a dataset as one caller sees it, and coerces values as writes would store them. */
export class FieldResolver {
  private readonly known: ReadonlySet<string>;
  constructor(
    private readonly dataset: Dataset,
    private readonly access: FieldAccess,
  ) {
    const readable = [...dataset.fieldsByName.keys()].filter((name) => !access.readable || access.readable.has(name));
    this.known = new Set([...readable, 'id', 'gmt_create', 'gmt_modified']);
  }

  knownFields(): ReadonlySet<string> {
    return this.known;
  }

  /** The field `name` names, or 1001 mentioning `key`, the same for a hidden field as for an unknown one. */
  resolve(name: string, key: string): FieldRef {
    if (this.access.related && name.includes('.')) return this.resolveRelated(this.access.related, name, key).field;
    if (name === 'id') return ID_FIELD;
    if (name === 'gmt_create') return GMT_CREATE_FIELD;
    if (name === 'gmt_modified') return GMT_MODIFIED_FIELD;
    const field = this.known.has(name) ? this.dataset.fieldsByName.get(name) : undefined;
    if (!field) {
      throw new InvalidParameterError(
        `${key}: unknown field '${name}' in dataset '${this.dataset.datasetCode}'${didYouMean(name, this.known)}`,
      );
    }
    return { name, type: field.type };
  }

  /**
   * A related field, `<relation>.<field>`, one level deep: the relation must be the dataset's, the caller must
   * read its dataset, and the field must be one its grant there shows (a hidden one is unknown, as here).
   */
  private resolveRelated(
    related: ReadonlyMap<string, RelatedAccess>,
    name: string,
    key: string,
  ): { field: FieldRef; resolver: FieldResolver; base: string } {
    const [relation, fieldName] = relatedName(name) as [string, string];
    if (fieldName.includes('.')) {
      throw new InvalidParameterError(
        `${key}: '${name}' goes more than one level deep; a related field is named <relation>.<field>`,
      );
    }
    const access = related.get(relation);
    if (!access) {
      const names = [...related.keys()];
      const known = names.length
        ? `its relations: ${names.map((n) => `'${n}'`).join(', ')}`
        : 'it declares no relations';
      throw new InvalidParameterError(
        `${key}: unknown relation '${relation}' in dataset '${this.dataset.datasetCode}' (${known})${didYouMean(relation, names)}`,
      );
    }
    if (access.denied) throw new AccessDeniedError(`${key}: ${access.denied}`);
    const resolver = new FieldResolver(access.dataset, access.readable ? { readable: access.readable } : {});
    const field = resolver.resolve(fieldName, key);
    return { field: { name: `${relation}.${field.name}`, type: field.type }, resolver, base: field.name };
  }

  /** Every suffix-filter key of the readable fields, by the operators each one's type supports. */
  filterKeys(): string[] {
    return [...this.known].flatMap((name) => {
      const operators = SUPPORT[this.resolve(name, name).type];
      return Object.entries(SUFFIXES)
        .filter(([operator]) => operators.has(operator as Operator))
        .flatMap(([, suffixes]) => suffixes.map((suffix) => `${name}${suffix}`));
    });
  }

  /** A value coerced as a write would store it; 1001 naming `key` when it does not fit the type. */
  coerce(field: FieldRef, value: unknown, key: string): StoredValue {
    if (this.access.related && field.name.includes('.')) {
      const { resolver, base } = this.resolveRelated(this.access.related, field.name, key);
      return resolver.coerce({ name: base, type: field.type }, value, key);
    }
    if (value === null || value === undefined) {
      throw new InvalidParameterError(`${key}: a value is required (use ${field.name}_is_null to find nulls)`);
    }
    if (field.type === 'id') {
      const id = normalizeRecordId(value);
      if (id === undefined) throw new InvalidParameterError(`${key}: an id must be a non-empty string or a number`);
      return id;
    }
    const config =
      field.name === 'gmt_create' || field.name === 'gmt_modified'
        ? { name: field.name, type: 'datetime' as const }
        : (this.dataset.fieldsByName.get(field.name) as NonNullable<ReturnType<Dataset['fieldsByName']['get']>>);
    try {
      return toStoredValue(config, value);
    } catch (error) {
      if (error instanceof InvalidParameterError) throw new InvalidParameterError(`${key}: ${error.message}`);
      throw error;
    }
  }

  requireSupport(field: FieldRef, operator: Operator, key: string, what: string): void {
    if (!SUPPORT[field.type].has(operator)) {
      throw new InvalidParameterError(`${key}: ${what} is not supported for the ${field.type} field '${field.name}'`);
    }
  }

  text(value: unknown, key: string): string {
    if (typeof value !== 'string') throw new InvalidParameterError(`${key}: expects a string`);
    return value.toLowerCase();
  }

  inValues(field: FieldRef, value: unknown, key: string): StoredValue[] {
    if (!Array.isArray(value) || value.length === 0) {
      throw new InvalidParameterError(`${key}: expects a non-empty array of values`);
    }
    if (value.length > MAX_IN_VALUES) throw new InvalidParameterError(`${key}: at most ${MAX_IN_VALUES} values`);
    return value.map((v, i) => this.coerce(field, v, `${key}[${i}]`));
  }
}

/**
 * The filter of get-list's suffix syntax (`f`, `f_like`, `f_start`, `f_end`, `f_in`, `f_is_null`): the AND of
 * every key. Keys in `ignore` are skipped (paging, sort and the structured parameters).
 */
export function parseSuffixFilters(
  params: Record<string, unknown>,
  dataset: Dataset,
  access: FieldAccess = {},
  ignore: ReadonlySet<string> = RESERVED_LIST_PARAMS,
): Filter {
  const resolver = new FieldResolver(dataset, access);
  const conditions: Filter[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (ignore.has(key)) continue;
    const name = filterKeyField(key, resolver.knownFields());
    if (!name) {
      const hint = didYouMean(key, [...resolver.filterKeys(), ...ignore]);
      throw new InvalidParameterError(`${key}: unknown field or filter in dataset '${dataset.datasetCode}'${hint}`);
    }
    const field = resolver.resolve(name, key);
    const suffix = key.slice(name.length);
    conditions.push(suffixCondition(resolver, field, suffix, value, key));
  }
  return allOf(MATCH_ALL, ...conditions);
}

function suffixCondition(
  resolver: FieldResolver,
  field: FieldRef,
  suffix: string,
  value: unknown,
  key: string,
): Filter {
  switch (suffix) {
    case '':
      resolver.requireSupport(field, 'eq', key, 'equality');
      return { op: 'eq', field, value: resolver.coerce(field, value, key) };
    case '_like':
      resolver.requireSupport(field, 'like', key, '_like');
      return { op: 'text', field, match: 'contains', value: resolver.text(value, key) };
    case '_start':
      resolver.requireSupport(field, 'range', key, '_start');
      return { op: 'range', field, lower: { value: resolver.coerce(field, value, key), inclusive: true } };
    case '_end':
      resolver.requireSupport(field, 'range', key, '_end');
      return { op: 'range', field, upper: { value: resolver.coerce(field, value, key), inclusive: true } };
    case '_in':
      resolver.requireSupport(field, 'in', key, '_in');
      return { op: 'in', field, values: resolver.inValues(field, value, key) };
    case '_is_null':
      if (typeof value !== 'boolean') throw new InvalidParameterError(`${key}: expects true or false`);
      return { op: 'null', field, isNull: value };
    default:
      throw new InvalidParameterError(`${key}: unknown filter`);
  }
}

/** The structured filter of `paramMap.where`; its size is checked first (`refuseOversizedWhere`). */
export function parseWhere(where: unknown, dataset: Dataset, access: FieldAccess = {}): Filter {
  refuseOversizedWhere(where);
  return whereNode(new FieldResolver(dataset, access), where, 'where', 0);
}

/** 1001 when `where` holds more than `MAX_WHERE_CONDITIONS` conditions, found by `countWhereConditions`. */
export function refuseOversizedWhere(where: unknown): void {
  if (countWhereConditions(where, MAX_WHERE_CONDITIONS) > MAX_WHERE_CONDITIONS) {
    throw new InvalidParameterError(`where: holds more than ${MAX_WHERE_CONDITIONS} conditions`);
  }
}

/**
 * The conditions of `where` as the parser counts them (each operator on a field is one, a bare value is one
 * `$eq`, `$and`/`$or` are not counted), up to `limit + 1`: the walk stops at the first condition past the limit.
 * It checks and builds nothing, and reads no value of a condition, so refusing an oversized filter costs
 * `limit + 1` steps, whatever the filter's size and before any field is resolved or any value coerced. Parts
 * the parser refuses (not an object, nested deeper than `MAX_WHERE_DEPTH`) are not counted: the parser reports them.
 */
export function countWhereConditions(where: unknown, limit: number): number {
  let count = 0;
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_WHERE_DEPTH || !isPlainObject(node)) return;
    for (const key of Object.keys(node)) {
      if (count > limit) return;
      const value = node[key];
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(value)) continue;
        for (let i = 0; i < value.length && count <= limit; i++) visit(value[i], depth + 1);
      } else if (!key.startsWith('$')) {
        if (!isPlainObject(value)) count += 1;
        else for (const _operator of Object.keys(value)) if (++count > limit) return;
      }
    }
  };
  visit(where, 0);
  return count;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function whereNode(resolver: FieldResolver, node: unknown, path: string, depth: number): Filter {
  if (depth > MAX_WHERE_DEPTH) throw new InvalidParameterError(`${path}: nests deeper than ${MAX_WHERE_DEPTH} levels`);
  if (!isPlainObject(node)) throw new InvalidParameterError(`${path}: expects an object`);
  const items: Filter[] = [];
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}.${key}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) {
        throw new InvalidParameterError(`${at}: expects a non-empty array of conditions`);
      }
      const children = value.map((child, i) => whereNode(resolver, child, `${at}[${i}]`, depth + 1));
      items.push(key === '$and' ? allOf(MATCH_ALL, ...children) : { op: 'or', items: children });
      continue;
    }
    if (key.startsWith('$')) throw new InvalidParameterError(`${at}: unknown operator`);
    const field = resolver.resolve(key, at);
    if (isPlainObject(value)) {
      const operators = Object.entries(value);
      if (operators.length === 0) throw new InvalidParameterError(`${at}: expects at least one operator`);
      for (const [operator, operand] of operators) {
        items.push(whereOperator(resolver, field, operator, operand, `${at}.${operator}`));
      }
    } else {
      items.push(whereOperator(resolver, field, '$eq', value, at));
    }
  }
  return allOf(MATCH_ALL, ...items);
}

function whereOperator(
  resolver: FieldResolver,
  field: FieldRef,
  operator: string,
  operand: unknown,
  at: string,
): Filter {
  const bound = (inclusive: boolean) => {
    resolver.requireSupport(field, 'range', at, operator);
    return { value: resolver.coerce(field, operand, at), inclusive };
  };
  switch (operator) {
    case '$eq':
    case '$ne': {
      if (operand === null) return { op: 'null', field, isNull: operator === '$eq' };
      resolver.requireSupport(field, 'eq', at, operator);
      const value = resolver.coerce(field, operand, at);
      return operator === '$eq' ? { op: 'eq', field, value } : { op: 'ne', field, value };
    }
    case '$gt':
      return { op: 'range', field, lower: bound(false) };
    case '$gte':
    case '$gteq':
      return { op: 'range', field, lower: bound(true) };
    case '$lt':
      return { op: 'range', field, upper: bound(false) };
    case '$lte':
    case '$lteq':
      return { op: 'range', field, upper: bound(true) };
    case '$contain':
    case '$startWith':
    case '$endWith': {
      resolver.requireSupport(field, 'like', at, operator);
      const match = operator === '$contain' ? 'contains' : operator === '$startWith' ? 'prefix' : 'suffix';
      return { op: 'text', field, match, value: resolver.text(operand, at) } satisfies Condition;
    }
    case '$in':
      resolver.requireSupport(field, 'in', at, operator);
      return { op: 'in', field, values: resolver.inValues(field, operand, at) };
    case '$notNull':
      if (typeof operand !== 'boolean') throw new InvalidParameterError(`${at}: expects true or false`);
      return { op: 'null', field, isNull: !operand };
    default:
      throw new InvalidParameterError(`${at}: unknown operator`);
  }
}

/**
 * A grant's `rowFilter` (get-list suffix syntax), read with full visibility: it is configuration, so a
 * problem in it is ours, not the caller's; the caller of this function reports it as an internal error.
 */
export function parseRowFilter(rowFilter: Record<string, unknown> | undefined, dataset: Dataset): Filter {
  if (!rowFilter) return MATCH_ALL;
  return parseSuffixFilters(rowFilter, dataset, {}, new Set());
}
