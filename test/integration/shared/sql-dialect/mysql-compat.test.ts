/**
 * docs/interface.md §19: the compatibility corpus on the embedded engine. Every query of the corpus is rendered by
 * the dialect module and run by the sql.js worker over the corpus's records; its answer (column names and rows,
 * values and their JSON types) must equal what a real server answered (test/fixtures/mysql-compat-answers.json,
 * produced on MariaDB with MySQL 8's differences named in the corpus; `npm run test:mysql` checks it again).
 * Where MySQL 8 refuses a query, the configuration holding it is refused at load with MySQL 8's message; where
 * MySQL 8 stops one while it runs, the engine fails the statement with MySQL 8's message (the caller's
 * `execError`). Answers that hold the current time are written as comparisons with it, so they do not change
 * from run to run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { datasetColumns, toTableRow } from '../../../../shared/sql/dataset-table';
import { type EngineTable, SqlStatementError } from '../../../../shared/sql/query-engine';
import { SqlJsEngine } from '../../../../shared/sql/sqljs-engine';
import { datasetTable, queryProblems, renderQuery } from '../../../../shared/sql-dialect/dialect';
import { type CorpusAnswer, DATASETS, QUERIES, RECORDS, TIME_ZONE } from '../../../support/mysql-compat/corpus';
import { clock } from '../../../support/statement-clock';

const fixture = JSON.parse(
  readFileSync(path.join(__dirname, '../../../fixtures/mysql-compat-answers.json'), 'utf8'),
) as Record<string, CorpusAnswer>;

const engine = new SqlJsEngine({ threads: 1 });
const tables: EngineTable[] = DATASETS.map((dataset) => ({
  name: dataset.datasetCode,
  key: `${dataset.datasetCode}@corpus`,
  columns: datasetColumns(dataset.fields),
  rows: (RECORDS[dataset.datasetCode] ?? []).map((record) => toTableRow(dataset.fields, record)),
}));
const schema = new Map(DATASETS.map((dataset) => [dataset.datasetCode, datasetTable(dataset)]));

afterAll(() => engine.close());

describe('the MySQL 8 compatibility corpus on the embedded engine', () => {
  it('covers at least 60 queries, each with an answer from the server', () => {
    expect(QUERIES.length).toBeGreaterThanOrEqual(60);
    expect(Object.keys(fixture).sort()).toEqual(QUERIES.map((query) => query.name).sort());
  });

  it.each(QUERIES.map((query) => [query.name, query] as const))('%s', async (name, query) => {
    const registered = { appCode: 'app-compat', sqlCode: 'corpus', sql: query.sql, params: paramsOf(query.params) };
    const expected = fixture[name] as CorpusAnswer;
    const problems = queryProblems({ applications: [], datasets: DATASETS, queries: [registered] } as CatalogConfig);
    if ('refused' in expected) {
      expect(problems).toHaveLength(1);
      expect(problems[0]?.message.replace(/ at character \d+$/, '')).toBe(
        `query 'corpus': ${expected.refused.message}`,
      );
      return;
    }
    expect(problems).toEqual([]);
    const rendered = renderQuery(registered, {
      table: (code) => schema.get(code),
      timeZone: TIME_ZONE,
      now: clock(new Date(), TIME_ZONE),
    });
    const run = engine.run({ tables, sql: rendered.sql, params: query.params ?? {}, timeoutMs: 10_000 });
    if ('error' in expected) {
      await expect(run).rejects.toEqual(
        new SqlStatementError(`MySQL error ${expected.error.code}: ${expected.error.message}`),
      );
      return;
    }
    const result = await run;
    const answer = {
      columns: rendered.columns,
      rows: result.rows.map((row) => rendered.columns.map((column) => row[column])),
    };
    expect(answer).toEqual(expected);
  });
});

function paramsOf(values: Record<string, unknown> | undefined) {
  return Object.fromEntries(
    Object.entries(values ?? {}).map(([name, value]) => [
      name,
      {
        type:
          typeof value === 'boolean'
            ? ('boolean' as const)
            : typeof value === 'number'
              ? ('integer' as const)
              : ('string' as const),
      },
    ]),
  );
}
