/**
 * One statement of MySQL 8 text on MySQL itself, over the mirror (docs/interface.md §20), as custom SQL and aggregate
 * both run it: checked and rendered by the dialect for the caller, each dataset it reads replaced by the SELECT of
 * what that caller may read (sql/mirror-scope.ts: its visible columns, the rows of its row filter), so nothing else
 * is reachable by construction; then run as written, its parameters bound by the driver, after the mirror holds
 * every write acknowledged before `startedAt`, with its time limit enforced by the server and its result bounded.
 */
import { readableTable } from '../access/permissions';
import type { QueryConfig } from '../catalog/schema';
import { AccessDeniedError } from '../contract/errors';
import type { OperationContext } from '../operation/operation';
import type { MirrorQueryEngine } from '../sql/mirror-engine';
import { mirrorSource } from '../sql/mirror-scope';
import type { ResultRow, SqlParamValue } from '../sql/query-engine';
import type { RenderOptions } from '../sql-dialect/dialect';
import type { SqlDialect } from '../sql-dialect/dialect-loader';

/** Most bytes of rows an answer from MySQL carries (docs/interface.md §7's 10 MB, less the envelope's room). */
export const MAX_RESULT_BYTES = 10 * 1024 * 1024 - 4 * 1024;

export interface MirrorStatement {
  query: QueryConfig;
  params: Record<string, SqlParamValue>;
  /** The datasets the caller may name, as it sees them (the dialect's check and rendering). */
  options: RenderOptions;
  /** Sees the datasets the rendered statement reads before it runs; may refuse them by throwing. */
  check?: (datasets: readonly string[]) => void;
  /** When the request started (epoch ms): the mirror must hold every write acknowledged before then. */
  startedAt: number;
  /** Time from `startedAt` the statement may take in all, waiting for the mirror included. */
  timeoutMs: number;
  /** The limit a message names. */
  statedLimitMs: number;
}

/**
 * The statement's rows. Throws the dialect's `UnknownNameError` for a name the caller may not see,
 * `AccessDeniedError` (1006) for a dataset it may not read, `SqlStatementError` when MySQL fails the statement,
 * `QueryTimeoutError` (2001) past its limit, `InvalidParameterError` (1001) past the response's size.
 */
export async function runOnMirror(
  mirror: MirrorQueryEngine,
  context: OperationContext,
  dialect: SqlDialect,
  statement: MirrorStatement,
): Promise<ResultRow[]> {
  const { caller, catalog } = context;
  const rendered = dialect.renderMysqlQuery(statement.query, statement.options, (code) => {
    const dataset = catalog.dataset(code);
    const view = dataset && readableTable(caller, dataset);
    if (!dataset || !view)
      throw new AccessDeniedError(`application '${caller.application.appCode}' may not read dataset '${code}'`);
    return mirrorSource(mirror.database, view, dataset);
  });
  statement.check?.(rendered.tables);
  const result = await mirror.run({
    sql: rendered.sql,
    values: rendered.params.map((name) => statement.params[name] ?? null),
    datasets: rendered.tables,
    timeZone: catalog.config.timeZone ?? 'UTC',
    startedAt: statement.startedAt,
    timeoutMs: Math.max(1, statement.timeoutMs),
    statedLimitMs: statement.statedLimitMs,
    maxBytes: MAX_RESULT_BYTES,
  });
  return result.rows;
}
