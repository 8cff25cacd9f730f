/** The names a registered query may use, and the words that are never a name (mysql-parser.ts). */

/** Aggregate functions: with OVER they run as window functions too (but GROUP_CONCAT and the JSON ones). */
export const AGGREGATES = new Set([
  'COUNT',
  'SUM',
  'AVG',
  'MIN',
  'MAX',
  'GROUP_CONCAT',
  'JSON_ARRAYAGG',
  'JSON_OBJECTAGG',
]);
/** Functions that exist only with OVER. */
export const WINDOW_FUNCTIONS = new Set([
  'ROW_NUMBER',
  'RANK',
  'DENSE_RANK',
  'PERCENT_RANK',
  'CUME_DIST',
  'NTILE',
  'LAG',
  'LEAD',
  'FIRST_VALUE',
  'LAST_VALUE',
  'NTH_VALUE',
]);

/** Scalar functions of the list, with the number of arguments each takes (least, most). */
export const SCALAR_FUNCTIONS: ReadonlyMap<string, readonly [number, number]> = new Map([
  ['DATE', [1, 1]],
  ['TIME', [1, 1]],
  ['YEAR', [1, 1]],
  ['QUARTER', [1, 1]],
  ['MONTH', [1, 1]],
  ['DAY', [1, 1]],
  ['DAYOFMONTH', [1, 1]],
  ['HOUR', [1, 1]],
  ['MINUTE', [1, 1]],
  ['SECOND', [1, 1]],
  ['DAYOFWEEK', [1, 1]],
  ['WEEKDAY', [1, 1]],
  ['WEEK', [1, 2]],
  ['LAST_DAY', [1, 1]],
  ['DATE_FORMAT', [2, 2]],
  ['STR_TO_DATE', [2, 2]],
  ['DATE_ADD', [2, 2]],
  ['DATE_SUB', [2, 2]],
  ['ADDDATE', [2, 2]],
  ['SUBDATE', [2, 2]],
  ['DATEDIFF', [2, 2]],
  ['UNIX_TIMESTAMP', [0, 1]],
  ['FROM_UNIXTIME', [1, 2]],
  ['CONCAT', [1, 255]],
  ['CONCAT_WS', [2, 255]],
  ['SUBSTRING', [2, 3]],
  ['SUBSTR', [2, 3]],
  ['MID', [3, 3]],
  ['LEFT', [2, 2]],
  ['RIGHT', [2, 2]],
  ['LENGTH', [1, 1]],
  ['CHAR_LENGTH', [1, 1]],
  ['UPPER', [1, 1]],
  ['LOWER', [1, 1]],
  ['LTRIM', [1, 1]],
  ['RTRIM', [1, 1]],
  ['LPAD', [3, 3]],
  ['RPAD', [3, 3]],
  ['REPLACE', [3, 3]],
  ['LOCATE', [2, 3]],
  ['INSTR', [2, 2]],
  ['REPEAT', [2, 2]],
  ['REVERSE', [1, 1]],
  ['FORMAT', [2, 2]],
  ['ROUND', [1, 2]],
  ['TRUNCATE', [2, 2]],
  ['FLOOR', [1, 1]],
  ['CEIL', [1, 1]],
  ['CEILING', [1, 1]],
  ['ABS', [1, 1]],
  ['MOD', [2, 2]],
  ['POW', [2, 2]],
  ['GREATEST', [2, 255]],
  ['LEAST', [2, 255]],
  ['IF', [3, 3]],
  ['IFNULL', [2, 2]],
  ['NULLIF', [2, 2]],
  ['COALESCE', [1, 255]],
  ['JSON_EXTRACT', [2, 255]],
  ['JSON_UNQUOTE', [1, 1]],
]);

/** Words that end an expression or a select item: never read as a column name or an alias without AS. */
export const RESERVED = new Set(
  (
    'SELECT FROM WHERE GROUP HAVING ORDER LIMIT OFFSET UNION ALL DISTINCT AS ON USING JOIN INNER LEFT RIGHT CROSS ' +
    'OUTER NATURAL FULL STRAIGHT_JOIN AND OR XOR NOT IS NULL IN BETWEEN LIKE REGEXP RLIKE CASE WHEN THEN ELSE END ' +
    'WITH WINDOW OVER PARTITION BY ASC DESC DIV MOD EXISTS INTERVAL FOR INTO LOCK SEPARATOR ESCAPE TRUE FALSE ' +
    'COLLATE SOUNDS MEMBER BINARY ROWS RANGE INTERSECT EXCEPT'
  ).split(' '),
);
