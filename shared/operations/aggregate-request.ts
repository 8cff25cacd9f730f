/**
 * What an aggregate request asks (docs/interface.md §21), read from `paramMap` and checked against the dataset as
 * the caller's grant shows it: the measures (`aggregate`), the rows they run over (get-list's filters and `where`),
 * the groups (`groupBy`), which groups are kept (`having`), their order (`orderBy`) and the page.
 *
 * Permissions by construction: every field name goes through get-list's resolver over the readable fields, so a
 * hidden field is 1001 as an unknown one wherever it is named. `having` and `orderBy` see only the groups' columns:
 * the `groupBy` fields and the measures' aliases (a dataset is built of those alone and read with the same
 * parser), so they cannot name a field the groups do not carry, hidden or not, and their messages list only those.
 */
import type { Dataset } from '../catalog/catalog';
import type { FieldConfig } from '../catalog/schema';
import { InvalidParameterError } from '../contract/errors';
import { readParamMap } from '../operation/param-map';
import { type Paging, readPaging } from '../query/get-list';
import { parseSortList } from '../query/list-params';
import {
  type FieldAccess,
  FieldResolver,
  isPlainObject,
  parseSuffixFilters,
  parseWhere,
} from '../records/filter-parser';
import {
  allOf,
  type FieldRef,
  type Filter,
  filterFields,
  MATCH_ALL,
  type SortDirection,
  type SortKey,
} from '../records/list-query';

export const AGGREGATE_TYPES = ['SUM', 'AVG', 'COUNT', 'MAX', 'MIN'] as const;
export type AggregateType = (typeof AGGREGATE_TYPES)[number];
/** An aggregate request holds 1 to this many measures. */
export const MAX_MEASURES = 20;
/** Most decimals `precision` may ask for. */
export const MAX_PRECISION = 10;

/** One measure: `type(column)` as `alias`, rounded to `precision` decimals when asked. */
export interface Measure {
  type: AggregateType;
  /** Absent: COUNT of records. */
  column?: FieldRef;
  alias: string;
  distinct: boolean;
  precision?: number;
}

export interface AggregateRequest {
  /** The rows measured, before the caller's row scope (the loaded table holds only that scope). */
  filter: Filter;
  groupBy: FieldRef[];
  measures: Measure[];
  /** Over the group columns: `groupBy` field names and measure aliases. */
  having: Filter;
  /** Over the group columns; the groups' own order follows as the tie-break. */
  orderBy: { name: string; direction: SortDirection }[];
  paging: Paging;
}

/** The keys of `paramMap` that are not get-list filters. */
const AGGREGATE_KEYS = new Set([
  'aggregate',
  'groupBy',
  'having',
  'orderBy',
  'where',
  'currentPage',
  'page',
  'pageSize',
]);
const ALIAS_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const NUMERIC = new Set(['integer', 'number']);
/** Types MAX and MIN compare (a json value has no order; a boolean's extreme is a filter). */
const ORDERED = new Set(['integer', 'number', 'string', 'text', 'enum', 'date', 'datetime', 'id']);

export function readAggregateRequest(
  body: Record<string, unknown>,
  dataset: Dataset,
  access: FieldAccess,
  defaultPageSize: number,
): AggregateRequest {
  const params = readParamMap(body);
  const paging = readPaging(params, defaultPageSize);
  const where =
    params.where === undefined || params.where === null ? MATCH_ALL : parseWhere(params.where, dataset, access);
  const filter = allOf(parseSuffixFilters(params, dataset, access, AGGREGATE_KEYS), where);
  const resolver = new FieldResolver(dataset, access);
  const groupBy = readGroupBy(params.groupBy, resolver);
  const measures = readMeasures(params.aggregate, resolver, groupBy);
  const columns = groupColumns(dataset, groupBy, measures);
  const columnAccess = { readable: new Set(columns.fields.map((field) => field.name)) };
  let having: Filter = MATCH_ALL;
  if (params.having !== undefined && params.having !== null) {
    try {
      having = parseWhere(params.having, columns, columnAccess);
    } catch (error) {
      throw asGroupColumnError(error, 'having', columns);
    }
    // The resolver knows the system fields of every dataset: they are group columns only when grouped.
    for (const name of filterFields(having)) {
      if (!columns.fieldsByName.has(name)) throw notAGroupColumn(`having.${name}`, name, columns);
    }
  }
  let orderBy: AggregateRequest['orderBy'] = [];
  if (params.orderBy !== undefined && params.orderBy !== null) {
    let keys: SortKey[];
    try {
      keys = parseSortList(params.orderBy, columns, columnAccess, 'orderBy');
    } catch (error) {
      throw asGroupColumnError(error, 'orderBy', columns);
    }
    orderBy = keys.map((key) => {
      if (!columns.fieldsByName.has(key.field.name)) throw notAGroupColumn('orderBy', key.field.name, columns);
      return { name: key.field.name, direction: key.direction };
    });
  }
  return { filter, groupBy, measures, having, orderBy, paging };
}

