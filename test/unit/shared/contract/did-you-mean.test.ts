/**
 * The "did you mean" of a wrong name: the nearest name the caller may use, when the wrong one is a slip of it
 * (one or two letters swapped, missing, extra or changed, case ignored), and nothing when no name is near.
 */
import fc from 'fast-check';
import { closestName, didYouMean } from '../../../../shared/contract/did-you-mean';

const FIELDS = ['customer_id', 'amount', 'status', 'region', 'placed_at', 'id', 'gmt_create', 'gmt_modified'];

describe('closestName', () => {
  it.each([
    ['stauts', 'status'],
    ['amout', 'amount'],
    ['ammount', 'amount'],
    ['Status', 'status'],
    ['customerid', 'customer_id'],
    ['customer', 'customer_id'],
    ['gmt_created', 'gmt_create'],
    ['placedat', 'placed_at'],
  ])('suggests for %s the field %s', (name, expected) => {
    expect(closestName(name, FIELDS)).toBe(expected);
  });

  it.each([
    ['colour', 'colour'],
    ['nosuch', 'nosuch'],
    ['price', 'price'],
    ['x', 'x'],
    ['an empty name', ''],
    ['a name of 10,000 letters', 'a'.repeat(10_000)],
  ])('suggests nothing for %s', (_label, name) => {
    expect(closestName(name, FIELDS)).toBeUndefined();
  });

  it('takes the first of equally near candidates', () => {
    expect(closestName('cat', ['bat', 'hat'])).toBe('bat');
    expect(closestName('cat', ['hat', 'bat'])).toBe('hat');
  });

  it('finds any one-letter slip of a name of four letters or more among other names', () => {
    const name = fc.stringMatching(/^[a-z][a-z_]{3,19}$/);
    const slip = (word: string, at: number, kind: number, letter: string): string => {
      const i = at % word.length;
      if (kind === 0) return word.slice(0, i) + word.slice(i + 1);
      if (kind === 1) return word.slice(0, i) + letter + word.slice(i);
      if (kind === 2) return word.slice(0, i) + letter + word.slice(i + 1);
      const j = Math.min(i, word.length - 2);
      return word.slice(0, j) + word[j + 1] + word[j] + word.slice(j + 2);
    };
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { minLength: 1, maxLength: 20 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz_'),
        (names, pick, at, kind, letter) => {
          const target = names[pick % names.length] as string;
          const typed = slip(target, at, kind, letter);
          fc.pre(!names.includes(typed));
          const suggested = closestName(typed, names);
          // The slip itself is one edit from the target, so some name at most that near is suggested.
          expect(suggested).toBeDefined();
          expect(names).toContain(suggested);
        },
      ),
    );
  });
});

describe('didYouMean', () => {
  it('ends a message with the suggestion, or with nothing', () => {
    expect(didYouMean('stauts', FIELDS)).toBe("; did you mean 'status'?");
    expect(didYouMean('colour', FIELDS)).toBe('');
  });
});
