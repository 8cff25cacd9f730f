/**
 * How a dataset looks to custom SQL (docs/interface.md §8): a table named by its dataset code with `id`, one column per
 * visible field in definition order, then `gmt_create` and `gmt_modified`. Field types map to SQLite storage
 * types so that comparisons, sums and sorts behave as the field's type says: numbers as INTEGER/REAL, booleans
 * as 0/1, dates and datetimes as their text (which sorts in time order), JSON as its text (for json_extract).
 */
import type { FieldConfig, FieldType } from '../catalog/schema';
import type { ColumnType, SqlValue, TableColumn } from './query-engine';

const COLUMN_TYPES: Record<FieldType, ColumnType> = {
  string: 'TEXT',
  text: 'TEXT',
  enum: 'TEXT',
  date: 'TEXT',
  datetime: 'TEXT',
  json: 'TEXT',
  integer: 'INTEGER',
  boolean: 'INTEGER',
  number: 'REAL',
};

/** The table's columns for the given visible fields. */
export function datasetColumns(fields: readonly FieldConfig[]): TableColumn[] {
  return [
    // Ids may be strings or numbers (docs/interface.md §4): an untyped column keeps each as it came.
    { name: 'id', type: 'ANY' },
    ...fields.map((field) => ({ name: field.name, type: COLUMN_TYPES[field.type] })),
    { name: 'gmt_create', type: 'TEXT' },
    { name: 'gmt_modified', type: 'TEXT' },
  ];
}

/** One record as a table row, in the order of `datasetColumns(fields)`; fields not listed are left out. */
export function toTableRow(fields: readonly FieldConfig[], record: Readonly<Record<string, unknown>>): SqlValue[] {
  const row: SqlValue[] = [systemValue(record.id)];
  for (const field of fields) row.push(toSqlValue(field.type, record[field.name]));
  row.push(systemValue(record.gmt_create), systemValue(record.gmt_modified));
  return row;
}

/** A stored value as a cell of a column of the field's type. */
export function toSqlValue(type: FieldType, value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (type === 'json') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') {
    // Stored values are validated, so this is only a safety net for numeric text in a numeric field.
    if ((type === 'integer' || type === 'number') && value.trim() !== '' && Number.isFinite(Number(value))) {
      return Number(value);
    }
    return value;
  }
  if (typeof value === 'bigint') return Number(value);
  return JSON.stringify(value);
}

function systemValue(value: unknown): SqlValue {
  if (typeof value === 'string' || typeof value === 'number') return value;
  return value === undefined || value === null ? null : String(value);
}
