/** The index key encoding preserves order (numbers, text, booleans, null), and its intervals select exactly. */
import fc from 'fast-check';
import type { StoredValue } from '../../../../shared/records/field-values';
import {
  compareCodePoints,
  compareStoredValues,
  encodeIndexKey,
  encodeNumber,
  equalityInterval,
  isTruncatedKey,
  MAX_INDEXED_CODE_POINTS,
  nullInterval,
  rangeInterval,
} from '../../../../shared/records/value-encoding';

/** DynamoDB's order of string keys: their UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
const ID_A = '01HZZZZZZZZZZZZZZZZZZZZZZA';
const ID_B = '01HZZZZZZZZZZZZZZZZZZZZZZB';

const numbers = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.constantFrom(0, -0, 1e-130, -1e-130, 9.99e125, -9.99e125, 0.1, -0.1),
);
const texts = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({
    unit: fc.constantFrom('a', 'b', '\u0000', '\u0001', '\u0002', '\u0003', 'é', '😀', '\uffff'),
    maxLength: 6,
  }),
);

describe('encodeNumber', () => {
  it('orders like the numbers (negatives, decimals, zero)', () => {
    const values = [-1e100, -2.5, -1, -0.5, 0, 1e-130, 0.25, 1, 2, 10, 1e100];
    const encoded = values.map(encodeNumber);
    expect([...encoded].sort(byteOrder)).toEqual(encoded);
    expect(encodeNumber(-0)).toBe(encodeNumber(0));
    expect(encodeNumber(1)).toBe('bff0000000000000');
    expect(encodeNumber(-1)).toBe('400fffffffffffff');
  });

  it('preserves order for any two numbers (property)', () => {
    fc.assert(
      fc.property(numbers, numbers, (a, b) => {
        expect(sign(byteOrder(encodeNumber(a), encodeNumber(b)))).toBe(sign(compareStoredValues(a, b)));
      }),
    );
  });
});

describe('encodeIndexKey', () => {
  it('puts null first and orders booleans false, true', () => {
    const keys = [encodeIndexKey(null, ID_B), encodeIndexKey(false, ID_A), encodeIndexKey(true, ID_A)];
    expect([...keys].sort(byteOrder)).toEqual(keys);
  });

  it('orders text by code point, a prefix before its extensions, ties by id (property)', () => {
    fc.assert(
      fc.property(texts, texts, fc.constantFrom(ID_A, ID_B), fc.constantFrom(ID_A, ID_B), (a, b, idA, idB) => {
        const expected = compareStoredValues(a, b) || byteOrder(idA, idB);
        expect(sign(byteOrder(encodeIndexKey(a, idA), encodeIndexKey(b, idB)))).toBe(sign(expected));
      }),
    );
  });

  it('orders mixed values of one type with nulls (property)', () => {
    const values = fc.option(numbers, { nil: null });
    fc.assert(
      fc.property(values, values, (a, b) => {
        const expected = compareStoredValues(a, b) || byteOrder(ID_A, ID_B);
        expect(sign(byteOrder(encodeIndexKey(a, ID_A), encodeIndexKey(b, ID_B)))).toBe(sign(expected));
      }),
    );
  });

  it('truncates long text to stay under the 1024-byte key limit, marked as truncated', () => {
    const long = '😀'.repeat(1000);
    const key = encodeIndexKey(long, ID_A);
    expect(Buffer.byteLength(key)).toBeLessThanOrEqual(1024);
    expect(isTruncatedKey(key, ID_A)).toBe(true);
    expect(isTruncatedKey(encodeIndexKey('short', ID_A), ID_A)).toBe(false);
    const exactPrefix = 'x'.repeat(MAX_INDEXED_CODE_POINTS);
    // The untruncated prefix sorts before every longer value sharing it.
    expect(byteOrder(encodeIndexKey(exactPrefix, ID_B), encodeIndexKey(`${exactPrefix}a`, ID_A))).toBe(-1);
    expect(byteOrder(encodeIndexKey(`${exactPrefix}a`, ID_A), encodeIndexKey(`${exactPrefix.slice(1)}y`, ID_A))).toBe(
      -1,
    );
  });
});

describe('intervals', () => {
  const inside = (key: string, interval: { lower: string; upper: string }) =>
    byteOrder(interval.lower, key) <= 0 && byteOrder(key, interval.upper) <= 0;

  it('equality selects exactly the equal values (property)', () => {
    fc.assert(
      fc.property(texts, texts, (a, b) => {
        const { interval, exact } = equalityInterval(a);
        expect(exact).toBe(true);
        expect(inside(encodeIndexKey(b, ID_A), interval)).toBe(a === b);
      }),
    );
  });

  it('ranges select exactly the values between the bounds (property)', () => {
    fc.assert(
      fc.property(
        numbers,
        fc.option(numbers, { nil: undefined }),
        fc.option(numbers, { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        (v, lo, hi, loInclusive, hiInclusive) => {
          const lower = lo === undefined ? undefined : { value: lo as StoredValue, inclusive: loInclusive };
          const upper = hi === undefined ? undefined : { value: hi as StoredValue, inclusive: hiInclusive };
          const expected =
            (lo === undefined || v > lo || (loInclusive && compareStoredValues(v, lo) === 0)) &&
            (hi === undefined || v < hi || (hiInclusive && compareStoredValues(v, hi) === 0));
          expect(inside(encodeIndexKey(v, ID_A), rangeInterval(lower, upper).interval)).toBe(expected);
          expect(inside(encodeIndexKey(null, ID_A), rangeInterval(lower, upper).interval)).toBe(false);
        },
      ),
    );
  });

  it('text ranges select by code point, nulls only by the null interval', () => {
    const { interval } = rangeInterval({ value: 'b', inclusive: true }, { value: 'c', inclusive: false });
    expect(['a', 'b', 'bzz', 'c', 'ca'].filter((v) => inside(encodeIndexKey(v, ID_A), interval))).toEqual(['b', 'bzz']);
    expect(inside(encodeIndexKey(null, ID_A), nullInterval())).toBe(true);
    expect(inside(encodeIndexKey('', ID_A), nullInterval())).toBe(false);
  });
});

describe('compareCodePoints', () => {
  it('agrees with UTF-8 byte order (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }), (a, b) => {
        expect(sign(compareCodePoints(a, b))).toBe(sign(byteOrder(a, b)));
      }),
    );
  });
});
