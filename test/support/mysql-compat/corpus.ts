/**
 * The compatibility corpus of custom SQL (docs/interface.md §19): datasets, records (NULLs, mixed case, leap
 * days, decimals, JSON) and queries that cover every accepted construct. The expected answers are in
 * test/fixtures/mysql-compat-answers.json, produced by a real server (`npx tsx test/mysql/mysql-corpus.ts
 * --write` runs the corpus on MariaDB); `npm test` checks the embedded engine against them and
 * `npm run test:mysql` checks them against MariaDB again.
 *
 * An answer is rows, or MySQL 8's error: `refused` when MySQL 8 refuses the statement (custom SQL refuses the
 * configuration at load, with that message), `error` when it stops it while it runs (custom SQL answers
 * `execSuccess: false` with that message).
 *
 * Where MariaDB and MySQL 8 answer differently, the fixture holds MySQL 8's answer and the entry says why, in
 * `mysql8`: the query MariaDB runs to give MySQL 8's answer (`sql`), the columns that hold JSON, which MySQL 8
 * prints normalised (`jsonColumns`, re-printed by MySQL 8's rule: keys by length then bytes), or MySQL 8's error
 * where MariaDB's differs (`refused`, `error`: see MySql8Error).
 */
import type { DatasetConfig } from '../../../shared/catalog/schema';

/**
 * An error MySQL 8 gives: its code and its message (a column named by its table alone: custom SQL has no
 * database name, where MySQL 8 puts it first). `mariadb` says what MariaDB does with the same query: fails with
 * the same code (`same code`, its message differs), warns with that code and answers the rows so far (a number),
 * or answers (`answers`).
 */
export interface MySql8Error {
  code: number;
  message: string;
  mariadb: 'same code' | 'answers' | { warning: number };
}

export interface CorpusQuery {
  name: string;
  sql: string;
  params?: Record<string, string | number | boolean | null>;
  /**
   * A difference between MariaDB and MySQL 8, named: `sql` is what MariaDB runs to answer as MySQL 8 does,
   * `jsonColumns` are the columns holding JSON, which MySQL 8 prints normalised, and `refused` or `error` is
   * MySQL 8's error for the query.
   */
  mysql8?: { why: string; sql?: string; jsonColumns?: number[]; refused?: MySql8Error; error?: MySql8Error };
}

/** A query's answer: its columns and rows, or MySQL 8's error (see CorpusQuery.mysql8). */
export type CorpusAnswer =
  | { columns: string[]; rows: unknown[][] }
  | { refused: { code: number; message: string } }
  | { error: { code: number; message: string } };

export const TIME_ZONE = 'UTC';

export const DATASETS: DatasetConfig[] = [
  {
    appCode: 'app-compat',
    datasetCode: 'orders',
    fields: [
      { name: 'customer', type: 'string' },
      { name: 'region', type: 'enum', options: ['EU', 'eu', 'US', 'APAC'] },
      { name: 'amount', type: 'number' },
      { name: 'quantity', type: 'integer' },
      { name: 'paid', type: 'boolean' },
      { name: 'placed_at', type: 'datetime' },
      { name: 'ship_day', type: 'date' },
      { name: 'meta', type: 'json' },
      { name: 'note', type: 'text' },
    ],
  },
  {
    appCode: 'app-compat',
    datasetCode: 'customers',
    fields: [
      { name: 'name', type: 'string' },
      { name: 'country', type: 'string' },
      { name: 'tier', type: 'integer' },
    ],
  },
];

const stamp = { gmt_create: '2024-01-01 09:00:00', gmt_modified: '2024-01-02 10:30:00' };

export const RECORDS: Record<string, Record<string, unknown>[]> = {
  orders: [
    {
      id: 'o01',
      customer: 'Alice',
      region: 'EU',
      amount: 19.99,
      quantity: 3,
      paid: true,
      placed_at: '2024-02-29 10:15:30',
      ship_day: '2024-02-29',
      meta: { channel: 'web', tags: ['a', 'b'], n: 5 },
      note: 'First order',
      ...stamp,
    },
    {
      id: 'o02',
      customer: 'alice',
      region: 'eu',
      amount: 5.01,
      quantity: 1,
      paid: false,
      placed_at: '2024-03-01 00:00:00',
      ship_day: '2024-03-04',
      meta: { channel: 'Shop', n: 2.5 },
      note: null,
      ...stamp,
    },
    {
      id: 'o03',
      customer: 'BOB',
      region: 'US',
      amount: 100,
      quantity: 10,
      paid: true,
      placed_at: '2023-12-31 23:59:59',
      ship_day: '2024-01-01',
      meta: { channel: 'web', vip: true },
      note: 'rush',
      ...stamp,
    },
    {
      id: 'o04',
      customer: 'bob',
      region: 'US',
      amount: 0.1,
      quantity: null,
      paid: null,
      placed_at: '2023-02-28 08:00:00',
      ship_day: '2023-03-01',
      meta: null,
      note: 'Rush',
      ...stamp,
    },
    {
      id: 'o05',
      customer: 'Émile',
      region: 'APAC',
      amount: 1234.5,
      quantity: 7,
      paid: true,
      placed_at: '2021-01-03 12:00:00',
      ship_day: '2021-01-01',
      meta: { channel: 'phone', tags: [] },
      note: 'café',
      ...stamp,
    },
    {
      id: 'o06',
      customer: null,
      region: null,
      amount: null,
      quantity: 2,
      paid: false,
      placed_at: null,
      ship_day: null,
      meta: { channel: null },
      note: '',
      ...stamp,
    },
    {
      id: 'o07',
      customer: 'Carol_2',
      region: 'EU',
      amount: -7.25,
      quantity: -4,
      paid: true,
      placed_at: '2024-12-30 06:05:04',
      ship_day: '2024-12-31',
      meta: { channel: 'web', n: -1 },
      note: '  padded  ',
      ...stamp,
    },
    {
      id: 'o08',
      customer: 'dave',
      region: 'APAC',
      amount: 0.2,
      quantity: 5,
      paid: false,
      placed_at: '2020-02-29 23:00:00',
      ship_day: '2020-02-29',
      meta: { channel: 'WEB', tags: ['b'] },
      note: '100% sure',
      ...stamp,
    },
  ],
  customers: [
    { id: 'c1', name: 'Alice', country: 'FR', tier: 1, ...stamp },
    { id: 'c2', name: 'Bob', country: 'us', tier: 2, ...stamp },
    { id: 'c3', name: 'Émile', country: 'FR', tier: null, ...stamp },
    { id: 'c4', name: 'Zed', country: null, tier: 3, ...stamp },
  ],
};

