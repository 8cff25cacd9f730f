/** The web ACL's body-size rule reads Content-Length as text: its pattern must match exactly the numbers over the limit. */
import fc from 'fast-check';
import { greaterThanPattern } from '../../../lib/service-firewall';

describe('greaterThanPattern', () => {
  it('matches a Content-Length over 1 MB and nothing at or under it', () => {
    const pattern = new RegExp(greaterThanPattern(1048576));
    const lengths = [
      '0',
      '17',
      '999999',
      '1048575',
      '1048576',
      '001048576',
      '1048577',
      '1049000',
      '2000000',
      '10485760',
    ];
    expect(lengths.filter((length) => pattern.test(length))).toEqual(['1048577', '1049000', '2000000', '10485760']);
    expect(['', '1e7', '-5', '1048577 ', 'abc'].filter((text) => pattern.test(text))).toEqual([]);
  });

  it('agrees with numeric comparison for any limit and any length', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99_999_999 }),
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.nat({ max: 3 }),
        (limit, value, zeros) => {
          const text = '0'.repeat(zeros) + String(value);
          expect(new RegExp(greaterThanPattern(limit)).test(text)).toBe(value > limit);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('agrees with numeric comparison next to the limit, where one digit decides', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: -1000, max: 1000 }), (limit, delta) => {
        const value = Math.max(0, limit + delta);
        expect(new RegExp(greaterThanPattern(limit)).test(String(value))).toBe(value > limit);
      }),
      { numRuns: 3000 },
    );
  });
});
