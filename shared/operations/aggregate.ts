/**
 * aggregate: SUM, AVG, COUNT, MAX and MIN over a dataset's records, grouped, filtered and paged (docs/interface.md
 * §21), on the dataset's SQL engine (§20). The request is checked against the fields the caller's grant shows
 * (aggregate-request.ts), compiled to MySQL 8 text with bound parameters (aggregate-sql.ts), rendered by custom SQL's
 * dialect over the caller's table alone, and run where custom SQL runs: on the embedded engine over the copy custom
 * SQL loads of that table, or on MySQL over the mirror with the table replaced by the SELECT of what the caller may
 * read (mirror-statement.ts). Either way the visible fields and the rows of the grant's row filter, nothing else:
 * what a caller cannot read is neither nameable in the request nor reachable where the statement runs.
 */

import { readableTable } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import { dataContext, type Operation, type OperationContext } from '../operation/operation';
import { tableColumns } from '../query/get-list';
import { formatTimestamp } from '../records/timestamps';
import type { ResultRow } from '../sql/query-engine';
import { sqlDialect } from '../sql-dialect/dialect-loader';
import { type AggregateRequest, readAggregateRequest } from './aggregate-request';
import { type AggregateStatements, aggregateStatements } from './aggregate-sql';
import { containerSql, EXECUTE_SQL_REQUEST_LIMIT_MS, type ExecuteSqlDependencies } from './execute-sql';
import { type MirrorStatement, runOnMirror } from './mirror-statement';

/**
 * What loading the table may take (embedded engine), and each of the two statements (on MySQL, waiting for the mirror
 * included): together within what one request may take (EXECUTE_SQL_REQUEST_LIMIT_MS, 27 s, under the function's
 * 28 s), with time left for the engine to take the rows in.
 */
export const AGGREGATE_LOAD_LIMIT_MS = 15_000;
export const AGGREGATE_STATEMENT_LIMIT_MS = 5_000;

export interface AggregateAnswer {
  tableData: Record<string, unknown>[];
  paging: { currentPage: number; pageSize: number; totalCount: number };
  tableColumns: { title: string; dataIndex: string }[];
}

export function createAggregateOperation(dependencies: ExecuteSqlDependencies): Operation {
  return {
    name: 'aggregate',
    async run(context, body): Promise<AggregateAnswer> {
      const { dataset, view, catalog } = dataContext(context);
      const request = readAggregateRequest(
        body,
        dataset,
        view.readable ? { readable: view.readable } : {},
        catalog.defaultPageSize,
      );
      const statements = aggregateStatements(dataset.datasetCode, request);
      const begun = context.now();
      const mirror = dependencies.mirror?.();
      const run = mirror
        ? (sql: string) =>
            runOnMirror(mirror, context, sqlDialect(), statementOn(context, dataset, sql, statements, begun))
        : await embeddedRunner(context, dependencies, dataset, statements, begun);
      const [page, count] = [await run(statements.page), await run(statements.count)];
      return {
        tableData: page.map((row) => answerRow(row, request)),
        paging: {
          currentPage: request.paging.currentPage,
          pageSize: request.paging.pageSize,
          totalCount: Number(count[0]?.group_count ?? 0),
        },
        tableColumns: columnsOf(dataset, request),
      };
    },
  };
}

/**
 * The embedded engine's runner: the caller's copy of the table loaded (within AGGREGATE_LOAD_LIMIT_MS), then each
 * statement run on it within AGGREGATE_STATEMENT_LIMIT_MS.
 */