function readGroupBy(value: unknown, resolver: FieldResolver): FieldRef[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidParameterError('groupBy: expects an array of field names');
  const fields: FieldRef[] = [];
  value.forEach((name, i) => {
    if (typeof name !== 'string') throw new InvalidParameterError(`groupBy[${i}]: expects a field name`);
    const field = resolver.resolve(name, `groupBy[${i}]`);
    if (field.type === 'json')
      throw new InvalidParameterError(`groupBy[${i}]: the json field '${name}' cannot be grouped`);
    if (!fields.some((known) => known.name === name)) fields.push(field);
  });
  return fields;
}

function readMeasures(value: unknown, resolver: FieldResolver, groupBy: readonly FieldRef[]): Measure[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_MEASURES) {
    throw new InvalidParameterError(
      `aggregate: expects 1 to ${MAX_MEASURES} items {"type": "SUM" | "AVG" | "COUNT" | "MAX" | "MIN", "column", "alias"?}`,
    );
  }
  const measures = value.map((item, i) => readMeasure(item, `aggregate[${i}]`, resolver));
  const taken = new Set(groupBy.map((field) => field.name));
  measures.forEach((measure, i) => {
    if (taken.has(measure.alias)) {
      throw new InvalidParameterError(
        `aggregate[${i}]: the output name '${measure.alias}' is taken by a groupBy field or another measure; give it an alias of its own`,
      );
    }
    taken.add(measure.alias);
  });
  return measures;
}

