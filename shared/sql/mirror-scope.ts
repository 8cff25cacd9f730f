/**
 * What one caller may read of a dataset's mirror table (docs/interface.md §6, §8, §20), as the SELECT a query's
 * reference to the dataset is replaced with (sql-dialect/mysql-render.ts): the visible columns only, and the rows
 * inside the grant's row filter, the filter written as MySQL conditions that mean exactly what the in-memory
 * matcher means (records/filter-matcher.ts): text compared by code point (as bytes of UTF-8, never by the
 * server's case-insensitive collation), a missing value matching nothing but `IS NULL` and `ne`.
 *
 * The filter's values come from the configuration, yet they are written as hexadecimal literals all the same, so
 * no value can ever be read as SQL.
 */
import { type ReadableTable, rowFilterScope } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import type { StoredValue } from '../records/field-values';
import type { Condition, Filter } from '../records/list-query';
import { quoteName } from './mysql-names';

/**
 * The SELECT of the rows and columns of `view` (its dataset's mirror table in `database`). `extra`: columns the
 * service itself reads beside them (a relation's link, under a name no field can take), never the caller's text.
 */
export function mirrorSource(database: string, view: ReadableTable, dataset: Dataset, extra: string[] = []): string {
  const columns = [
    ...['id', ...view.fields.map((field) => field.name), 'gmt_create', 'gmt_modified'].map(quoteName),
    ...extra,
  ];
  const scope = rowFilterScope(view.rowFilter, dataset);
  const where = scope ? ` WHERE ${filterSql(scope)}` : '';
  return `SELECT ${columns.join(', ')} FROM ${quoteName(database)}.${quoteName(view.datasetCode)}${where}`;
}

/** A filter as a MySQL condition. */
export function filterSql(filter: Filter): string {
  if (filter.op === 'and' || filter.op === 'or') {
    if (filter.items.length === 0) return filter.op === 'and' ? 'TRUE' : 'FALSE';
    return `(${filter.items.map(filterSql).join(filter.op === 'and' ? ' AND ' : ' OR ')})`;
  }
  return conditionSql(filter);
}

function conditionSql(condition: Condition): string {
  const column = quoteName(condition.field.name);
  switch (condition.op) {
    case 'null':
      return `${column} IS ${condition.isNull ? '' : 'NOT '}NULL`;
    case 'eq':
      return compare(column, '=', condition.value);
    case 'ne':
      return `(${column} IS NULL OR NOT ${compare(column, '=', condition.value)})`;
    case 'in':
      return condition.values.length === 0
        ? 'FALSE'
        : `(${condition.values.map((value) => compare(column, '=', value)).join(' OR ')})`;
    case 'range': {
      const parts = [`${column} IS NOT NULL`];
      if (condition.lower) parts.push(compare(column, condition.lower.inclusive ? '>=' : '>', condition.lower.value));
      if (condition.upper) parts.push(compare(column, condition.upper.inclusive ? '<=' : '<', condition.upper.value));
      return `(${parts.join(' AND ')})`;
    }
    case 'text': {
      const lowered = `CAST(LOWER(${column}) AS BINARY)`;
      const value = hexText(condition.value);
      const bytes = Buffer.byteLength(condition.value);
      if (condition.match === 'contains') return `(${column} IS NOT NULL AND INSTR(${lowered}, ${value}) > 0)`;
      const side = condition.match === 'prefix' ? 'LEFT' : 'RIGHT';
      return `(${column} IS NOT NULL AND ${side}(${lowered}, ${bytes}) = ${value})`;
    }
  }
}

/** `column <op> value`: numbers and booleans as numbers, text as bytes (code point order). */
function compare(column: string, op: string, value: StoredValue): string {
  if (typeof value === 'number') return `${column} ${op} ${numberLiteral(value)}`;
  if (typeof value === 'boolean') return `${column} ${op} ${value ? 1 : 0}`;
  return `CAST(${column} AS BINARY) ${op} ${hexText(value)}`;
}

function numberLiteral(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`a row filter value that is not a finite number: ${value}`);
  return Number.isInteger(value) && Math.abs(value) < 2 ** 53 ? String(value) : value.toExponential();
}

/** Text as a binary string literal (`X'…'` of its UTF-8 bytes; `''` for the empty text). */
function hexText(value: string): string {
  return value === '' ? "CAST('' AS BINARY)" : `X'${Buffer.from(value, 'utf8').toString('hex')}'`;
}
