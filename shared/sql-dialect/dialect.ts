/**
 * Custom SQL's dialect (docs/interface.md §19), in one place: a registered query is MySQL 8 text. It is read once
 * (`readQuery`, kept per text), checked when the configuration loads against every dataset and field of the
 * deployment (`queryProblems`: anything outside the accepted list, or a name that does not exist, refuses the
 * configuration, naming the query and the construct), checked so again before custom SQL first runs it
 * (`queryRunProblem`, for a configuration an earlier release applied), and rendered for one caller at run time
 * (`renderQuery`: only the datasets and fields its grants let it read; a hidden one is answered as unknown). Custom
 * SQL loads this module through dialect-loader.ts, from a file of its own. An engine takes the
 * rendering: SQLite (sqlite-render.ts, with sqlite-functions.js registered in it) is the embedded one; another
 * engine adds its own rendering of the same checked tree.
 */
import type { CatalogConfig, DatasetConfig, FieldConfig, QueryConfig } from '../catalog/schema';
import { DialectError } from './dialect-error';
import type { Expr, SelectStatement } from './mysql-ast';
import { parseQuery } from './mysql-parser';
import { type MysqlStatement, renderMysql } from './mysql-render';
import { renderSqlite } from './sqlite-render';
import {
  type DialectTable,
  type ParamType,
  type RenderedQuery,
  type StatementClock,
  UnknownNameError,
} from './sqlite-render-context';

export { DialectError } from './dialect-error';
export { type MysqlStatement, quoteName } from './mysql-render';
export { type DialectTable, type RenderedQuery, type StatementClock, UnknownNameError } from './sqlite-render-context';

const statements = new Map<string, SelectStatement>();
/** Texts kept read at most: a deployment's queries, many times over. */
const MAX_KEPT = 5_000;

/** The query's text, read as MySQL 8 reads it; throws DialectError naming what is not accepted. */
export function readQuery(sql: string): SelectStatement {
  let statement = statements.get(sql);
  if (!statement) {
    statement = parseQuery(sql);
    if (statements.size >= MAX_KEPT) statements.clear();
    statements.set(sql, statement);
  }
  return statement;
}

/** A dataset as a table: `id`, its fields in order, `gmt_create`, `gmt_modified`; `visible` narrows the fields. */
export function datasetTable(
  dataset: Pick<DatasetConfig, 'datasetCode'> & { fields: readonly FieldConfig[] },
  readable = true,
  visible?: ReadonlySet<string>,
): DialectTable {
  return {
    name: dataset.datasetCode,
    readable,
    columns: [
      { name: 'id', kind: 'id', visible: true },
      ...dataset.fields.map((field) => ({
        name: field.name,
        kind: field.type,
        visible: !visible || visible.has(field.name),
      })),
      { name: 'gmt_create', kind: 'timestamp', visible: true },
      { name: 'gmt_modified', kind: 'timestamp', visible: true },
    ],
  };
}

function paramTypes(query: QueryConfig): Record<string, ParamType> {
  return Object.fromEntries(Object.entries(query.params ?? {}).map(([name, spec]) => [name, spec.type]));
}

export interface RenderOptions {
  /** The table of a dataset code as the caller sees it; undefined when no dataset has that code. */
  table(name: string): DialectTable | undefined;
  timeZone: string;
  now: StatementClock;
}

/** The query rendered for SQLite as one caller may run it. Throws UnknownNameError for what it may not see. */
export function renderQuery(query: QueryConfig, options: RenderOptions): RenderedQuery {
  return renderSqlite(readQuery(query.sql), { ...options, params: paramTypes(query) });
}

/**
 * The query as MySQL itself runs it for one caller (mysql-render.ts): checked and rendered as `renderQuery` does
 * (a hidden name is refused the same way), then its own text with each dataset narrowed by `source`.
 */
