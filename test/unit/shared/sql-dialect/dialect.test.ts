/**
 * docs/interface.md §19 at load: what custom SQL refuses, named, and what it reads as MySQL does (names of result
 * columns, the datasets a query reads, the parameters of its LIMIT). The answers themselves are tested by the
 * compatibility corpus (test/integration/shared/sql-dialect/mysql-compat.test.ts).
 */
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { datasetTable, limitParams, queryProblems, renderQuery } from '../../../../shared/sql-dialect/dialect';
import { clock } from '../../../support/statement-clock';

const dataset = {
  appCode: 'app',
  datasetCode: 'orders',
  fields: [
    { name: 'amount', type: 'number' as const },
    { name: 'status', type: 'string' as const },
    { name: 'placed_at', type: 'datetime' as const },
    { name: 'meta', type: 'json' as const },
  ],
};

function problemOf(sql: string, params: Record<string, { type: 'string' | 'integer' }> = {}): string | undefined {
  const config = {
    applications: [],
    datasets: [dataset],
    queries: [{ appCode: 'app', sqlCode: 'q', sql, params }],
  } as unknown as CatalogConfig;
  return queryProblems(config)[0]?.message;
}

const refused = (construct: string, at?: number) =>
  `query 'q' uses ${construct}${at === undefined ? '' : ` at character ${at}`}, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)`;

describe('the dialect at load', () => {
  it.each([
    ['SELECT SLEEP(1)', refused('the function SLEEP()', 8)],
    ['SELECT BENCHMARK(1, 1)', refused('the function BENCHMARK()', 8)],
    ['SELECT @x', refused('variables (@name)', 8)],
    [
      'UPDATE orders SET amount = 1',
      refused('the statement UPDATE (queries are read-only: SELECT or WITH ... SELECT)', 1),
    ],
    ['WITH RECURSIVE c(x) AS (SELECT 1) SELECT x FROM c', refused('WITH RECURSIVE', 6)],
    ['SELECT amount | 1 FROM orders', refused("the bit operator '|'", 15)],
    ['SELECT status FROM orders GROUP BY status WITH ROLLUP', refused('GROUP BY ... WITH ROLLUP', 43)],
    [
      'SELECT amount FROM orders FOR UPDATE',
      refused('locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)', 27),
    ],
    ["SELECT status || 'x' FROM orders", refused("'||' (write OR, or CONCAT() to join text)", 15)],
    [
      'SELECT a.amount FROM orders a JOIN orders b USING (id)',
      refused('JOIN ... USING (write the join condition with ON)', 45),
    ],
    ["SELECT amount->'$.a' FROM orders", refused("'->' on a value that is not a json field")],
    [
      'SELECT placed_at + 1 FROM orders',
      refused("a datetime used as a number in '+' (use DATEDIFF(), TIMESTAMPDIFF() or DATE_ADD())"),
    ],
    [
      'SELECT STR_TO_DATE(status, #{f}) FROM orders',
      refused('STR_TO_DATE() with a format that is not written in the query'),
    ],
    ['SELECT amount FROM orders LIMIT #{n}', refused('LIMIT #{n}: its parameter must be declared as an integer')],
    ['SELECT 0x41', refused('hexadecimal and bit literals', 8)],
    [
      'SELECT amount FROM orders WHERE id = ?',
      refused("the parameter marker '?' (registered queries use #{name})", 38),
    ],
    ['SELECT COUNT(DISTINCT amount, status) FROM orders', refused('COUNT(DISTINCT ...) of several expressions', 8)],
    ['SELECT nope FROM orders', "query 'q': Unknown column 'nope' in 'field list' at character 8"],
    [
      'SELECT amount FROM invoices',
      "query 'q': Table 'invoices' doesn't exist (no dataset has that code) at character 20",
    ],
    ['SELECT amount FROM', "query 'q': syntax error at the end of the query (a table name expected) at character 19"],
  ])('refuses %s, naming the query and the construct', (sql, message) => {
    expect(problemOf(sql, { f: { type: 'string' }, n: { type: 'string' } })).toBe(message);
  });

  it('accepts an everyday report and names its columns as MySQL does', () => {
    const sql =
      "SELECT DATE_FORMAT(placed_at, '%Y-%m') AS month, COUNT(*), SUM(amount) AS revenue, `status`, meta->>'$.channel' FROM orders WHERE placed_at >= NOW() - INTERVAL 7 DAY GROUP BY month, `status`, meta->>'$.channel'";
    expect(problemOf(sql)).toBeUndefined();
    const rendered = renderQuery(
      { appCode: 'app', sqlCode: 'q', sql },
      {
        table: (name) => (name === 'orders' ? datasetTable(dataset) : undefined),
        timeZone: 'Europe/Paris',
        now: clock(new Date(Date.UTC(2024, 1, 29, 23, 30)), 'Europe/Paris'),
      },
    );
    expect(rendered.columns).toEqual(['month', 'COUNT(*)', 'revenue', 'status', "meta->>'$.channel'"]);
    expect(rendered.tables).toEqual(['orders']);
    // NOW() is the configuration's time zone: 23:30 UTC is already 1 March in Paris.
    expect(rendered.sql).toContain("'2024-03-01 00:30:00'");
  });

  it('lists the parameters bound in LIMIT and OFFSET, in subqueries too', () => {
    const sql = 'SELECT amount FROM (SELECT amount FROM orders LIMIT #{inner}) AS t LIMIT #{n} OFFSET #{skip}';
    expect(limitParams({ appCode: 'app', sqlCode: 'q', sql }).sort()).toEqual(['inner', 'n', 'skip']);
  });
});
