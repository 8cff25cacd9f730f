/**
 * The mirror's tables in MySQL (docs/interface.md §20): one per dataset, named by its `datasetCode`, with `id`, one
 * typed column per field, `gmt_create`, `gmt_modified` and `revision`; and the mirror's own bookkeeping table
 * (`das$mirror`, a name no dataset code can take), one row per dataset: the change log position applied, when
 * the mirror last caught up, and where its backfill stands.
 *
 * A field added to a dataset is a column added in place (ALGORITHM=INSTANT: no copy of the table, on MySQL 8 and
 * MariaDB alike). A removed field's column stays, unread: queries reach a dataset only through the SELECT of its
 * configured, visible fields (shared/sql/mirror-scope.ts), so it is unreadable from the moment it is removed.
 */
import type { FieldConfig, FieldType } from '../catalog/schema';
import { quoteName } from '../sql-dialect/mysql-render';

import { STATE_TABLE } from './mirror-names';

export { STATE_TABLE };

/** MySQL types of the fields, as the platform's own MySQL schema types them (text may be up to a record's size). */
export const COLUMN_TYPES: Record<FieldType, string> = {
  string: 'MEDIUMTEXT',
  text: 'MEDIUMTEXT',
  enum: 'VARCHAR(255)',
  integer: 'BIGINT',
  number: 'DOUBLE',
  boolean: 'TINYINT(1)',
  date: 'DATE',
  datetime: 'DATETIME',
  json: 'JSON',
};

/** Ids are compared as the service compares them: byte for byte, never folded by a collation. */
const ID_COLUMN = '`id` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY';

