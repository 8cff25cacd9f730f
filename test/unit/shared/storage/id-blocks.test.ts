/** Id blocks: consecutive ULIDs of one time, distinct and ascending, and the settle-window rule for reusing them. */
import fc from 'fast-check';
import { blockStillWritable, idInBlock, idTime, isIdBlock, newIdBlock } from '../../../../shared/storage/id-blocks';
import { SETTLE_MS } from '../../../../shared/storage/record-counter';

describe('id blocks', () => {
  it('gives ascending, distinct ULIDs of the block time for positions 0 to 999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), (time) => {
        const block = newIdBlock(time);
        expect(isIdBlock(block)).toBe(true);
        const ids = Array.from({ length: 1000 }, (_, i) => idInBlock(block, i));
        expect(ids.every((id, i) => i === 0 || (ids[i - 1] as string) < id)).toBe(true);
        for (const id of [ids[0], ids[999]]) {
          expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
          expect(idTime(id as string)).toBe(time);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('increments the random part like a monotonic factory, carrying into higher digits', () => {
    const block = { time: 0, start: '000000000000000Z' };
    expect(idInBlock(block, 0)).toBe('0000000000000000000000000Z');
    expect(idInBlock(block, 1)).toBe('00000000000000000000000010');
    expect(idInBlock(block, 33)).toBe('00000000000000000000000020');
  });

  it('refuses what is not a block', () => {
    expect(isIdBlock({ time: 1, start: 'ZZZZZZZZZZZZZZZZ' })).toBe(false);
    expect(isIdBlock({ time: -1, start: '0000000000000000' })).toBe(false);
    expect(isIdBlock({ time: 1 })).toBe(false);
    expect(isIdBlock(null)).toBe(false);
  });

  it('allows writing with a block only while the write ends inside the settle window', () => {
    const block = newIdBlock(1_000_000);
    expect(blockStillWritable(block, 1_000_000 + SETTLE_MS - 1)).toBe(true);
    expect(blockStillWritable(block, 1_000_000 + SETTLE_MS)).toBe(false);
  });
});
