import {
  INLINE_CLAIM_CHARS,
  INLINE_SLOT_CHARS,
  INLINE_SLOT_KEYS,
  inlineCountsAttribute,
  readInlineCounts,
} from '../../../../shared/storage/batch-counts';

const statuses = (n: number) =>
  Array.from({ length: n }, (_, i) => ['new', 'paid', 'shipped', 'void'][i % 4] as string);
const distinct = (n: number, prefix = 'k') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);

describe('a batch claim carries its counts per key for the slots of few distinct keys', () => {
  it('counts each key of a slot of few values, and leaves out a slot of many', () => {
    const attribute = inlineCountsAttribute({ status: statuses(1_000), amount: distinct(1_000) });
    expect(attribute).toBeDefined();
    const counts = readInlineCounts(attribute);
    expect(Object.keys(counts ?? {})).toEqual(['status']);
    expect([...(counts?.status ?? [])]).toEqual([
      ['new', 250],
      ['paid', 250],
      ['shipped', 250],
      ['void', 250],
    ]);
  });

  it(`carries a slot of ${INLINE_SLOT_KEYS} distinct keys, not one of ${INLINE_SLOT_KEYS + 1}`, () => {
    expect([...(readInlineCounts(inlineCountsAttribute({ s: distinct(INLINE_SLOT_KEYS) }))?.s ?? [])]).toHaveLength(
      INLINE_SLOT_KEYS,
    );
    expect(inlineCountsAttribute({ s: distinct(INLINE_SLOT_KEYS + 1) })).toBeUndefined();
  });

  it('leaves out a slot whose keys are long, and stops adding slots at the claim budget', () => {
    expect(inlineCountsAttribute({ note: ['x'.repeat(INLINE_SLOT_CHARS)] })).toBeUndefined();
    const slots = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`slot-${i}`, distinct(4, `v${i}-`)]));
    const attribute = inlineCountsAttribute(slots) as string;
    expect(attribute.length).toBeLessThanOrEqual(INLINE_CLAIM_CHARS + 2);
    const carried = Object.keys(readInlineCounts(attribute) ?? {});
    expect(carried.length).toBeGreaterThan(0);
    expect(carried.length).toBeLessThan(12);
    expect(carried).toEqual(Object.keys(slots).slice(0, carried.length));
  });

  it('reads nothing from a claim without counts (one written before they existed)', () => {
    expect(readInlineCounts(undefined)).toBeUndefined();
    expect(inlineCountsAttribute({})).toBeUndefined();
  });
});
