/**
 * The queries of the permission property (docs/interface.md §6, §8, §19): each reaches for the fields a caller's
 * grant hides (`salary` and `profile` of staff, `budget` of teams) through subqueries, WITH (recursive too), UNION,
 * JOIN (with ON, USING and NATURAL), JSON paths, backticks, qualified and re-cased names and `*`. The same
 * queries are run on the embedded engine and on MySQL (test/integration/shared/sql-dialect and shared/mirror).
 */
import fc from 'fast-check';
import type { FieldConfig } from '../../shared/catalog/schema';

export const STAFF: FieldConfig[] = [
  { name: 'name', type: 'string' },
  { name: 'dept', type: 'string' },
  { name: 'salary', type: 'number' },
  { name: 'profile', type: 'json' },
];
export const TEAMS: FieldConfig[] = [
  { name: 'dept', type: 'string' },
  { name: 'budget', type: 'integer' },
];
export const HIDDEN = new Set(['salary', 'profile', 'budget']);
export const MARKER = 'SECRET-';

/** A column of staff (alias `s`) written in one of the ways MySQL reads a name. */
const staffColumn = fc
  .tuple(
    fc.constantFrom('name', 'dept', 'salary', 'profile', 'id'),
    fc.constantFrom('bare', 'backtick', 'qualified', 'qualified-backtick', 'upper'),
  )
  .map(([column, form]) => {
    const written = {
      bare: column,
      backtick: `\`${column}\``,
      qualified: `s.${column}`,
      'qualified-backtick': `\`s\`.\`${column}\``,
      upper: column.toUpperCase(),
    }[form];
    return { column, written };
  });

/** A value expression over staff: a column, a JSON path on one, or a function of one. */
const staffValue = fc
  .tuple(staffColumn, fc.constantFrom('plain', 'json', 'json-text', 'concat', 'upper', 'aggregate-free'))
  .map(([ref, form]) => {
    const text = {
      plain: ref.written,
      json: `${ref.written}->'$.note'`,
      'json-text': `${ref.written}->>'$.salary'`,
      concat: `CONCAT(${ref.written}, '')`,
      upper: `UPPER(${ref.written})`,
      'aggregate-free': `COALESCE(${ref.written}, ${ref.written})`,
    }[form];
    // A JSON path reads only a json field: on another column the query is refused, which is not what is tested.
    const jsonOnly = form === 'json' || form === 'json-text';
    return { text: jsonOnly && ref.column !== 'profile' ? ref.written : text, names: [ref.column] };
  });

const teamsColumn = fc.constantFrom('dept', 'budget', '`budget`', 't.budget', 'BUDGET', 't.dept');

/** A whole query that uses the value in one of the ways the new syntax allows. */
export const query = fc.tuple(staffValue, teamsColumn, fc.integer({ min: 0, max: 14 })).map(([value, team, shape]) => {
  const teamName = team.replace(/^t\./, '').replaceAll('`', '').toLowerCase();
  const shapes = [
    `SELECT ${value.text} AS v FROM staff s ORDER BY s.id`,
    `SELECT s.name FROM staff s WHERE ${value.text} IS NOT NULL ORDER BY s.id`,
    `SELECT (SELECT MAX(${value.text}) FROM staff s) AS v`,
    `SELECT name FROM staff WHERE name IN (SELECT s.name FROM staff s WHERE ${value.text} IS NOT NULL) ORDER BY name`,
    `WITH w AS (SELECT ${value.text} AS v FROM staff s) SELECT * FROM w`,
    `SELECT d.v FROM (SELECT ${value.text} AS v FROM staff s) AS d`,
    `SELECT s.name AS v FROM staff s UNION SELECT ${value.text} FROM staff s`,
    `SELECT ${value.text} AS v, ${team} AS tv FROM staff s JOIN teams t ON t.dept = s.dept ORDER BY s.name`,
    `SELECT ROW_NUMBER() OVER (PARTITION BY ${value.text} ORDER BY s.id) AS rn, s.name FROM staff s ORDER BY s.id`,
    `SELECT s.* FROM staff s WHERE EXISTS (SELECT 1 FROM teams t WHERE ${team} IS NOT NULL) ORDER BY s.id`,
    `SELECT * FROM staff s JOIN teams t ON t.dept = s.dept WHERE ${value.text} IS NOT NULL`,
    `SELECT COUNT(*) AS n, GROUP_CONCAT(${value.text}) AS g FROM staff s GROUP BY s.dept ORDER BY s.dept`,
    `SELECT * FROM staff s JOIN teams t USING (${teamName}) ORDER BY s.id`,
    // Both sides share every field, the hidden ones too: NATURAL JOIN names them all.
    'SELECT s.name FROM staff s NATURAL JOIN staff b',
    `WITH RECURSIVE r (n, v) AS (SELECT 1, ${value.text} FROM staff s UNION ALL SELECT n + 1, v FROM r WHERE n < 3) SELECT n, v FROM r ORDER BY n`,
  ];
  // Shape 7 uses the staff value and the teams column, shapes 9 and 12 only the teams column, shape 13 every field
  // of staff, the others only the value.
  const names =
    shape === 7
      ? [...value.names, teamName]
      : shape === 9 || shape === 12
        ? [teamName]
        : shape === 13
          ? STAFF.map((field) => field.name)
          : value.names;
  return { sql: shapes[shape] as string, names };
});
