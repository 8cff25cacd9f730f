/**
 * docs/interface.md §6, §8 and §19: row and field permissions hold by construction through the MySQL syntax. A
 * property test writes queries that reach for hidden fields through subqueries, WITH (recursive too), UNION, JOIN
 * (with ON, USING and NATURAL), JSON paths, backticks, qualified and re-cased names and `*`, and renders them for a caller whose grant hides `salary` and
 * `profile` (and `budget` of the second dataset). Rendering must refuse every query that names a hidden field, as
 * an unknown column; every other query is run against tables that still hold the hidden columns, with a marker
 * value in each, and its answer must not contain a marker: the rendering alone never reads a hidden field. (The
 * engine is only ever given the visible fields and rows as well: shared/sql/dataset-cache.ts.)
 */
import fc from 'fast-check';
import { datasetColumns, toTableRow } from '../../../../shared/sql/dataset-table';
import type { EngineTable } from '../../../../shared/sql/query-engine';
import { SqlJsEngine } from '../../../../shared/sql/sqljs-engine';
import { DialectError, datasetTable, renderQuery, UnknownNameError } from '../../../../shared/sql-dialect/dialect';
import { HIDDEN, MARKER, query, STAFF, TEAMS } from '../../../support/permission-queries';
import { clock } from '../../../support/statement-clock';

const tables: EngineTable[] = [
  {
    name: 'staff',
    key: 'staff@property',
    columns: datasetColumns(STAFF),
    rows: [
      { id: 's1', name: 'Ann', dept: 'ops', salary: 9_000_001, profile: { note: `${MARKER}ann`, salary: 9_000_001 } },
      { id: 's2', name: 'Bob', dept: 'dev', salary: 9_000_002, profile: { note: `${MARKER}bob` } },
    ].map((record) =>
      toTableRow(STAFF, { ...record, gmt_create: '2024-01-01 00:00:00', gmt_modified: '2024-01-01 00:00:00' }),
    ),
  },
  {
    name: 'teams',
    key: 'teams@property',
    columns: datasetColumns(TEAMS),
    rows: [{ id: 't1', dept: 'OPS', budget: 9_000_003 }].map((record) =>
      toTableRow(TEAMS, { ...record, gmt_create: '2024-01-01 00:00:00', gmt_modified: '2024-01-01 00:00:00' }),
    ),
  },
];
const caller = new Map([
  ['staff', datasetTable({ datasetCode: 'staff', fields: STAFF }, true, new Set(['name', 'dept']))],
  ['teams', datasetTable({ datasetCode: 'teams', fields: TEAMS }, true, new Set(['dept']))],
]);
const engine = new SqlJsEngine({ threads: 1 });
afterAll(() => engine.close());

describe('permissions through the MySQL syntax', () => {
  it('refuses every query that names a hidden field, and no other query answers a hidden value', async () => {
    await fc.assert(
      fc.asyncProperty(query, async ({ sql, names }) => {
        const namesHidden = names.some((name) => HIDDEN.has(name));
        let rendered: ReturnType<typeof renderQuery>;
        try {
          rendered = renderQuery(
            { appCode: 'app', sqlCode: 'probe', sql },
            { table: (code) => caller.get(code), timeZone: 'UTC', now: clock(new Date(), 'UTC') },
          );
        } catch (error) {
          // A visible name both tables have is ambiguous unqualified, as in MySQL: refused, and not what is tested.
          if (error instanceof DialectError && /ambiguous/.test(error.message)) return;
          expect(error).toBeInstanceOf(UnknownNameError);
          expect(namesHidden).toBe(true);
          return;
        }
        expect(namesHidden).toBe(false);
        const result = await engine.run({ tables, sql: rendered.sql, params: {}, timeoutMs: 10_000 });
        const answer = JSON.stringify(result.rows);
        expect(answer).not.toContain(MARKER);
        expect(answer).not.toMatch(/900000[123]/);
        expect(Object.keys(result.rows[0] ?? {}).some((column) => HIDDEN.has(column))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