async function embeddedRunner(
  context: OperationContext,
  dependencies: ExecuteSqlDependencies,
  dataset: Dataset,
  statements: AggregateStatements,
  begun: number,
): Promise<(sql: string) => Promise<ResultRow[]>> {
  const readable = readableTable(context.caller, dataset);
  // The access step checked the grant for `read`: a table the caller may read exists.
  if (!readable) throw new Error(`no readable table of '${dataset.datasetCode}' after the access step`);
  const tables = await dependencies.cache.tables([readable], dependencies.rowSource(context), {
    loadLimit: {
      ms: AGGREGATE_LOAD_LIMIT_MS,
      message:
        `reading the dataset did not finish within ${AGGREGATE_LOAD_LIMIT_MS} ms, the time an aggregate may spend ` +
        'loading it: narrow the data the grant reaches (a row filter)',
    },
  });
  return async (sql) => {
    const statement = statementOn(context, dataset, sql, statements, begun);
    const rendered = sqlDialect().renderQuery(statement.query, statement.options);
    const result = await dependencies.engine().run({
      tables,
      sql: rendered.sql,
      params: statements.params,
      timeoutMs: statementLimit(context, begun),
      statedLimitMs: AGGREGATE_STATEMENT_LIMIT_MS,
      lane: context.caller.application.appCode,
      ...(context.deadline === undefined ? {} : { waitLimitMs: Math.max(0, context.deadline - context.now()) }),
    });
    return result.rows;
  };
}

/** What a statement starting now may take: AGGREGATE_STATEMENT_LIMIT_MS, never past what the request may take. */
function statementLimit(context: OperationContext, begun: number): number {
  const left = EXECUTE_SQL_REQUEST_LIMIT_MS - (context.now() - begun);
  return Math.max(1, Math.min(AGGREGATE_STATEMENT_LIMIT_MS, left));
}

/**
 * One of the two statements as a query of the caller's, for either engine: it may name the request's dataset only,
 * as the caller sees it. On MySQL it reads every write acknowledged before the request began, and its limit
 * (statementLimit, from now) is counted from then, waiting for the mirror included.
 */
function statementOn(
  context: OperationContext,
  dataset: Dataset,
  sql: string,
  statements: AggregateStatements,
  begun: number,
): MirrorStatement {
  const { caller, catalog, view } = dataContext(context);
  const dialect = sqlDialect();
  const epochMs = context.now();
  const timeZone = catalog.config.timeZone ?? 'UTC';
  return {
    query: {
      appCode: caller.application.appCode,
      sqlCode: 'aggregate',
      sql,
      params: Object.fromEntries(Object.entries(statements.paramTypes).map(([name, type]) => [name, { type }])),
    },
    params: statements.params,
    options: {
      // Only the request's dataset, as the caller sees it: the statement can name nothing else.
      table: (name) => (name === dataset.datasetCode ? dialect.datasetTable(dataset, true, view.readable) : undefined),
      timeZone,
      now: { epochMs, local: () => formatTimestamp(new Date(epochMs), timeZone) },
    },
    startedAt: begun,
    timeoutMs: epochMs - begun + statementLimit(context, begun),
    statedLimitMs: AGGREGATE_STATEMENT_LIMIT_MS,
  };
}

/** A group as the caller reads it: a boolean groupBy field as true or false, as records carry it. */
function answerRow(row: ResultRow, request: AggregateRequest): Record<string, unknown> {
  const answer: Record<string, unknown> = { ...row };
  for (const field of request.groupBy) {
    const value = row[field.name];
    if (field.type === 'boolean' && value !== null && value !== undefined) answer[field.name] = Number(value) !== 0;
  }
  return answer;
}

/** `{title, dataIndex}` for each groupBy field (its title, as get-list gives it), then each measure by alias. */
function columnsOf(dataset: Dataset, request: AggregateRequest) {
  const titles = new Map(tableColumns(dataset).map((column) => [column.dataIndex, column.title]));
  return [
    ...request.groupBy.map((field) => ({ title: titles.get(field.name) ?? field.name, dataIndex: field.name })),
    ...request.measures.map((measure) => ({ title: measure.alias, dataIndex: measure.alias })),
  ];
}

/** The operation as deployed: the container's SQL engine and dataset cache, shared with custom SQL. */
export const aggregateOperation = createAggregateOperation(containerSql);
