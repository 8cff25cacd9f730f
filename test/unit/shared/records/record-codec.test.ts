/**
 * What an update really changes (`effectiveChanges`): applied to the stored record it gives exactly what applying
 * everything sent gives, and it is empty exactly when that leaves the record as it was.
 */
import fc from 'fast-check';
import {
  effectiveChanges,
  isEmptyChange,
  type RecordChanges,
  type RecordItem,
} from '../../../../shared/records/record-codec';

function apply(stored: RecordItem, changes: RecordChanges): RecordItem {
  const next: RecordItem = { ...stored, ...changes.set };
  for (const name of changes.remove) delete next[name];
  return next;
}

const FIELDS = ['a', 'b', 'c', 'd'];
const value = fc.oneof(fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 }), fc.boolean());
const stored = fc.dictionary(fc.constantFrom(...FIELDS), value);
const changes = fc
  .tuple(fc.dictionary(fc.constantFrom(...FIELDS), value), fc.subarray(FIELDS))
  .map(([set, remove]) => ({ set, remove: remove.filter((name) => !(name in set)) }));

describe('effectiveChanges', () => {
  it('changes the record exactly as the changes sent would', () => {
    fc.assert(
      fc.property(stored, changes, (item, sent) => {
        expect(apply(item, effectiveChanges(item, sent))).toEqual(apply(item, sent));
      }),
    );
  });

  it('is empty exactly when the changes sent leave the record as it is', () => {
    fc.assert(
      fc.property(stored, changes, (item, sent) => {
        const after = apply(item, sent);
        const unchanged =
          Object.keys(after).length === Object.keys(item).length &&
          Object.entries(item).every(([name, value]) => after[name] === value);
        expect(isEmptyChange(effectiveChanges(item, sent))).toBe(unchanged);
      }),
    );
  });

  it('keeps only the fields whose value differs, and the cleared fields that hold a value', () => {
    const item = { title: 'same', count: 3, note: 'kept' };
    expect(effectiveChanges(item, { set: { title: 'same', count: 4 }, remove: ['note', 'absent'] })).toEqual({
      set: { count: 4 },
      remove: ['note'],
    });
  });
});
