/** What a rendering is given (the datasets a caller may read, parameters, time zone, clock) and what it answers. */

import type { FieldType } from '../catalog/schema';
import { DialectError } from './dialect-error';

/** A column's kind: a field type, or one of the system fields' (`id`, `gmt_create`/`gmt_modified`). */
export type ColumnKind = FieldType | 'id' | 'timestamp';

export interface DialectColumn {
  name: string;
  kind: ColumnKind;
  /** Whether the caller may read it; a hidden column is, to the query, a column that does not exist. */
  visible: boolean;
}

export interface DialectTable {
  name: string;
  columns: readonly DialectColumn[];
  /** Whether the caller may read the dataset at all. */
  readable: boolean;
}

export type ParamType = 'string' | 'number' | 'integer' | 'boolean';

export interface RenderContext {
  /** The dataset of that code (case-sensitive, as MySQL on Linux names tables). */
  table(name: string): DialectTable | undefined;
  params: Readonly<Record<string, ParamType>>;
  /** The configuration's time zone: NOW(), CURDATE() and the Unix-time functions are in it. */
  timeZone: string;
  /** The statement's moment: NOW() for the whole statement. */
  now: StatementClock;
  /**
   * Check MySQL 8's ONLY_FULL_GROUP_BY (group-check.ts). It depends on the text alone, never on the caller, so
   * it is checked when the configuration loads and not again for each caller.
   */
  onlyFullGroupBy?: boolean;
}

export interface StatementClock {
  epochMs: number;
  /**
   * The same moment as `YYYY-MM-DD HH:MM:SS` in the time zone (as record timestamps are written). Asked only
   * when the statement reads the local time (NOW(), CURDATE()): a process's first formatter for a time zone
   * costs it tens of milliseconds, which a statement that never reads it does not pay.
   */
  local(): string;
}

export interface RenderedQuery {
  /** The SQLite statement, with `#{name}` placeholders where parameters are bound. */
  sql: string;
  /** The result's column names, in order. */
  columns: string[];
  /** The datasets it reads. */
  tables: string[];
}

/** A name the caller cannot see (a hidden field, a dataset it may not read): answered like an unknown one. */
export class UnknownNameError extends DialectError {
  constructor(message: string, position?: number) {
    super(message, position, 'name');
  }
}