function readMeasure(item: unknown, at: string, resolver: FieldResolver): Measure {
  if (!isPlainObject(item)) throw new InvalidParameterError(`${at}: expects an object {"type", "column", "alias"?}`);
  for (const key of Object.keys(item)) {
    if (!['type', 'column', 'field', 'alias', 'distinct', 'round', 'precision'].includes(key)) {
      throw new InvalidParameterError(`${at}.${key}: unknown key (type, column, alias, distinct, round, precision)`);
    }
  }
  const sentType = typeof item.type === 'string' ? item.type.toUpperCase() : undefined;
  if (!AGGREGATE_TYPES.includes(sentType as AggregateType)) {
    throw new InvalidParameterError(`${at}.type: expects SUM, AVG, COUNT, MAX or MIN (any letter case)`);
  }
  const type = sentType as AggregateType;
  if (item.column !== undefined && item.field !== undefined && item.column !== item.field) {
    throw new InvalidParameterError(`${at}: column and field (its old name) name different fields; send column alone`);
  }
  const name = item.column ?? item.field;
  const key = item.column === undefined ? 'field' : 'column';
  let column: FieldRef | undefined;
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string') throw new InvalidParameterError(`${at}.${key}: expects a field name`);
    column = resolver.resolve(name, `${at}.${key}`);
  } else if (type !== 'COUNT') {
    throw new InvalidParameterError(`${at}.column: ${type} needs a column`);
  }
  if (column && (type === 'SUM' || type === 'AVG') && !NUMERIC.has(column.type)) {
    throw new InvalidParameterError(
      `${at}.${key}: ${type} needs an integer or number field, '${column.name}' is ${column.type}`,
    );
  }
  if (column && (type === 'MAX' || type === 'MIN') && !ORDERED.has(column.type)) {
    throw new InvalidParameterError(`${at}.${key}: ${type} cannot compare the ${column.type} field '${column.name}'`);
  }
  if (item.distinct !== undefined && typeof item.distinct !== 'boolean') {
    throw new InvalidParameterError(`${at}.distinct: expects true or false`);
  }
  if (item.distinct === true && !column)
    throw new InvalidParameterError(`${at}.distinct: COUNT DISTINCT needs a column`);
  if (item.round !== undefined && typeof item.round !== 'boolean') {
    throw new InvalidParameterError(`${at}.round: expects true or false`);
  }
  const precision = item.precision;
  if (
    precision !== undefined &&
    (typeof precision !== 'number' || !Number.isInteger(precision) || precision < 0 || precision > MAX_PRECISION)
  ) {
    throw new InvalidParameterError(`${at}.precision: expects an integer from 0 to ${MAX_PRECISION}`);
  }
  if (item.round === true && precision === undefined) {
    throw new InvalidParameterError(`${at}.precision: round needs the number of decimals (precision)`);
  }
  const alias = item.alias ?? (column ? `${type.toLowerCase()}_${column.name}` : 'count');
  if (typeof alias !== 'string' || !ALIAS_PATTERN.test(alias)) {
    throw new InvalidParameterError(
      `${at}.alias: expects 1 to 64 letters, digits and "_", starting with a letter or "_"`,
    );
  }
  const measure: Measure = { type, alias, distinct: item.distinct === true };
  if (column) measure.column = column;
  if (item.round === true) measure.precision = precision as number;
  return measure;
}

/**
 * The groups as a dataset of their own: the `groupBy` fields and one field per measure, typed as its values are
 * (COUNT integer, SUM and AVG number, MAX and MIN their column's type), so `having` compares and coerces as get-list
 * does. It holds nothing else: a name outside it is unknown to `having` and `orderBy`, whatever the dataset has.
 */
function groupColumns(dataset: Dataset, groupBy: readonly FieldRef[], measures: readonly Measure[]): Dataset {
  const fields: FieldConfig[] = groupBy.map(
    (field) =>
      dataset.fieldsByName.get(field.name) ?? { name: field.name, type: field.type === 'id' ? 'string' : field.type },
  );
  for (const measure of measures) {
    const type =
      measure.type === 'COUNT'
        ? 'integer'
        : measure.type === 'SUM' || measure.type === 'AVG'
          ? 'number'
          : measure.column?.type;
    const base = measure.column && dataset.fieldsByName.get(measure.column.name);
    if ((measure.type === 'MAX' || measure.type === 'MIN') && base)
      fields.push({ ...base, name: measure.alias, required: false });
    else fields.push({ name: measure.alias, type: type === 'id' || type === undefined ? 'string' : type });
  }
  return {
    ...dataset,
    fields,
    fieldsByName: new Map(fields.map((field) => [field.name, field])),
  };
}

function notAGroupColumn(at: string, name: string, columns: Dataset): InvalidParameterError {
  return new InvalidParameterError(
    `${at}: unknown name '${name}': it takes the groupBy fields and the aggregate aliases (${columns.fields.map((f) => f.name).join(', ')})`,
  );
}

/**
 * A parser's message about `having` (read as a `where`) or `orderBy`, naming the key as the caller sent it; an
 * unknown name is told what the groups carry.
 */
function asGroupColumnError(error: unknown, key: 'having' | 'orderBy', columns: Dataset): unknown {
  if (!(error instanceof InvalidParameterError)) return error;
  const from = key === 'having' ? 'where' : 'orderBy';
  if (!error.message.startsWith(from)) return error;
  const unknown = /^(?:where|orderBy)(\S*): unknown field '([^']+)'/.exec(error.message);
  if (unknown) return notAGroupColumn(`${key}${unknown[1]}`, unknown[2] as string, columns);
  return new InvalidParameterError(`${key}${error.message.slice(from.length)}`);
}