const JSON_FORMAT =
  'MariaDB keeps a JSON value as its text and prints it as stored; MySQL 8 stores it as a document and prints it normalised (keys by length, then bytes; ", " and ": ")';
const ARROWS =
  'MariaDB has no -> / ->> operators; MySQL 8 defines them as JSON_EXTRACT() and JSON_UNQUOTE(JSON_EXTRACT())';
const NO_DEPENDENCE =
  "MariaDB's ONLY_FULL_GROUP_BY detects no functional dependence and refuses it ('... isn't in GROUP BY'); MySQL 8 accepts it";
const DEPENDENT_COLUMNS_GROUPED =
  'with the dependent columns added to GROUP BY, which splits no group, MariaDB gives the same answer';
const GROUP_MESSAGE = 'MariaDB refuses it with the same error code and a shorter message';
const ONLY_FULL_GROUP_BY = 'this is incompatible with sql_mode=only_full_group_by';
const RECURSION_LIMIT: MySql8Error = {
  code: 3636,
  message: 'Recursive query aborted after 1001 iterations. Try increasing @@cte_max_recursion_depth to a larger value.',
  mariadb: { warning: 1931 },
};
const RECURSION_WHY =
  'MariaDB stops a recursion past max_recursive_iterations (1000, as set here) with warning 1931 and answers the rows so far; MySQL 8 stops it past cte_max_recursion_depth (1000) with error 3636';

const JSON_TEXT_WHY =
  'MariaDB answers NULL with a warning for text that is not JSON; MySQL 8 fails with error 3141, saying why and where (its parser is RapidJSON)';

