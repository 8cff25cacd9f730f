/**
 * docs/interface.md §19 at load: what custom SQL refuses, named (constructs outside the list, and queries MySQL 8
 * itself refuses under ONLY_FULL_GROUP_BY or in a recursive WITH query), and what it reads as MySQL does (names
 * of result columns, the datasets a query reads, the parameters of its LIMIT, the columns a USING join merges).
 * The answers themselves are tested by the compatibility corpus
 * (test/integration/shared/sql-dialect/mysql-compat.test.ts).
 */
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import {
  datasetTable,
  limitParams,
  queryProblems,
  renderQuery,
  UnknownNameError,
} from '../../../../shared/sql-dialect/dialect';
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

const notGrouped = (number: number, place: string, column: string, at: number) =>
  `query 'q': Expression #${number} of ${place} is not in GROUP BY clause and contains nonaggregated column '${column}' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by at character ${at}`;

const recursiveRefused = (construct: string) => refused(`${construct}`, 16);

describe('the dialect at load', () => {
  it.each([
    ['SELECT SLEEP(1)', refused('the function SLEEP()', 8)],
    ['SELECT BENCHMARK(1, 1)', refused('the function BENCHMARK()', 8)],
    ['SELECT @x', refused('variables (@name)', 8)],
    [
      'UPDATE orders SET amount = 1',
      refused('the statement UPDATE (queries are read-only: SELECT or WITH ... SELECT)', 1),
    ],
    ['SELECT amount | 1 FROM orders', refused("the bit operator '|'", 15)],
    ['SELECT status FROM orders GROUP BY status WITH ROLLUP', refused('GROUP BY ... WITH ROLLUP', 43)],
    [
      'SELECT amount FROM orders FOR UPDATE',
      refused('locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)', 27),
    ],
    ["SELECT status || 'x' FROM orders", refused("'||' (write OR, or CONCAT() to join text)", 15)],
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

  describe("MySQL 8's ONLY_FULL_GROUP_BY", () => {
    it.each([
      ['SELECT status, SUM(amount) FROM orders GROUP BY placed_at', notGrouped(1, 'SELECT list', 'orders.status', 8)],
      [
        'SELECT status FROM orders GROUP BY status HAVING amount > 1',
        notGrouped(1, 'HAVING clause', 'orders.amount', 50),
      ],
      [
        'SELECT status, COUNT(*) FROM orders GROUP BY status ORDER BY placed_at',
        notGrouped(1, 'ORDER BY clause', 'orders.placed_at', 62),
      ],
      [
        'SELECT status, RANK() OVER (PARTITION BY amount) FROM orders GROUP BY status',
        notGrouped(1, "PARTITION BY or ORDER BY clause of window '<unnamed window>'", 'orders.amount', 42),
      ],
      [
        'SELECT status, RANK() OVER w FROM orders GROUP BY status WINDOW w AS (ORDER BY amount)',
        notGrouped(1, "PARTITION BY or ORDER BY clause of window 'w'", 'orders.amount', 80),
      ],
      [
        'SELECT SUM(amount) OVER (), status FROM orders GROUP BY status',
        notGrouped(1, 'SELECT list', 'orders.amount', 12),
      ],
      [
        'SELECT status, (SELECT MAX(i.amount) FROM orders i WHERE i.placed_at = o.placed_at) FROM orders o GROUP BY status',
        notGrouped(2, 'SELECT list', 'o.placed_at', 72),
      ],
      // A constant determines the column it is equal to, and nothing more (status is not a key).
      [
        "SELECT amount FROM orders WHERE status = 'a' GROUP BY status",
        notGrouped(1, 'SELECT list', 'orders.amount', 8),
      ],
      // Through an outer join, an equality determines the NULL-complemented side's column, not its row.
      [
        'SELECT c.amount FROM orders o LEFT JOIN orders c ON c.status = o.status GROUP BY o.id',
        notGrouped(1, 'SELECT list', 'c.amount', 8),
      ],
      [
        'SELECT b.amount FROM orders a JOIN orders b USING (status) GROUP BY a.id',
        notGrouped(1, 'SELECT list', 'b.amount', 8),
      ],
      [
        'SELECT DATE(placed_at) + INTERVAL 1 DAY, COUNT(*) FROM orders GROUP BY DATE(placed_at)',
        notGrouped(1, 'SELECT list', 'orders.placed_at', 13),
      ],
      [
        'SELECT status, COUNT(*) FROM orders',
        "query 'q': In aggregated query without GROUP BY, expression #1 of SELECT list contains nonaggregated column 'orders.status'; this is incompatible with sql_mode=only_full_group_by at character 8",
      ],
    ])('refuses %s as MySQL 8 does', (sql, message) => {
      expect(problemOf(sql)).toBe(message);
    });

    it.each([
      'SELECT id, status, amount, COUNT(*) FROM orders GROUP BY id',
      'SELECT status, COUNT(*) FROM orders GROUP BY 1 ORDER BY status',
      "SELECT status AS s, COUNT(*) FROM orders GROUP BY s HAVING s <> 'x' ORDER BY s",
      'SELECT UPPER(status), COUNT(*) FROM orders GROUP BY UPPER(status) ORDER BY UPPER(status)',
      'SELECT LOWER(status), COUNT(*) FROM orders GROUP BY status',
      "SELECT status, COUNT(*) FROM orders WHERE status = 'open'",
      'SELECT a.id, b.amount FROM orders a JOIN orders b ON b.id = a.id GROUP BY a.id',
      'SELECT b.amount FROM orders a JOIN orders b USING (id) GROUP BY a.id',
      "SELECT o.status, c.status FROM orders o LEFT JOIN orders c ON c.status = 'x' GROUP BY o.id",
      'SELECT d.amount FROM (SELECT id, amount FROM orders) d GROUP BY d.id',
      'SELECT d.status, d.n FROM (SELECT status, COUNT(*) AS n FROM orders GROUP BY status) d GROUP BY d.status',
      'WITH t AS (SELECT id, amount FROM orders) SELECT t.amount FROM t GROUP BY t.id',
      'SELECT status, SUM(amount), RANK() OVER (ORDER BY status) FROM orders GROUP BY status',
      'SELECT status, (SELECT COUNT(*) FROM orders i WHERE i.status = o.status) FROM orders o GROUP BY status',
      'SELECT amount FROM orders ORDER BY placed_at',
    ])('accepts %s, as MySQL 8 does', (sql) => {
      expect(problemOf(sql)).toBeUndefined();
    });
  });

  describe('JOIN ... USING and NATURAL JOIN', () => {
    it.each([
      [
        'SELECT * FROM orders a JOIN orders b USING (nope)',
        "query 'q': Unknown column 'nope' in 'from clause' at character 38",
      ],
      [
        'SELECT * FROM orders a JOIN orders b ON a.id = b.id JOIN orders c USING (status)',
        "query 'q': Column 'status' in from clause is ambiguous at character 67",
      ],
      ['SELECT id FROM orders a JOIN orders b USING (id, ID)', "query 'q': Duplicate column name 'id' at character 39"],
      [
        'SELECT * FROM orders a NATURAL JOIN orders b ON a.id = b.id',
        "query 'q': syntax error at 'ON' (NATURAL JOIN takes no ON) at character 46",
      ],
      [
        'SELECT * FROM orders a NATURAL CROSS JOIN orders b',
        "query 'q': syntax error at 'CROSS' (JOIN expected after NATURAL) at character 32",
      ],
      [
        'SELECT id FROM orders a JOIN orders b ON a.id = b.id',
        "query 'q': Column 'id' is ambiguous (name its table) at character 8",
      ],
    ])('refuses %s', (sql, message) => {
      expect(problemOf(sql)).toBe(message);
    });

    const render = (sql: string, visible?: ReadonlySet<string>) =>
      renderQuery(
        { appCode: 'app', sqlCode: 'q', sql },
        {
          table: (name) => (name === 'orders' ? datasetTable(dataset, true, visible) : undefined),
          timeZone: 'UTC',
          now: clock(new Date(Date.UTC(2024, 1, 29)), 'UTC'),
        },
      );

    it('lists the merged columns first, then each side, and finds a merged column by its name alone', () => {
      expect(problemOf('SELECT id FROM orders a JOIN orders b USING (id)')).toBeUndefined();
      expect(render('SELECT * FROM orders a JOIN orders b USING (status, id)').columns).toEqual([
        'id',
        'status',
        'amount',
        'placed_at',
        'meta',
        'gmt_create',
        'gmt_modified',
        'amount',
        'placed_at',
        'meta',
        'gmt_create',
        'gmt_modified',
      ]);
      expect(render('SELECT * FROM orders a NATURAL JOIN orders b').columns).toEqual([
        'id',
        'amount',
        'status',
        'placed_at',
        'meta',
        'gmt_create',
        'gmt_modified',
      ]);
    });

    it('answers a hidden field named by USING or shared by NATURAL as an unknown column', () => {
      const visible = new Set(['amount', 'placed_at']);
      expect(() => render('SELECT amount FROM orders a JOIN orders b USING (status)', visible)).toThrow(
        new UnknownNameError("Unknown column 'status' in 'from clause'"),
      );
      expect(() => render('SELECT a.amount FROM orders a NATURAL JOIN orders b', visible)).toThrow(
        new UnknownNameError("Unknown column 'status' in 'from clause'"),
      );
      expect(render('SELECT * FROM orders a JOIN orders b USING (id)', visible).columns).toEqual([
        'id',
        'amount',
        'placed_at',
        'gmt_create',
        'gmt_modified',
        'amount',
        'placed_at',
        'gmt_create',
        'gmt_modified',
      ]);
    });
  });

  describe('WITH RECURSIVE', () => {
    it.each([
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c',
        recursiveRefused(
          "UNION DISTINCT in the recursive WITH query 'c' (write UNION ALL, and a condition that ends the recursion)",
        ),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT n + 1 FROM c) SELECT n FROM c',
        recursiveRefused(
          "the recursive WITH query 'c' without SELECTs that do not read it, then SELECTs that do, joined by UNION ALL",
        ),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT COUNT(*) FROM c) SELECT n FROM c',
        recursiveRefused(
          "an aggregate, a window function, GROUP BY, HAVING or DISTINCT in the recursive SELECT of the recursive WITH query 'c'",
        ),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT a.n + 1 FROM c a JOIN c b ON a.n = b.n) SELECT n FROM c',
        recursiveRefused(
          "the recursive WITH query 'c' read more than once in one recursive SELECT, or from a subquery (MySQL 8 refuses both)",
        ),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT amount FROM orders WHERE amount IN (SELECT n FROM c)) SELECT n FROM c',
        recursiveRefused(
          "the recursive WITH query 'c' read more than once in one recursive SELECT, or from a subquery (MySQL 8 refuses both)",
        ),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT c.n + 1 FROM orders o LEFT JOIN c ON c.n = o.amount) SELECT n FROM c',
        refused("the recursive WITH query 'c' on the side of an outer join that may be NULL (MySQL 8 refuses it)", 84),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3 LIMIT 2) SELECT n FROM c',
        recursiveRefused("WITH, ORDER BY or LIMIT around the SELECTs of the recursive WITH query 'c'"),
      ],
      [
        "WITH RECURSIVE c (s) AS (SELECT 'abc' UNION ALL SELECT CONCAT(s, s) FROM c WHERE LENGTH(s) < 10) SELECT s FROM c",
        recursiveRefused(
          "the column 's' of the recursive WITH query 'c' given new text by its recursive SELECT (MySQL 8 keeps the first SELECT's width for it and refuses longer text: carry the column over, or select a field of the same type in both)",
        ),
      ],
      [
        'WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 0.5 FROM c WHERE n < 3) SELECT n FROM c',
        recursiveRefused(
          "the column 'n' of the recursive WITH query 'c' given a decimal by its recursive SELECT where its first SELECT gives an integer",
        ),
      ],
    ])('refuses %s', (sql, message) => {
      expect(problemOf(sql)).toBe(message);
    });

    it('accepts a walk that carries text over or reads a field of the same type, and reads its columns', () => {
      const walk =
        'WITH RECURSIVE c (id, status, depth) AS (SELECT id, status, 0 FROM orders WHERE amount > 1 UNION ALL SELECT o.id, o.status, c.depth + 1 FROM c JOIN orders o ON o.status = c.id) SELECT * FROM c';
      expect(problemOf(walk)).toBeUndefined();
      expect(
        problemOf(
          'WITH RECURSIVE c (n, s) AS (SELECT 1, status FROM orders UNION ALL SELECT n + 1, s FROM c WHERE n < 3) SELECT * FROM c',
        ),
      ).toBeUndefined();
      const rendered = renderQuery(
        { appCode: 'app', sqlCode: 'q', sql: walk },
        {
          table: (name) => (name === 'orders' ? datasetTable(dataset) : undefined),
          timeZone: 'UTC',
          now: clock(new Date(Date.UTC(2024, 1, 29)), 'UTC'),
        },
      );
      expect(rendered.columns).toEqual(['id', 'status', 'depth']);
      expect(rendered.tables).toEqual(['orders']);
    });
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