export function createStateTable(): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${quoteName(STATE_TABLE)} (` +
    '`dataset_code` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, ' +
    '`position` CHAR(26) CHARACTER SET ascii COLLATE ascii_bin NULL, ' +
    '`caught_up_at` BIGINT NOT NULL DEFAULT 0, ' +
    '`backfill_cursor` TEXT NULL, ' +
    '`backfill_done` TINYINT(1) NOT NULL DEFAULT 0, ' +
    '`backfill_rows` BIGINT NOT NULL DEFAULT 0, ' +
    STATE_COLUMNS_ADDED.map(([name, type]) => `${quoteName(name)} ${type}`).join(', ') +
    ')'
  );
}

/**
 * The bookkeeping columns added after the table's first version: why a backfill runs again, and the time of the
 * position the mirror had stopped at (epoch ms; 0 for a dataset's first backfill).
 */
const STATE_COLUMNS_ADDED: readonly (readonly [string, string])[] = [
  ['backfill_reason', 'VARCHAR(512) NULL'],
  ['stale_since', 'BIGINT NOT NULL DEFAULT 0'],
];

/** Adds to a bookkeeping table made by an earlier version the columns it lacks (`existing`: its column names). */
export function addStateColumns(existing: ReadonlySet<string>): string | undefined {
  const missing = STATE_COLUMNS_ADDED.filter(([name]) => !existing.has(name));
  if (missing.length === 0) return undefined;
  return `ALTER TABLE ${quoteName(STATE_TABLE)} ${missing.map(([name, type]) => `ADD COLUMN ${quoteName(name)} ${type}`).join(', ')}`;
}

export function createDatasetTable(datasetCode: string, fields: readonly FieldConfig[]): string {
  const columns = [
    ID_COLUMN,
    ...fields.map((field) => `${quoteName(field.name)} ${COLUMN_TYPES[field.type]} NULL`),
    '`gmt_create` DATETIME NULL',
    '`gmt_modified` DATETIME NULL',
    '`revision` BIGINT NOT NULL',
  ];
  return `CREATE TABLE IF NOT EXISTS ${quoteName(datasetCode)} (${columns.join(', ')})`;
}

/** The column types `information_schema` names for each field type (MariaDB's JSON is a LONGTEXT). */
const DATA_TYPES: Record<FieldType, readonly string[]> = {
  string: ['mediumtext'],
  text: ['mediumtext'],
  enum: ['varchar'],
  integer: ['bigint'],
  number: ['double'],
  boolean: ['tinyint'],
  date: ['date'],
  datetime: ['datetime'],
  json: ['json', 'longtext'],
};

/**
 * The columns whose type no longer fits their field (an `integer` field become `number`, §17; a field removed and
 * added again with another type), changed in one ALTER TABLE (this one copies the table: such a change is rare);
 * undefined when every column fits. `existing`: each column's lower-cased name and `information_schema` type.
 */
export function retypeColumns(
  datasetCode: string,
  fields: readonly FieldConfig[],
  existing: ReadonlyMap<string, string>,
): string | undefined {
  const changed = fields.filter((field) => {
    const type = existing.get(field.name.toLowerCase());
    return type !== undefined && !DATA_TYPES[field.type].includes(type.toLowerCase());
  });
  if (changed.length === 0) return undefined;
  const modifies = changed.map((field) => `MODIFY COLUMN ${quoteName(field.name)} ${COLUMN_TYPES[field.type]} NULL`);
  return `ALTER TABLE ${quoteName(datasetCode)} ${modifies.join(', ')}`;
}

/** The columns to add for fields the table lacks, as one online ALTER TABLE; undefined when none is missing. */
export function addColumns(
  datasetCode: string,
  fields: readonly FieldConfig[],
  existing: ReadonlyMap<string, string>,
): string | undefined {
  const missing = fields.filter((field) => !existing.has(field.name.toLowerCase()));
  if (missing.length === 0) return undefined;
  const adds = missing.map((field) => `ADD COLUMN ${quoteName(field.name)} ${COLUMN_TYPES[field.type]} NULL`);
  return `ALTER TABLE ${quoteName(datasetCode)} ${adds.join(', ')}, ALGORITHM=INSTANT`;
}

/** A record's values in the table's column order (`columnsOf`): stored values as MySQL takes them. */
export function columnsOf(fields: readonly FieldConfig[]): string[] {
  return ['id', ...fields.map((field) => field.name), 'gmt_create', 'gmt_modified', 'revision'];
}

export interface MirrorRow {
  id: string;
  revision: number;
  /** The record after the change: dataset fields in stored form, `gmt_create`, `gmt_modified`. */
  item: Readonly<Record<string, unknown>>;
}

export function rowValues(fields: readonly FieldConfig[], row: MirrorRow): (string | number | null)[] {
  return [
    row.id,
    ...fields.map((field) => cell(field, row.item[field.name])),
    timestamp(row.item.gmt_create),
    timestamp(row.item.gmt_modified),
    row.revision,
  ];
}

function cell(field: FieldConfig, value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return field.type === 'boolean' ? (value ? 1 : 0) : value;
  if (typeof value === 'string') return value;
  // A json field is stored as its text; anything else kept as an object is written as JSON too.
  return JSON.stringify(value);
}

function timestamp(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * One batched upsert of rows, guarded by revision: a row already holding this revision or a later one keeps what
 * it holds, so a replayed, reordered or backfilled change never moves a row back. `revision` is assigned last:
 * MySQL applies the assignments in order, and each guard must still compare against the old revision.
 */
export function upsertStatement(datasetCode: string, fields: readonly FieldConfig[], count: number): string {
  const columns = columnsOf(fields);
  const row = `(${columns.map(() => '?').join(', ')})`;
  const guarded = columns
    .filter((column) => column !== 'id' && column !== 'revision')
    .map((column) => {
      const name = quoteName(column);
      return `${name} = IF(VALUES(\`revision\`) > \`revision\`, VALUES(${name}), ${name})`;
    });
  guarded.push('`revision` = GREATEST(`revision`, VALUES(`revision`))');
  return (
    `INSERT INTO ${quoteName(datasetCode)} (${columns.map(quoteName).join(', ')}) VALUES ` +
    `${Array.from({ length: count }, () => row).join(', ')} ON DUPLICATE KEY UPDATE ${guarded.join(', ')}`
  );
}