export const QUERIES: CorpusQuery[] = [
  // Syntax.
  { name: 'backtick names', sql: 'SELECT `id`, `customer` AS `who` FROM `orders` ORDER BY `id` LIMIT 3' },
  { name: 'limit offset, count', sql: 'SELECT id FROM orders ORDER BY id LIMIT 2, 3' },
  { name: 'limit count offset', sql: 'SELECT id FROM orders ORDER BY id LIMIT 3 OFFSET 5' },
  {
    name: 'limit parameters',
    sql: 'SELECT id FROM orders ORDER BY id LIMIT #{n} OFFSET #{skip}',
    params: { n: 2, skip: 1 },
  },
  {
    name: 'div and mod',
    sql: 'SELECT id, quantity DIV 3, quantity MOD 3, quantity % 4, MOD(amount, 3), amount DIV 2 FROM orders ORDER BY id',
  },
  {
    name: 'integer division by zero',
    sql: "SELECT 7 / 0, 7 DIV 0, 7 % 0, MOD(7, 0), quantity / 0 FROM orders WHERE id = 'o01'",
  },
  {
    name: 'division is decimal',
    sql: 'SELECT 7 / 2, 1 / 3, 2 / 3, quantity / 4, 10.5 / 4, amount / 4 FROM orders ORDER BY id',
  },
  {
    name: 'null-safe equality',
    sql: "SELECT id, quantity <=> NULL, paid <=> 1, customer <=> 'ALICE' FROM orders ORDER BY id",
  },
  {
    name: 'regexp',
    sql: "SELECT id, customer REGEXP '^a', customer REGEXP 'b$', note NOT REGEXP '[0-9]' FROM orders ORDER BY id",
  },
  {
    name: 'plus interval',
    sql: 'SELECT id, placed_at + INTERVAL 1 DAY, ship_day + INTERVAL 1 MONTH, ship_day - INTERVAL 1 YEAR, INTERVAL 2 HOUR + placed_at FROM orders ORDER BY id',
  },
  {
    name: 'case',
    sql: "SELECT id, CASE region WHEN 'eu' THEN 'Europe' WHEN 'US' THEN 'America' ELSE 'other' END AS area, CASE WHEN amount > 100 THEN 'big' WHEN amount > 1 THEN 'mid' END AS size FROM orders ORDER BY id",
  },
  {
    name: 'in between like',
    sql: "SELECT id FROM orders WHERE region IN ('eu', 'apac') AND amount BETWEEN 0 AND 1000 AND customer LIKE '%a%' ORDER BY id",
  },
  {
    name: 'not in, not between, not like',
    sql: "SELECT id FROM orders WHERE region NOT IN ('US') AND quantity NOT BETWEEN 2 AND 4 AND note NOT LIKE 'r%' ORDER BY id",
  },
  {
    name: 'like escapes and percent',
    sql: "SELECT id FROM orders WHERE note LIKE '%\\%%' OR customer LIKE 'carol\\_%' OR note LIKE 'caf_' ORDER BY id",
  },
  {
    name: 'scalar and IN subqueries',
    sql: 'SELECT id, (SELECT MAX(amount) FROM orders) AS top FROM orders WHERE customer IN (SELECT name FROM customers) ORDER BY id',
  },
  {
    name: 'correlated exists',
    sql: 'SELECT c.name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.name AND o.paid = 1) ORDER BY c.id',
  },
  {
    name: 'derived table',
    sql: 'SELECT t.region, t.n FROM (SELECT region, COUNT(*) AS n FROM orders GROUP BY region) AS t WHERE t.n > 1 ORDER BY t.region',
  },
  {
    name: 'with',
    sql: 'WITH big AS (SELECT id, amount FROM orders WHERE amount > 10), small AS (SELECT id FROM orders WHERE amount < 1) SELECT (SELECT COUNT(*) FROM big) AS big, (SELECT COUNT(*) FROM small) AS small',
  },
  {
    name: 'union removes duplicates under the collation',
    sql: "SELECT customer FROM orders WHERE customer LIKE 'a%' UNION SELECT name FROM customers WHERE name = 'alice' ORDER BY 1",
  },
  {
    name: 'union all',
    sql: "SELECT id, amount FROM orders WHERE id < 'o03' UNION ALL SELECT id, tier FROM customers ORDER BY id",
  },
  {
    name: 'joins',
    sql: 'SELECT o.id, c.name, c.country FROM orders o JOIN customers c ON c.name = o.customer ORDER BY o.id, c.id',
  },
  {
    name: 'left and right joins',
    sql: 'SELECT c.name, COUNT(o.id) AS orders FROM customers c LEFT JOIN orders o ON o.customer = c.name GROUP BY c.id, c.name ORDER BY c.id',
  },
  {
    name: 'right join and cross join',
    sql: 'SELECT COUNT(*) AS pairs, (SELECT COUNT(*) FROM orders o RIGHT JOIN customers c ON o.customer = c.name) AS r FROM orders CROSS JOIN customers',
  },
  {
    name: 'window functions',
    sql: 'SELECT id, region, ROW_NUMBER() OVER (PARTITION BY region ORDER BY id) AS rn, RANK() OVER (ORDER BY quantity DESC) AS rk, DENSE_RANK() OVER (ORDER BY paid) AS dr FROM orders ORDER BY id',
  },
  {
    name: 'window aggregates and frames',
    sql: 'SELECT id, SUM(quantity) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s2, AVG(quantity) OVER (PARTITION BY paid) AS avg_q, COUNT(*) OVER w AS running FROM orders WINDOW w AS (ORDER BY id) ORDER BY id',
  },
  {
    name: 'lag, lead and first_value',
    sql: "SELECT id, LAG(amount) OVER (ORDER BY id) AS prev, LEAD(customer, 2) OVER (ORDER BY id) AS next2, LEAD(id, 1, 'none') OVER (ORDER BY id) AS next_id, FIRST_VALUE(id) OVER (PARTITION BY region ORDER BY id) AS first_id FROM orders ORDER BY id",
    mysql8: {
      why: "MariaDB's LAG/LEAD take no default value; MySQL 8's answers the default past the window's end (id is never NULL, so COALESCE gives the same)",
      sql: "SELECT id, LAG(amount) OVER (ORDER BY id) AS prev, LEAD(customer, 2) OVER (ORDER BY id) AS next2, COALESCE(LEAD(id, 1) OVER (ORDER BY id), 'none') AS next_id, FIRST_VALUE(id) OVER (PARTITION BY region ORDER BY id) AS first_id FROM orders ORDER BY id",
    },
  },
  {
    name: 'last_value with a frame and ntile',
    sql: 'SELECT id, LAST_VALUE(id) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS last_id, NTILE(3) OVER (ORDER BY id) AS third FROM orders ORDER BY id',
  },
  {
    name: 'percent_rank and cume_dist',
    sql: "SELECT id, PERCENT_RANK() OVER (ORDER BY id) AS pr, CUME_DIST() OVER (ORDER BY quantity) AS cd FROM orders WHERE id <= 'o05' ORDER BY id",
  },
  {
    name: 'json arrows',
    sql: "SELECT id, meta->'$.channel', meta->>'$.channel' AS ch, meta->'$.tags[0]' AS t0, meta->>'$.n' AS n FROM orders ORDER BY id",
    mysql8: {
      why: `${ARROWS}; ${JSON_FORMAT}`,
      sql: "SELECT id, JSON_EXTRACT(meta, '$.channel') AS `meta->'$.channel'`, JSON_UNQUOTE(JSON_EXTRACT(meta, '$.channel')) AS ch, JSON_EXTRACT(meta, '$.tags[0]') AS t0, JSON_UNQUOTE(JSON_EXTRACT(meta, '$.n')) AS n FROM orders ORDER BY id",
      jsonColumns: [1, 3],
    },
  },
  {
    name: 'json arrow in WHERE compares in binary',
    sql: "SELECT id FROM orders WHERE meta->>'$.channel' = 'web' ORDER BY id",
    mysql8: {
      why: `${ARROWS}; JSON_UNQUOTE() answers utf8mb4_bin text in MySQL 8, so 'WEB' is not 'web'`,
      sql: "SELECT id FROM orders WHERE JSON_UNQUOTE(JSON_EXTRACT(meta, '$.channel')) = 'web' COLLATE utf8mb4_bin ORDER BY id",
    },
  },

  // Dates and times.
  {
    name: 'now and current timestamp',
    sql: "SELECT NOW() > '2024-01-01', CHAR_LENGTH(NOW()), TIMESTAMPDIFF(SECOND, NOW(), CURRENT_TIMESTAMP) AS same, DATE(NOW()) = CURDATE(), CURRENT_DATE = CURDATE()",
  },
  {
    name: 'date parts',
    sql: 'SELECT id, DATE(placed_at), TIME(placed_at), YEAR(placed_at), QUARTER(placed_at), MONTH(ship_day), DAY(ship_day), DAYOFMONTH(placed_at), HOUR(placed_at), MINUTE(placed_at), SECOND(placed_at) FROM orders ORDER BY id',
  },
  {
    name: 'weekdays',
    sql: 'SELECT id, DAYOFWEEK(ship_day), WEEKDAY(ship_day), LAST_DAY(ship_day), LAST_DAY(placed_at) FROM orders ORDER BY id',
  },
  {
    name: 'week modes 0 to 3',
    sql: 'SELECT id, WEEK(ship_day), WEEK(ship_day, 0), WEEK(ship_day, 1), WEEK(ship_day, 2), WEEK(ship_day, 3) FROM orders ORDER BY id',
  },
  {
    name: 'week modes 4 to 7',
    sql: 'SELECT id, WEEK(ship_day, 4), WEEK(ship_day, 5), WEEK(ship_day, 6), WEEK(ship_day, 7) FROM orders ORDER BY id',
  },
  {
    name: 'date_format numeric specifiers',
    sql: "SELECT id, DATE_FORMAT(placed_at, '%Y-%m-%d %H:%i:%s'), DATE_FORMAT(placed_at, '%y %c %e %k %l %h %I %j %f %T %r %p %S %%') FROM orders ORDER BY id",
  },
  {
    name: 'date_format names and weeks',
    sql: "SELECT id, DATE_FORMAT(ship_day, '%a %b %D %M %W %w'), DATE_FORMAT(ship_day, '%U %u %V %v %X %x %q') FROM orders ORDER BY id",
  },
  {
    name: 'revenue by month',
    sql: "SELECT DATE_FORMAT(placed_at, '%Y-%m') AS month, COUNT(*) AS orders, SUM(amount) AS revenue FROM orders WHERE placed_at IS NOT NULL GROUP BY month ORDER BY month",
  },
  {
    name: 'str_to_date',
    sql: "SELECT STR_TO_DATE('29/02/2024', '%d/%m/%Y'), STR_TO_DATE('2024-13-01', '%Y-%m-%d'), STR_TO_DATE('March 5, 2021 14:30', '%M %e, %Y %H:%i'), STR_TO_DATE('07:05:09 PM', '%r'), STR_TO_DATE('24-1-9', '%y-%c-%e')",
  },
  {
    name: 'date_add units',
    sql: 'SELECT id, DATE_ADD(placed_at, INTERVAL 90 SECOND), DATE_ADD(placed_at, INTERVAL 61 MINUTE), DATE_ADD(ship_day, INTERVAL 25 HOUR), DATE_ADD(ship_day, INTERVAL 2 WEEK), DATE_ADD(ship_day, INTERVAL 1 QUARTER), DATE_ADD(ship_day, INTERVAL -1 YEAR) FROM orders ORDER BY id',
  },
  {
    name: 'date_sub, adddate, subdate',
    sql: 'SELECT id, DATE_SUB(placed_at, INTERVAL 1 MONTH), ADDDATE(ship_day, 30), ADDDATE(ship_day, INTERVAL 1 DAY), SUBDATE(ship_day, 1), SUBDATE(placed_at, INTERVAL 1 HOUR) FROM orders ORDER BY id',
  },
  {
    name: 'month ends and leap days',
    sql: "SELECT DATE_ADD('2024-01-31', INTERVAL 1 MONTH), DATE_ADD('2023-01-31', INTERVAL 1 MONTH), DATE_ADD('2024-02-29', INTERVAL 1 YEAR), DATE_SUB('2024-03-31', INTERVAL 1 MONTH), DATE_ADD('2024-02-28 23:59:59', INTERVAL 1 SECOND)",
  },
  {
    name: 'datediff and timestampdiff',
    sql: "SELECT id, DATEDIFF(ship_day, placed_at), TIMESTAMPDIFF(DAY, placed_at, '2024-06-01'), TIMESTAMPDIFF(MONTH, placed_at, '2024-06-01'), TIMESTAMPDIFF(YEAR, ship_day, '2025-02-28'), TIMESTAMPDIFF(HOUR, placed_at, ship_day), TIMESTAMPDIFF(QUARTER, ship_day, '2024-12-31'), TIMESTAMPDIFF(WEEK, ship_day, '2024-12-31'), TIMESTAMPDIFF(MINUTE, ship_day, placed_at) FROM orders ORDER BY id",
  },
  {
    name: 'unix time',
    sql: "SELECT id, UNIX_TIMESTAMP(placed_at), FROM_UNIXTIME(UNIX_TIMESTAMP(ship_day)), FROM_UNIXTIME(1709201730, '%Y %M %d %H:%i') FROM orders ORDER BY id",
  },
  {
    name: 'unix time now',
    sql: 'SELECT UNIX_TIMESTAMP() - UNIX_TIMESTAMP(NOW()) AS d, FROM_UNIXTIME(0), FROM_UNIXTIME(1.5)',
  },
  {
    name: 'dates compare with text and datetimes',
    sql: "SELECT id FROM orders WHERE ship_day >= '2024-01-01' AND placed_at < '2024-12-30 06:05:04' AND ship_day <> placed_at ORDER BY id",
  },
  {
    name: 'date equals datetime at midnight',
    sql: "SELECT id, ship_day = DATE(placed_at), placed_at = '2024-03-01', ship_day BETWEEN '2024-01-01' AND '2024-03-01' FROM orders ORDER BY id",
  },

  // Strings.
  {
    name: 'concat is null when one part is',
    sql: "SELECT id, CONCAT(customer, '-', region), CONCAT(customer, ' x', quantity), CONCAT('amount ', amount), CONCAT(paid, '') FROM orders ORDER BY id",
  },
  {
    name: 'concat decimals keep their scale',
    sql: "SELECT CONCAT(1.50, '|', 7 / 2, '|', 2.0 * 3, '|', 1e3, '|', 0.1 + 0.2, '|', -0.0)",
  },
  {
    name: 'concat_ws skips nulls',
    sql: "SELECT id, CONCAT_WS(', ', customer, region, note), CONCAT_WS(NULL, customer) FROM orders ORDER BY id",
  },
  {
    name: 'substring forms',
    sql: 'SELECT id, SUBSTRING(customer, 2), SUBSTRING(customer, 2, 3), SUBSTR(customer, -3), MID(customer, 1, 2), SUBSTRING(customer FROM 2 FOR 2), SUBSTRING(customer, 0), SUBSTRING(customer, 2, -1) FROM orders ORDER BY id',
  },
  {
    name: 'left, right, lengths',
    sql: 'SELECT id, LEFT(customer, 3), RIGHT(customer, 2), LENGTH(customer), CHAR_LENGTH(customer), LENGTH(note), LEFT(customer, -1) FROM orders ORDER BY id',
  },
  {
    name: 'upper, lower, reverse, repeat',
    sql: "SELECT id, UPPER(customer), LOWER(customer), REVERSE(customer), REPEAT(region, 2), REPEAT('x', 0) FROM orders ORDER BY id",
  },
  {
    name: 'trims',
    sql: "SELECT id, CONCAT('[', TRIM(note), ']'), CONCAT('[', LTRIM(note), ']'), CONCAT('[', RTRIM(note), ']'), TRIM(BOTH 'a' FROM 'aabaa'), TRIM(LEADING 'ab' FROM 'ababc'), TRIM(TRAILING 'x' FROM 'axx') FROM orders ORDER BY id",
  },
  {
    name: 'pads',
    sql: "SELECT id, LPAD(customer, 7, '*'), RPAD(customer, 3, '-'), LPAD(quantity, 4, '0'), RPAD('a', 5, 'xy'), LPAD('abc', 5, '') FROM orders ORDER BY id",
  },
  {
    name: 'replace, locate, instr',
    sql: "SELECT id, REPLACE(customer, 'a', 'A'), LOCATE('B', customer), LOCATE('o', 'foo boo', 3), INSTR(customer, 'LI'), LOCATE('', customer) FROM orders ORDER BY id",
  },
  {
    name: 'format',
    sql: 'SELECT id, FORMAT(amount, 2), FORMAT(amount * 1000, 0), FORMAT(quantity, 3), FORMAT(1234567.891, 1), FORMAT(0.5, 0), FORMAT(-1234.567, 2) FROM orders ORDER BY id',
  },

  // Numbers and control.
  {
    name: 'round and truncate',
    sql: 'SELECT id, ROUND(amount), ROUND(amount, 1), ROUND(quantity, -1), TRUNCATE(amount, 1), TRUNCATE(quantity / 3, 2), ROUND(2.5), ROUND(-2.5), ROUND(2.5e0), ROUND(1.005, 2) FROM orders ORDER BY id',
  },
  {
    name: 'floor, ceil, abs, pow',
    sql: 'SELECT id, FLOOR(amount), CEIL(amount), CEILING(quantity / 4), ABS(amount), ABS(quantity), POW(quantity, 2), POW(2, 0.5) FROM orders ORDER BY id',
  },
  {
    name: 'greatest and least',
    sql: "SELECT id, GREATEST(quantity, 3), LEAST(amount, quantity), GREATEST(customer, 'b'), LEAST('B', 'a', 'C'), GREATEST(ship_day, '2024-01-01') FROM orders ORDER BY id",
  },
  {
    name: 'if, ifnull, nullif, coalesce',
    sql: "SELECT id, IF(paid, 'yes', 'no'), IFNULL(quantity, 0), IFNULL(customer, 'n/a'), NULLIF(region, 'EU'), COALESCE(note, customer, 'none'), IF(quantity > 2, quantity, 'few') FROM orders ORDER BY id",
  },
  {
    name: 'casts',
    sql: "SELECT id, CAST(amount AS SIGNED), CAST(amount AS DECIMAL(8,1)), CAST(quantity AS CHAR), CAST(placed_at AS DATE), CAST(ship_day AS DATETIME), CAST('12abc' AS SIGNED), CAST(amount AS DECIMAL(4,2)) FROM orders ORDER BY id",
  },
  {
    name: 'cast unsigned and decimal defaults',
    sql: "SELECT CAST(5 AS UNSIGNED), CAST('2024-02-29' AS DATE), CAST('2024-02-30' AS DATE), CAST(2.5 AS DECIMAL), CAST('1.255' AS DECIMAL(5,2))",
  },
  {
    name: 'arithmetic types',
    sql: 'SELECT id, quantity * 2, quantity * 1.5, amount * 2, amount + quantity, 0.1 + 0.2, 0.1e0 + 0.2e0, quantity - 0.25, -quantity FROM orders ORDER BY id',
  },
  {
    name: 'booleans and logic',
    sql: 'SELECT id, paid AND quantity > 2, paid OR quantity > 2, paid XOR quantity > 2, NOT paid, paid IS TRUE, paid IS NOT FALSE, quantity IS NULL FROM orders ORDER BY id',
  },
  {
    name: 'text against numbers',
    sql: "SELECT id FROM orders WHERE quantity = '3' OR amount > '1000' OR '10' = quantity ORDER BY id",
  },

  // Aggregates.
  {
    name: 'count, count distinct',
    sql: 'SELECT COUNT(*), COUNT(customer), COUNT(DISTINCT customer), COUNT(DISTINCT region), COUNT(DISTINCT paid), COUNT(note) FROM orders',
  },
  {
    name: 'sum and avg of integers are exact decimals',
    sql: 'SELECT SUM(quantity), AVG(quantity), SUM(paid), AVG(paid), AVG(quantity * 1.0), SUM(quantity / 3) FROM orders',
  },
  { name: 'sum and avg of doubles', sql: 'SELECT SUM(amount), AVG(amount), MIN(amount), MAX(amount) FROM orders' },
  {
    name: 'min and max',
    sql: 'SELECT MIN(customer), MAX(customer), MIN(ship_day), MAX(placed_at), MIN(quantity), MAX(note) FROM orders',
  },
  {
    name: 'group by ignores case',
    sql: 'SELECT LOWER(customer) AS who, COUNT(*) AS n, SUM(quantity) AS q FROM orders GROUP BY customer ORDER BY who',
  },
  {
    name: 'group by expression and having',
    sql: 'SELECT YEAR(placed_at) AS y, COUNT(*) AS n, AVG(amount) AS a FROM orders GROUP BY YEAR(placed_at) HAVING COUNT(*) >= 1 ORDER BY y',
  },
  { name: 'distinct ignores case', sql: 'SELECT DISTINCT LOWER(region) AS r FROM orders ORDER BY r' },
  { name: 'distinct count by region', sql: 'SELECT COUNT(*) FROM (SELECT DISTINCT region FROM orders) AS d' },
  {
    name: 'group_concat',
    sql: "SELECT GROUP_CONCAT(id ORDER BY id), GROUP_CONCAT(DISTINCT LOWER(customer) ORDER BY LOWER(customer) DESC SEPARATOR ' | '), GROUP_CONCAT(quantity ORDER BY quantity SEPARATOR ''), GROUP_CONCAT(id, '=', quantity ORDER BY id SEPARATOR ';') FROM orders",
  },
  {
    name: 'group_concat per group',
    sql: 'SELECT LOWER(region) AS r, GROUP_CONCAT(id ORDER BY amount DESC) AS ids FROM orders GROUP BY region ORDER BY r',
  },
  {
    name: 'json_extract and json_unquote',
    sql: "SELECT id, JSON_EXTRACT(meta, '$.channel'), JSON_UNQUOTE(JSON_EXTRACT(meta, '$.channel')), JSON_EXTRACT(meta, '$.tags'), JSON_EXTRACT(meta, '$.missing'), JSON_EXTRACT(meta, '$.n') FROM orders ORDER BY id",
    mysql8: { why: JSON_FORMAT, jsonColumns: [1, 3, 4, 5] },
  },
  {
    name: 'json values selected whole',
    sql: 'SELECT id, meta FROM orders ORDER BY id',
    mysql8: { why: JSON_FORMAT, jsonColumns: [1] },
  },
  {
    name: 'json_arrayagg and json_objectagg',
    sql: "SELECT JSON_ARRAYAGG(quantity), JSON_OBJECTAGG(id, amount) FROM orders WHERE id IN ('o01', 'o02', 'o03')",
    mysql8: { why: JSON_FORMAT, jsonColumns: [0, 1] },
  },
  {
    name: 'json aggregates of text and dates',
    sql: "SELECT JSON_ARRAYAGG(customer), JSON_OBJECTAGG(customer, ship_day) FROM orders WHERE id IN ('o02', 'o05')",
    mysql8: { why: JSON_FORMAT, jsonColumns: [0, 1] },
  },

  // Collation.
  {
    name: 'equality ignores case and accents',
    sql: "SELECT id FROM orders WHERE customer = 'ALICE' OR customer = 'emile' ORDER BY id",
  },
  { name: 'in and not equal ignore case', sql: "SELECT id, region IN ('eu'), region <> 'us' FROM orders ORDER BY id" },
  {
    name: 'order by ignores case',
    sql: 'SELECT customer FROM orders WHERE customer IS NOT NULL ORDER BY customer, id',
  },
  { name: 'order by text with spaces, punctuation and accents', sql: 'SELECT id, note FROM orders ORDER BY note, id' },
  {
    name: 'group by text across plain ASCII and accents',
    sql: "SELECT MIN(id) AS first, COUNT(*) AS c FROM orders WHERE note IN ('CAFE', 'rush', '100% SURE') OR note < 'b' GROUP BY note ORDER BY first",
  },
  { name: 'order by text descending with nulls', sql: 'SELECT id, customer FROM orders ORDER BY customer DESC, id' },
  {
    name: 'like ignores case and accents',
    sql: "SELECT id FROM orders WHERE customer LIKE 'EMI%' OR customer LIKE '%OB' ORDER BY id",
  },
  { name: 'trailing spaces count', sql: "SELECT 'a' = 'a ', 'a' = 'A', 'a' < 'B', '_' < '0', '0' < 'a', 'ß' = 'ss'" },
  {
    name: 'join on text ignores case',
    sql: 'SELECT o.id AS order_id, c.id AS customer_id FROM orders o JOIN customers c ON o.customer = c.name ORDER BY o.id, c.id',
  },
  {
    name: 'parameters compare as MySQL compares them',
    sql: 'SELECT id FROM orders WHERE customer = #{who} AND (#{minimum} IS NULL OR amount >= #{minimum}) AND paid = #{paid} ORDER BY id',
    params: { who: 'ALICE', minimum: 1, paid: true },
  },

  // ONLY_FULL_GROUP_BY, with MySQL 8's detection of functional dependence.
  {
    name: 'a column neither grouped nor aggregated is refused',
    sql: 'SELECT region, customer, COUNT(*) AS n FROM orders GROUP BY region',
    mysql8: {
      why: GROUP_MESSAGE,
      refused: {
        code: 1055,
        message: `Expression #2 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'orders.customer' which is not functionally dependent on columns in GROUP BY clause; ${ONLY_FULL_GROUP_BY}`,
        mariadb: 'same code',
      },
    },
  },
  {
    name: 'an aggregate beside a plain column without GROUP BY is refused',
    sql: 'SELECT customer, COUNT(*) FROM orders',
    mysql8: {
      why: GROUP_MESSAGE,
      refused: {
        code: 1140,
        message: `In aggregated query without GROUP BY, expression #1 of SELECT list contains nonaggregated column 'orders.customer'; ${ONLY_FULL_GROUP_BY}`,
        mariadb: 'same code',
      },
    },
  },
  {
    name: 'ORDER BY a column neither grouped nor aggregated is refused',
    sql: 'SELECT region, COUNT(*) FROM orders GROUP BY region ORDER BY amount',
    mysql8: {
      why: "MariaDB's ONLY_FULL_GROUP_BY does not look at ORDER BY and answers it; MySQL 8 refuses it",
      refused: {
        code: 1055,
        message: `Expression #1 of ORDER BY clause is not in GROUP BY clause and contains nonaggregated column 'orders.amount' which is not functionally dependent on columns in GROUP BY clause; ${ONLY_FULL_GROUP_BY}`,
        mariadb: 'answers',
      },
    },
  },
  {
    name: 'a column inside a grouped expression is not grouped',
    sql: 'SELECT YEAR(placed_at) + 1 AS next_year, COUNT(*) FROM orders GROUP BY YEAR(placed_at)',
    mysql8: {
      why: GROUP_MESSAGE,
      refused: {
        code: 1055,
        message: `Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'orders.placed_at' which is not functionally dependent on columns in GROUP BY clause; ${ONLY_FULL_GROUP_BY}`,
        mariadb: 'same code',
      },
    },
  },
  {
    name: 'grouped by the primary key, every column is determined',
    sql: 'SELECT id, customer, amount, COUNT(*) AS n FROM orders GROUP BY id ORDER BY id',
    mysql8: {
      why: `${NO_DEPENDENCE} (id is the primary key); ${DEPENDENT_COLUMNS_GROUPED}`,
      sql: 'SELECT id, customer, amount, COUNT(*) AS n FROM orders GROUP BY id, customer, amount ORDER BY id',
    },
  },
  {
    name: 'grouped by a joined primary key',
    sql: 'SELECT c.id, c.name, c.country, COUNT(o.id) AS orders FROM customers c LEFT JOIN orders o ON o.customer = c.name GROUP BY c.id ORDER BY c.id',
    mysql8: {
      why: `${NO_DEPENDENCE} (c.id is the primary key of customers); ${DEPENDENT_COLUMNS_GROUPED}`,
      sql: 'SELECT c.id, c.name, c.country, COUNT(o.id) AS orders FROM customers c LEFT JOIN orders o ON o.customer = c.name GROUP BY c.id, c.name, c.country ORDER BY c.id',
    },
  },
  {
    name: 'a column equal to a constant is determined',
    sql: "SELECT region, COUNT(*) AS n, SUM(quantity) AS q FROM orders WHERE region = 'APAC'",
    mysql8: {
      why: `${NO_DEPENDENCE} (region = 'APAC' in WHERE); grouped by region, which makes one group of the same rows, MariaDB gives the same answer`,
      sql: "SELECT region, COUNT(*) AS n, SUM(quantity) AS q FROM orders WHERE region = 'APAC' GROUP BY region",
    },
  },
  {
    name: 'a column equal to a grouped column through a join is determined',
    sql: "SELECT o.customer, c.name, COUNT(*) AS n FROM orders o JOIN customers c ON c.name = o.customer WHERE o.region = 'APAC' GROUP BY o.customer",
    mysql8: {
      why: `${NO_DEPENDENCE} (c.name = o.customer in the join); ${DEPENDENT_COLUMNS_GROUPED}`,
      sql: "SELECT o.customer, c.name, COUNT(*) AS n FROM orders o JOIN customers c ON c.name = o.customer WHERE o.region = 'APAC' GROUP BY o.customer, c.name",
    },
  },
  {
    name: 'a grouped derived table is determined by its grouped column',
    sql: 'SELECT d.country, d.n FROM (SELECT country, COUNT(*) AS n FROM customers GROUP BY country) AS d GROUP BY d.country ORDER BY d.country',
    mysql8: {
      why: `${NO_DEPENDENCE} (d is grouped by country: one row per country); ${DEPENDENT_COLUMNS_GROUPED}`,
      sql: 'SELECT d.country, d.n FROM (SELECT country, COUNT(*) AS n FROM customers GROUP BY country) AS d GROUP BY d.country, d.n ORDER BY d.country',
    },
  },

  // JOIN ... USING and NATURAL JOIN: merged columns.
  {
    name: 'join using lists the merged column first, with the left value',
    sql: 'SELECT * FROM (SELECT id AS order_id, customer AS name, quantity FROM orders) AS o JOIN customers USING (name) ORDER BY order_id',
  },
  {
    name: 'left join using: the merged column is never null-complemented',
    sql: 'SELECT name, o.name AS o_name, c.name AS c_name, country FROM (SELECT id AS order_id, customer AS name FROM orders) AS o LEFT JOIN customers AS c USING (name) ORDER BY order_id',
  },
  {
    name: 'right join using lists the right side first',
    sql: 'SELECT * FROM (SELECT id AS order_id, customer AS name FROM orders) AS o RIGHT JOIN customers AS c USING (name) ORDER BY c.id, order_id',
  },
  {
    name: 'natural left join on every shared column',
    sql: 'SELECT * FROM (SELECT id AS order_id, customer AS name, region AS country FROM orders) AS o NATURAL LEFT JOIN (SELECT name, country, tier FROM customers) AS c ORDER BY order_id',
  },
  {
    name: 'table.* keeps its own copy of a merged column',
    sql: "SELECT name AS merged, c.*, o.order_id FROM (SELECT id AS order_id, customer AS name FROM orders WHERE id < 'o03') AS o JOIN customers AS c USING (name) ORDER BY order_id",
  },
  {
    name: 'joins using one column twice, named alone in WHERE',
    sql: "SELECT * FROM (SELECT customer AS name FROM orders) AS a JOIN (SELECT name, id FROM customers) AS b USING (name) JOIN (SELECT name, tier FROM customers) AS c USING (name) WHERE name LIKE 'e%'",
  },

  // WITH RECURSIVE.
  {
    name: 'recursive sequence',
    sql: 'WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT n, n * n AS square FROM seq ORDER BY n',
  },
  {
    name: 'recursive calendar of dates',
    sql: "WITH RECURSIVE days (d) AS (SELECT CAST('2024-02-27' AS DATE) UNION ALL SELECT d + INTERVAL 1 DAY FROM days WHERE d < '2024-03-02') SELECT d, DAYOFWEEK(d) AS dow FROM days ORDER BY d",
  },
  {
    name: 'recursive walk over a dataset',
    sql: "WITH RECURSIVE chain AS (SELECT id, customer, 1 AS step FROM orders WHERE id = 'o01' UNION ALL SELECT o.id, o.customer, chain.step + 1 FROM chain JOIN orders o ON o.id = CONCAT('o0', chain.step + 1) WHERE chain.step < 5) SELECT * FROM chain ORDER BY step",
  },
  {
    name: 'recursion of 1000 rounds, the most MySQL 8 runs',
    sql: 'WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1000) SELECT COUNT(*), MAX(n) FROM seq',
  },
  {
    name: 'recursion past cte_max_recursion_depth fails',
    sql: 'WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1001) SELECT COUNT(*) FROM seq',
    mysql8: { why: RECURSION_WHY, error: RECURSION_LIMIT },
  },
  {
    name: 'endless recursion fails even under LIMIT',
    sql: 'WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq) SELECT n FROM seq LIMIT 3',
    mysql8: { why: `${RECURSION_WHY} (both run the recursion to its end before the LIMIT)`, error: RECURSION_LIMIT },
  },
  // Errors MySQL 8 stops a statement with while it runs.
  {
    name: 'scalar subquery of more than one row fails',
    sql: "SELECT (SELECT id FROM orders WHERE region = 'EU') AS x",
    mysql8: {
      why: 'MariaDB fails with the same error and the same message',
      error: { code: 1242, message: 'Subquery returns more than 1 row', mariadb: 'same code' },
    },
  },
  {
    name: 'correlated scalar subquery of one row or none',
    sql: "SELECT o.id, (SELECT c.name FROM customers c WHERE c.id = CONCAT('c', o.quantity)) AS who FROM orders o ORDER BY o.id",
  },
  {
    name: 'scalar subquery of one row in WHERE',
    sql: "SELECT id FROM orders WHERE quantity = (SELECT tier FROM customers WHERE name = 'Zed') ORDER BY id",
  },
  {
    name: 'JSON_EXTRACT of text that is not JSON fails',
    sql: "SELECT JSON_EXTRACT(note, '$.a') FROM orders WHERE id = 'o01'",
    mysql8: {
      why: JSON_TEXT_WHY,
      error: {
        code: 3141,
        message: 'Invalid JSON text in argument 1 to function json_extract: "Invalid value." at position 0.',
        mariadb: { warning: 4038 },
      },
    },
  },
  {
    name: 'JSON_EXTRACT of cut-off JSON text fails where the text ends',
    sql: `SELECT JSON_EXTRACT(CONCAT('{"a": ', quantity), '$.a') FROM orders WHERE id = 'o01'`,
    mysql8: {
      why: JSON_TEXT_WHY,
      error: {
        code: 3141,
        message:
          'Invalid JSON text in argument 1 to function json_extract: "Missing a comma or \'}\' after an object member." at position 7.',
        mariadb: { warning: 4037 },
      },
    },
  },
  {
    name: 'JSON_EXTRACT of a number fails',
    sql: "SELECT JSON_EXTRACT(quantity, '$') FROM orders WHERE id = 'o01'",
    mysql8: {
      why: 'MariaDB reads a number as JSON text; MySQL 8 takes only JSON text or a JSON value',
      error: {
        code: 3146,
        message:
          'Invalid data type for JSON data in argument 1 to function json_extract; a JSON string or JSON type is required.',
        mariadb: 'answers',
      },
    },
  },
  {
    name: 'JSON_UNQUOTE of text that is not quoted answers it as is',
    sql: 'SELECT id, JSON_UNQUOTE(note) FROM orders ORDER BY id',
  },
  {
    name: 'JSON_UNQUOTE of a quoted text that is not a JSON string fails',
    sql: `SELECT JSON_UNQUOTE(CONCAT('"', customer, '\\\\x"')) FROM orders WHERE id = 'o01'`,
    mysql8: {
      why: 'MariaDB drops the backslash of an escape JSON lacks; MySQL 8 reads the quoted text as a JSON string and fails',
      error: {
        code: 3141,
        message:
          'Invalid JSON text in argument 1 to function json_unquote: "Invalid escape character in string." at position 6.',
        mariadb: 'answers',
      },
    },
  },
];
