/**
 * execute-sql: run a registered query of the calling application (docs/interface.md §8). The query is found by
 * `sqlCode` or numeric `id` among the caller's own queries, its `params` are checked against the declared ones,
 * its MySQL 8 text is rendered for the engine as this caller may run it (§19, shared/sql-dialect, loaded on the
 * first query: only the bundles that run custom SQL carry it), each dataset
 * it reads is loaded as the caller may read it (visible fields, row filter), and the statement runs read-only
 * with a time limit. A statement that fails answers `execSuccess: false` inside a successful envelope;
 * everything else about the request is checked like any other operation's.
 */
import type { Caller } from '../access/caller';
import { readableGrant, readableTable, visibleFields } from '../access/permissions';
import type { Catalog } from '../catalog/catalog';
import type { QueryConfig } from '../catalog/schema';
import { CODE_PATTERN } from '../contract/codes';
import { AccessDeniedError, InvalidParameterError } from '../contract/errors';
import type { Operation, OperationContext } from '../operation/operation';
import { formatTimestamp } from '../records/timestamps';
import { DatasetCache } from '../sql/dataset-cache';
import type { DatasetRowSource, DatasetView } from '../sql/dataset-source';
import { type MirrorQueryEngine, registeredMirrorEngine } from '../sql/mirror-engine';
import { type QueryEngine, type ResultRow, type SqlParamValue, SqlStatementError } from '../sql/query-engine';
import { checkQueryParams } from '../sql/query-params';
import { RecordStoreRowSource } from '../sql/record-store-row-source';
import { SqlJsEngine } from '../sql/sqljs-engine';
import type { RenderedQuery } from '../sql-dialect/dialect';
import { type SqlDialect, sqlDialect } from '../sql-dialect/dialect-loader';
import { runOnMirror } from './mirror-statement';

/** A query's time limit when its configuration sets none. */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;
/**
 * What one execute-sql request may take in all: the function's timeout (28 s, lib/stateless-stack.ts; a test
 * checks they agree) less a second for the answer to leave. Nothing a query does may run past it, so a request
 * answers 2001 rather than being cut off by the function's timeout.
 */
export const EXECUTE_SQL_REQUEST_LIMIT_MS = 27_000;
/** Time kept for the engine to load what was read (SQLite takes rows at about 100,000 a second or more). */
export const ENGINE_LOAD_LIMIT_MS = 5_000;
/** Most rows an answer carries; a larger result fails the statement rather than being cut off. */
export const MAX_RESULT_ROWS = 10_000;

export type ExecuteSqlAnswer =
  | { execSuccess: true; execResult: ResultRow[] }
  | { execSuccess: false; execError: string };

export interface ExecuteSqlDependencies {
  /** The container's engine (created on first use). */
  engine: () => QueryEngine;
  /** The container's cache of loaded datasets. */
  cache: DatasetCache;
  /** Where this request's datasets are read from. */
  rowSource: (context: OperationContext) => DatasetRowSource;
  /** MySQL over the mirror, when this process runs custom SQL there (docs/interface.md §20); else embedded. */
  mirror?: () => MirrorQueryEngine | undefined;
}

