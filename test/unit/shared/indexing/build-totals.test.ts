/**
 * What one scanned record adds to its build's counts at the build's start position (build-totals.ts): the key it
 * holds, with the writes claimed after the start that its read shows undone, moved to the key the job wrote; a chain
 * that does not add up gives no contribution. And a segment's counts given up when they grow too large.
 */

import { mergeSegmentCounts, recordContribution, SegmentTotals } from '../../../../shared/indexing/build-totals';
import type { DatasetJob } from '../../../../shared/indexing/job-definition';
import { countKeyOf } from '../../../../shared/records/value-encoding';
import type { StoredClaim } from '../../../../shared/storage/change-items';
import { countSlotKey, indexKey, indexSlot } from '../../../../shared/storage/index-attributes';

const build = { field: 'items', slot: 1, build: 2 };
const slot = indexSlot(build);
const slotKey = countSlotKey(slot);
const ID = '01HZZZZZZZZZZZZZZZZZZZZZZZ';
const START = '01J0000000ZZZZZZZZZZZZZZZZ';
const AFTER_1 = '01J0000001AAAAAAAAAAAAAAAA';
const AFTER_2 = '01J0000002AAAAAAAAAAAAAAAA';
const BEFORE = '01HY000000AAAAAAAAAAAAAAAA';

const holding = (value: number | undefined, position?: string) => ({
  '@sk': ID,
  items: 7,
  ...(value === undefined ? {} : { [slot.attribute]: indexKey(slot, value, ID) }),
  ...(position ? { '@cpos': position } : {}),
});
const claims = (...list: StoredClaim[]) => {
  const byPosition = new Map(list.map((claim) => [claim.position, claim]));
  return async (position: string) => byPosition.get(position);
};
const update = (position: string, previous: string, before?: number, after?: number): StoredClaim => ({
  position,
  time: 0,
  kind: 'update',
  id: ID,
  revision: 2,
  previous,
  before: before === undefined ? {} : { [slotKey]: countKeyOf(before) },
  after: after === undefined ? {} : { [slotKey]: countKeyOf(after) },
});
const asObject = (counts: Map<string, number> | undefined) =>
  counts && Object.fromEntries([...counts].map(([key, count]) => [key === countKeyOf(7) ? 'seven' : key, count]));

describe('what a scanned record adds at the start position', () => {
  it('a record no write since the start touched, whose key the job wrote: its value', async () => {
    const contribution = await recordContribution(
      { record: holding(undefined, BEFORE), written: true },
      slot,
      START,
      claims(),
    );
    expect(asObject(contribution)).toEqual({ seven: 1 });
  });

  it('a key left stale by the earlier configuration, rewritten by the job: its value', async () => {
    const contribution = await recordContribution({ record: holding(3), written: true }, slot, START, claims());
    expect(asObject(contribution)).toEqual({ seven: 1 });
  });

  it('a record moved to 7 after the start (its claim counts it): nothing', async () => {
    const contribution = await recordContribution(
      { record: holding(7, AFTER_1), written: false },
      slot,
      START,
      claims(update(AFTER_1, BEFORE, undefined, 7)),
    );
    expect(asObject(contribution)).toEqual({});
  });

  it('a record moved twice after the start: the key it held before the first', async () => {
    const contribution = await recordContribution(
      { record: holding(7, AFTER_2), written: false },
      slot,
      START,
      claims(update(AFTER_1, BEFORE, 1, 5), update(AFTER_2, AFTER_1, 5, 7)),
    );
    expect(contribution).toEqual(new Map([[countKeyOf(1), 1]]));
  });

  it('a record created after the start: nothing', async () => {
    const create: StoredClaim = { position: ID, time: 0, kind: 'create', id: ID, values: { [slotKey]: countKeyOf(7) } };
    const record = { ...holding(7, ID) };
    expect(
      asObject(
        await recordContribution({ record, written: false }, slot, '01H0000000ZZZZZZZZZZZZZZZZ', claims(create)),
      ),
    ).toEqual({});
  });

  it('a chain that does not add up: no contribution', async () => {
    // The claim is missing.
    expect(
      await recordContribution({ record: holding(7, AFTER_1), written: false }, slot, START, claims()),
    ).toBeUndefined();
    // The update says it left 5, the record holds 7.
    expect(
      await recordContribution(
        { record: holding(7, AFTER_1), written: false },
        slot,
        START,
        claims(update(AFTER_1, BEFORE, 1, 5)),
      ),
    ).toBeUndefined();
  });
});

describe("a segment's counts", () => {
  const job: DatasetJob = {
    builds: [build, { field: 'note', slot: 2, build: 3 }],
    drops: [],
    fromMs: 0,
    toMs: 0,
    segments: 1,
    total: 0,
    totalsFrom: { 2: START, 3: START },
  };

  it('are given up, largest build first, past what a progress item may carry', () => {
    const totals = SegmentTotals.resume(job, undefined) as SegmentTotals;
    totals.add(2, 'a', 3);
    for (let i = 0; i < 2_000; i++) totals.add(3, `value-${i}`, 1);
    const state = totals.toState();
    expect(state).toEqual({ counts: { 2: [['a', 3]] }, uncounted: [3] });
    expect(
      mergeSegmentCounts(2, [
        state,
        {
          counts: {
            2: [
              ['a', 1],
              ['b', 2],
            ],
          },
          uncounted: [],
        },
      ]),
    ).toEqual([
      ['a', 4],
      ['b', 2],
    ]);
    expect(mergeSegmentCounts(3, [state])).toBeUndefined();
  });
});
