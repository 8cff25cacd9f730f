/**
 * aggregate: SUM, AVG, COUNT, MAX and MIN over a dataset's records, grouped, filtered and paged (docs/interface.md
 * §21), on the dataset's SQL engine (§20). The request is checked against the fields the caller's grant shows
 * (aggregate-request.ts), compiled to MySQL 8 text with bound parameters (aggregate-sql.ts), rendered by custom SQL's
 * dialect over the caller's table alone, and run on the container's engine over the copy custom SQL loads of that
 * table: the visible fields and the rows of the grant's row filter, nothing else. What a caller cannot read is
 * therefore neither nameable in the request nor present where the statement runs.
 */

import { readableTable } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import type { QueryConfig } from '../catalog/schema';
import { dataContext, type Operation, type OperationContext } from '../operation/operation';
import { tableColumns } from '../query/get-list';
import { formatTimestamp } from '../records/timestamps';
import type { EngineTable, ResultRow } from '../sql/query-engine';
import { sqlDialect } from '../sql-dialect/dialect-loader';
import { type AggregateRequest, readAggregateRequest } from './aggregate-request';
import { aggregateStatements } from './aggregate-sql';
import { containerSql, EXECUTE_SQL_REQUEST_LIMIT_MS, type ExecuteSqlDependencies } from './execute-sql';

/**
 * What loading the table may take, and each of the two statements: together within what one request may take
 * (EXECUTE_SQL_REQUEST_LIMIT_MS, 27 s, under the function's 28 s), with time left for the engine to take the rows in.
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
      const { dataset, view, catalog, caller } = dataContext(context);
      const request = readAggregateRequest(
        body,
        dataset,
        view.readable ? { readable: view.readable } : {},
        catalog.defaultPageSize,
      );
      const readable = readableTable(caller, dataset);
      // The access step checked the grant for `read`: a table the caller may read exists.
      if (!readable) throw new Error(`no readable table of '${dataset.datasetCode}' after the access step`);
      const statements = aggregateStatements(dataset.datasetCode, request);
      const begun = context.now();
      const tables = await dependencies.cache.tables([readable], dependencies.rowSource(context), {
        loadLimit: {
          ms: AGGREGATE_LOAD_LIMIT_MS,
          message:
            `reading the dataset did not finish within ${AGGREGATE_LOAD_LIMIT_MS} ms, the time an aggregate may spend ` +
            'loading it: narrow the data the grant reaches (a row filter)',
        },
      });
      const run = (sql: string) => runStatement(context, dependencies, dataset, tables, sql, statements, begun);
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

async function runStatement(
  context: OperationContext,
  dependencies: ExecuteSqlDependencies,
  dataset: Dataset,
  tables: readonly EngineTable[],
  sql: string,
  statements: ReturnType<typeof aggregateStatements>,
  begun: number,
): Promise<ResultRow[]> {
  const { caller, catalog, view } = dataContext(context);
  const dialect = sqlDialect();
  const query: QueryConfig = {
    appCode: caller.application.appCode,
    sqlCode: 'aggregate',
    sql,
    params: Object.fromEntries(Object.entries(statements.paramTypes).map(([name, type]) => [name, { type }])),
  };
  const epochMs = context.now();
  const timeZone = catalog.config.timeZone ?? 'UTC';
  const rendered = dialect.renderQuery(query, {
    // Only the request's dataset, as the caller sees it: the statement can name nothing else.
    table: (name) => (name === dataset.datasetCode ? dialect.datasetTable(dataset, true, view.readable) : undefined),
    timeZone,
    now: { epochMs, local: () => formatTimestamp(new Date(epochMs), timeZone) },
  });
  const left = EXECUTE_SQL_REQUEST_LIMIT_MS - (context.now() - begun);
  const result = await dependencies.engine().run({
    tables,
    sql: rendered.sql,
    params: statements.params,
    timeoutMs: Math.max(1, Math.min(AGGREGATE_STATEMENT_LIMIT_MS, left)),
    statedLimitMs: AGGREGATE_STATEMENT_LIMIT_MS,
    lane: caller.application.appCode,
    ...(context.deadline === undefined ? {} : { waitLimitMs: Math.max(0, context.deadline - context.now()) }),
  });
  return result.rows;
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