export function createExecuteSqlOperation(dependencies: ExecuteSqlDependencies): Operation {
  return {
    name: 'execute-sql',
    async run(context, body): Promise<ExecuteSqlAnswer> {
      const { caller, catalog } = context;
      const query = findQuery(catalog, caller.application.appCode, body);
      const params = checkQueryParams(query.params, body.params);
      const dialect = sqlDialect();
      // A query the configuration's check would refuse (one applied by an earlier release) fails as SQL does.
      const problem = dialect.queryRunProblem(query, catalog.config);
      if (problem !== undefined) return { execSuccess: false, execError: problem };
      for (const name of dialect.limitParams(query)) {
        const value = params[name];
        if (typeof value === 'number' && value < 0)
          throw new InvalidParameterError(`parameter '${name}' must be 0 or more (it is a LIMIT)`);
      }
      const mirror = dependencies.mirror?.();
      if (mirror) return runQueryOnMirror(mirror, context, query, params, dialect);
      let rendered: RenderedQuery;
      try {
        rendered = renderForCaller(dialect, catalog, caller, query, context.now());
      } catch (error) {
        // A field or dataset the caller may not read is, to it, one that does not exist.
        if (error instanceof dialect.UnknownNameError) return { execSuccess: false, execError: error.message };
        throw error;
      }
      const views = datasetViews(catalog, caller, query, rendered.tables);
      const begun = context.now();
      const timeoutMs = query.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
      // Loading counts against the query's time limit, and leaves the engine time to take the rows in.
      const loadMs = Math.min(timeoutMs, EXECUTE_SQL_REQUEST_LIMIT_MS - ENGINE_LOAD_LIMIT_MS - 1_000);
      const tables = await dependencies.cache.tables(views, dependencies.rowSource(context), {
        loadLimit: {
          ms: loadMs,
          message:
            `reading the query's data did not finish within ${loadMs} ms, the time this query may spend loading ` +
            `it (its time limit is ${timeoutMs} ms): narrow the data (a smaller dataset or a row filter) or read it ` +
            'page by page with get-list',
        },
      });
      const started = Date.now();
      const elapsed = context.now() - begun;
      // The statement has what is left of the query's limit, and never more than the request can still take.
      const statementMs = Math.max(
        1,
        Math.min(timeoutMs - elapsed, EXECUTE_SQL_REQUEST_LIMIT_MS - ENGINE_LOAD_LIMIT_MS - elapsed),
      );
      try {
        const result = await dependencies.engine().run({
          tables,
          sql: rendered.sql,
          params,
          timeoutMs: statementMs,
          statedLimitMs: timeoutMs,
          maxRows: MAX_RESULT_ROWS,
          lane: caller.application.appCode,
          // Waiting for the application's earlier queries ends with the request: by then it has answered 2001.
          ...(context.deadline === undefined ? {} : { waitLimitMs: Math.max(0, context.deadline - context.now()) }),
        });
        return { execSuccess: true, execResult: result.rows };
      } catch (error) {
        if (error instanceof SqlStatementError) return { execSuccess: false, execError: error.message };
        throw error;
      } finally {
        context.telemetry.metric('sqlDurationMs', Date.now() - started);
      }
    },
  };
}

/**
 * The query on MySQL itself (docs/interface.md §20): checked and narrowed to the caller by the dialect, then run as
 * written, its parameters bound by the driver, its time limit the query's own (waiting for the mirror included).
 */
async function runQueryOnMirror(
  mirror: MirrorQueryEngine,
  context: OperationContext,
  query: QueryConfig,
  params: Record<string, SqlParamValue>,
  dialect: SqlDialect,
): Promise<ExecuteSqlAnswer> {
  const { caller, catalog } = context;
  const startedAt = context.now();
  const timeoutMs = query.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const started = Date.now();
  try {
    const rows = await runOnMirror(mirror, context, dialect, {
      query,
      params,
      options: renderOptions(dialect, catalog, caller, startedAt),
      // A query that lists its datasets may read only those, each readable (1006 otherwise), as on the embedded
      // engine.
      check: (tables) => datasetViews(catalog, caller, query, tables),
      startedAt,
      timeoutMs: Math.min(timeoutMs, EXECUTE_SQL_REQUEST_LIMIT_MS - (context.now() - startedAt)),
      statedLimitMs: timeoutMs,
    });
    return { execSuccess: true, execResult: rows };
  } catch (error) {
    if (error instanceof dialect.UnknownNameError || error instanceof SqlStatementError)
      return { execSuccess: false, execError: error.message };
    throw error;
  } finally {
    context.telemetry.metric('sqlDurationMs', Date.now() - started);
  }
}

/**
 * The registered query the body names: `sqlCode`, or else a numeric `id`. A numeric `sqlCode` (a JSON number, or
 * digits as text when no query has that text code) names the query by its numeric id (docs/interface.md §21).
 * Another application's query is not found, with the same answer as an unknown one, so codes of other
 * applications are not revealed.
 */
