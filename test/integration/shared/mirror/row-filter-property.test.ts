/**
 * docs/interface.md §6 and §20: on MySQL a grant's row filter is MySQL conditions (shared/sql/mirror-scope.ts), and
 * they must pick exactly the rows the in-memory matcher picks (records/filter-matcher.ts, the meaning every other
 * reader of a row filter agrees with): text compared by code point whatever the server's collation (so 'EU' is not
 * 'eu' and 'a' is not 'a '), NULLs matching only `IS NULL` and `ne`, numbers, booleans and dates as values.
 * A fast-check property over random records and filters, against MariaDB.
 */
import fc from 'fast-check';
import type { StoredValue } from '../../../../shared/records/field-values';
import { matchesFilter } from '../../../../shared/records/filter-matcher';
import type { Condition, FieldRef, Filter } from '../../../../shared/records/list-query';
import { filterSql } from '../../../../shared/sql/mirror-scope';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';

const FIELDS: Record<string, FieldRef> = {
  s: { name: 's', type: 'string' },
  n: { name: 'n', type: 'integer' },
  x: { name: 'x', type: 'number' },
  b: { name: 'b', type: 'boolean' },
  d: { name: 'd', type: 'date' },
};
const text = fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'é', 'É', ' ', '%', '_', 'z'), maxLength: 4 });
const VALUES_OF: Record<string, fc.Arbitrary<StoredValue>> = {
  s: text,
  n: fc.integer({ min: -3, max: 3 }),
  x: fc.constantFrom(-1.5, 0, 0.1, 2, 1e20),
  b: fc.boolean(),
  d: fc.constantFrom('2024-01-01', '2024-02-29', '2023-12-31'),
};
const record = fc.record(
  Object.fromEntries(Object.entries(VALUES_OF).map(([name, arb]) => [name, fc.option(arb, { nil: null })])),
) as fc.Arbitrary<Record<string, StoredValue | null>>;

const condition: fc.Arbitrary<Condition> = fc.constantFrom(...Object.keys(FIELDS)).chain((name) => {
  const field = FIELDS[name] as FieldRef;
  const value = VALUES_OF[name] as fc.Arbitrary<StoredValue>;
  const bound = fc.option(fc.record({ value, inclusive: fc.boolean() }), { nil: undefined });
  const options: fc.Arbitrary<Condition>[] = [
    value.map((v) => ({ op: 'eq' as const, field, value: v })),
    value.map((v) => ({ op: 'ne' as const, field, value: v })),
    fc.array(value, { maxLength: 3 }).map((values) => ({ op: 'in' as const, field, values })),
    fc.boolean().map((isNull) => ({ op: 'null' as const, field, isNull })),
    fc.tuple(bound, bound).map(([lower, upper]) => ({
      op: 'range' as const,
      field,
      ...(lower ? { lower } : {}),
      ...(upper ? { upper } : {}),
    })),
  ];
  if (name === 's') {
    options.push(
      fc.tuple(fc.constantFrom('contains' as const, 'prefix' as const, 'suffix' as const), text).map(([match, v]) => ({
        op: 'text' as const,
        field,
        match,
        value: v.toLowerCase(),
      })),
    );
  }
  return fc.oneof(...options);
});
const filter: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small' },
    condition,
    fc.record({ op: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('f'), { maxLength: 3 }) }),
  ),
})).f;

describeWithMariaDb('row filters on MySQL', () => {
  let mariadb: MariaDb;
  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
    await mariadb.connection.query(
      'CREATE TABLE t (id VARCHAR(16) PRIMARY KEY, s MEDIUMTEXT, n BIGINT, x DOUBLE, b TINYINT(1), d DATE)',
    );
  }, 120_000);
  afterAll(async () => {
    await mariadb?.stop();
  });

  it('pick exactly the rows the in-memory matcher picks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 8 }), filter, async (records, scope) => {
        await mariadb.connection.query('DELETE FROM t');
        const rows = records.map((r, i) => [`r${i}`, r.s, r.n, r.x, r.b === null ? null : r.b ? 1 : 0, r.d]);
        await mariadb.connection.query('INSERT INTO t VALUES ?', [rows]);
        const [found] = await mariadb.connection.query(`SELECT id FROM t WHERE ${filterSql(scope)} ORDER BY id`);
        const expected = records
          .map((r, i) => ({ id: `r${i}`, item: { ...r, id: `r${i}` } }))
          .filter(({ item }) => matchesFilter(item, scope))
          .map(({ id }) => id)
          .sort();
        expect((found as { id: string }[]).map((row) => row.id)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});
