/** Type validation of record values (docs/interface.md §4), one rule per type, without I/O. */
import fc from 'fast-check';
import type { FieldConfig } from '../../../../shared/catalog/schema';
import { fromStoredValue, toStoredValue } from '../../../../shared/records/field-values';
import { formatTimestamp } from '../../../../shared/records/timestamps';

const field = (type: FieldConfig['type'], extra: Partial<FieldConfig> = {}): FieldConfig => ({
  name: 'f',
  type,
  ...extra,
});

describe('toStoredValue', () => {
  it.each([
    ['string', 'abc', 'abc'],
    ['text', '', ''],
    ['integer', '-12', -12],
    ['integer', ' 7 ', 7],
    ['integer', -0, 0],
    ['number', '0.5', 0.5],
    ['number', '-1.5e-3', -0.0015],
    ['number', 0, 0],
    ['boolean', true, true],
    ['date', '2000-02-29', '2000-02-29'],
    ['datetime', '1999-12-31 23:59:59', '1999-12-31 23:59:59'],
    ['json', { a: [1] }, '{"a":[1]}'],
    ['json', false, 'false'],
  ] as const)('accepts a %s %j as %j', (type, value, stored) => {
    expect(toStoredValue(field(type), value)).toEqual(stored);
  });

  it.each([
    ['integer', 1e21, "field 'f' expects an integer (must be between -9007199254740991 and 9007199254740991)"],
    ['integer', '0x10', "field 'f' expects an integer"],
    ['number', 'Infinity', "field 'f' expects a number"],
    ['number', '1,5', "field 'f' expects a number"],
    ['date', '1900-02-29', "field 'f' expects a date 'YYYY-MM-DD'"],
    ['date', '2023-13-01', "field 'f' expects a date 'YYYY-MM-DD'"],
    ['datetime', '2023-01-01 12:60:00', "field 'f' expects a datetime 'YYYY-MM-DD HH:MM:SS'"],
    ['boolean', 'false', "field 'f' expects a boolean (true or false)"],
  ] as const)('refuses a %s %j', (type, value, message) => {
    expect(() => toStoredValue(field(type), value)).toThrow(message);
  });

  it('stores every json value so that reading it back gives the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 10 }), (value) => {
        const back = fromStoredValue(field('json'), toStoredValue(field('json'), value));
        expect(back).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('accepts every safe integer and its decimal text', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        const expected = Object.is(n, -0) ? 0 : n;
        return (
          toStoredValue(field('integer'), n) === expected && toStoredValue(field('integer'), String(n)) === expected
        );
      }),
    );
  });
});

describe('formatTimestamp', () => {
  const instant = new Date(Date.UTC(2026, 0, 15, 23, 30, 5));

  it.each([
    ['UTC', '2026-01-15 23:30:05'],
    ['Asia/Shanghai', '2026-01-16 07:30:05'],
    ['America/New_York', '2026-01-15 18:30:05'],
    ['Asia/Kolkata', '2026-01-16 05:00:05'],
  ])('formats in %s as %s', (zone, text) => {
    expect(formatTimestamp(instant, zone)).toBe(text);
  });

  it('writes midnight as 00, not 24', () => {
    expect(formatTimestamp(new Date(Date.UTC(2026, 5, 1, 0, 0, 0)), 'UTC')).toBe('2026-06-01 00:00:00');
  });
});