export function findQuery(catalog: Catalog, appCode: string, body: Record<string, unknown>): QueryConfig {
  const { sqlCode, id } = body;
  if (sqlCode !== undefined && sqlCode !== null) {
    if (typeof sqlCode === 'number') return queryById(catalog, appCode, sqlCode, 'sqlCode');
    if (typeof sqlCode !== 'string' || !CODE_PATTERN.test(sqlCode)) {
      throw new InvalidParameterError('sqlCode must be 1 to 64 letters, digits, "_" or "-", or a numeric id');
    }
    const query = catalog.query(appCode, { sqlCode });
    if (query) return query;
    const number = /^\d+$/.test(sqlCode) ? Number(sqlCode) : undefined;
    const byId = number !== undefined && number >= 1 ? catalog.query(appCode, { id: number }) : undefined;
    if (byId) return byId;
    throw new InvalidParameterError(
      `query '${sqlCode}' not found${number === undefined ? '' : ' (no query has that code or that numeric id)'}`,
    );
  }
  if (id !== undefined && id !== null) {
    const number = typeof id === 'string' && /^\s*\d+\s*$/.test(id) ? Number(id) : id;
    return queryById(catalog, appCode, number, 'id');
  }
  throw new InvalidParameterError('sqlCode (or a numeric id) is required');
}

function queryById(catalog: Catalog, appCode: string, number: unknown, key: 'id' | 'sqlCode'): QueryConfig {
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidParameterError(
      `${key} must be ${key === 'id' ? 'a positive integer' : 'a code or a positive integer id'}`,
    );
  }
  const query = catalog.query(appCode, { id: number });
  if (!query) throw new InvalidParameterError(`query with id ${number} not found`);
  return query;
}

/**
 * The query in the engine's dialect, as this caller may run it: the datasets and fields it may read, `NOW()` in
 * the configuration's time zone (docs/interface.md §19).
 */
function renderForCaller(
  dialect: SqlDialect,
  catalog: Catalog,
  caller: Caller,
  query: QueryConfig,
  epochMs: number,
): RenderedQuery {
  return dialect.renderQuery(query, renderOptions(dialect, catalog, caller, epochMs));
}

function renderOptions(dialect: SqlDialect, catalog: Catalog, caller: Caller, epochMs: number) {
  const timeZone = catalog.config.timeZone ?? 'UTC';
  return {
    table: (name: string) => {
      const dataset = catalog.dataset(name);
      if (!dataset) return undefined;
      const grant = readableGrant(caller, dataset.datasetCode);
      return dialect.datasetTable(dataset, grant !== undefined, grant ? visibleFields(grant) : undefined);
    },
    timeZone,
    now: { epochMs, local: () => formatTimestamp(new Date(epochMs), timeZone) },
  };
}

/**
 * The datasets the query reads, each as this application may read it. A query that lists its `datasets` gets
 * those, and each must be readable (1006 otherwise). A query that does not gets the datasets its text reads
 * (`read`, as the dialect resolved them: each is readable, or the rendering said it does not exist).
 */
export function datasetViews(
  catalog: Catalog,
  caller: Caller,
  query: QueryConfig,
  read: readonly string[],
): DatasetView[] {
  if (query.datasets) {
    return query.datasets.map((code) => {
      const dataset = catalog.dataset(code);
      const table = dataset && readableTable(caller, dataset);
      if (!table) {
        throw new AccessDeniedError(`application '${caller.application.appCode}' may not read dataset '${code}'`);
      }
      return table;
    });
  }
  return catalog
    .allDatasets()
    .filter((dataset) => read.includes(dataset.datasetCode))
    .flatMap((dataset) => readableTable(caller, dataset) ?? []);
}

let engine: SqlJsEngine | undefined;

/** Where a request's rows come from as deployed: the record store, through the request's own ports and meter. */
export const recordStoreRows = (context: OperationContext): RecordStoreRowSource =>
  new RecordStoreRowSource(
    context.ports.lists,
    context.ports.bookkeeping,
    context.catalog,
    context.telemetry.capacity,
    context.now,
  );

/**
 * The container's SQL engine and dataset cache, rows from the record store: custom SQL and aggregate (which runs
 * on the same engine, docs/interface.md §21) share them, so a process serving both loads a dataset once.
 */
export const containerSql: ExecuteSqlDependencies = {
  engine: () => {
    engine ??= new SqlJsEngine({ loadTimeoutMs: ENGINE_LOAD_LIMIT_MS });
    return engine;
  },
  cache: new DatasetCache(),
  rowSource: recordStoreRows,
  mirror: registeredMirrorEngine,
};

/** The operation as deployed: one engine and one dataset cache per container, rows from the record store. */
export const executeSqlOperation = createExecuteSqlOperation(containerSql);