export function renderMysqlQuery(
  query: QueryConfig,
  options: RenderOptions,
  source: (datasetCode: string) => string,
): MysqlStatement & { tables: string[] } {
  const { tables } = renderQuery(query, options);
  return { ...renderMysql(readQuery(query.sql), query.sql, source), tables };
}

/** The parameters a query binds in LIMIT and OFFSET (a negative value there is the caller's error). */
export function limitParams(query: QueryConfig): string[] {
  const names = new Set<string>();
  JSON.stringify(readQuery(query.sql), (_key, value: { kind?: string; limit?: { count: Expr; offset?: Expr } }) => {
    if (value?.kind === 'statement') {
      for (const bound of [value.limit?.count, value.limit?.offset]) if (bound?.kind === 'param') names.add(bound.name);
    }
    return value;
  });
  return [...names];
}

/** The moment a query is checked at: what it answers never decides whether it is accepted. */
const LOAD_CLOCK: StatementClock = { epochMs: 0, local: () => '1970-01-01 00:00:00' };

export interface QueryProblem {
  /** The query's index in `queries`. */
  index: number;
  message: string;
}

/** The tables a configuration's queries are checked against: every dataset with every field. */
function allTables(config: CatalogConfig): Map<string, DialectTable> {
  return new Map(config.datasets.map((dataset) => [dataset.datasetCode, datasetTable(dataset)]));
}

/** One query checked as `queryProblems` checks it: what refuses it, or undefined. */
function checkQuery(
  query: QueryConfig,
  config: CatalogConfig,
  tables: Map<string, DialectTable>,
): DialectError | undefined {
  try {
    renderSqlite(readQuery(query.sql), {
      table: (name) => tables.get(name),
      params: paramTypes(query),
      timeZone: config.timeZone ?? 'UTC',
      now: LOAD_CLOCK,
      onlyFullGroupBy: true,
    });
    return undefined;
  } catch (error) {
    if (!(error instanceof DialectError)) throw error;
    return error;
  }
}

/**
 * Every query checked as it will run: read, and rendered against every dataset with every field, at a fixed
 * moment (what a query answers never decides whether it is accepted), with MySQL 8's ONLY_FULL_GROUP_BY checked
 * (it depends on the text alone, so it is not checked again per caller). One problem per query that fails.
 */
export function queryProblems(config: CatalogConfig): QueryProblem[] {
  const tables = allTables(config);
  const problems: QueryProblem[] = [];
  (config.queries ?? []).forEach((query, index) => {
    // A `${...}` query is refused with its own message (the schema's); reading it again would say less.
    if (/\$\{[^}]*\}/.test(query.sql)) return;
    const error = checkQuery(query, config, tables);
    if (error) problems.push({ index, message: describeProblem(query, error) });
  });
  return problems;
}

const checkedAtRun = new WeakMap<QueryConfig, { problem?: string }>();

/**
 * Why custom SQL will not run a query of a stored configuration, in the words `queryProblems` refuses it with, or
 * undefined. A configuration is checked where it is written, but one applied by an earlier release was checked
 * by that release's rules: custom SQL checks each query again before it first runs it (kept per query of a
 * loaded configuration). An unknown name is left to the caller's rendering, which answers it as that caller sees it.
 */
export function queryRunProblem(query: QueryConfig, config: CatalogConfig): string | undefined {
  let checked = checkedAtRun.get(query);
  if (!checked) {
    const error = checkQuery(query, config, allTables(config));
    checked = error && !(error instanceof UnknownNameError) ? { problem: describeProblem(query, error) } : {};
    checkedAtRun.set(query, checked);
  }
  return checked.problem;
}

function describeProblem(query: QueryConfig, error: DialectError): string {
  const at = error.position === undefined ? '' : ` at character ${error.position + 1}`;
  if (error.kind === 'construct') {
    return `query '${query.sqlCode}' uses ${error.message}${at}, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)`;
  }
  return `query '${query.sqlCode}': ${error.message}${at}`;
}

export type { Expr, SelectStatement };
