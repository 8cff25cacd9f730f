/** Quota window arithmetic: calendar minute, hour and day windows in UTC, their names and the seconds left. */
import fc from 'fast-check';
import { currentWindows, parseWindowAttribute, secondsUntil, windowAt } from '../../../../shared/quota/windows';

const at = (iso: string) => Date.parse(iso);

describe('windowAt', () => {
  it('puts an instant in its calendar minute, hour and day (UTC)', () => {
    const now = at('2026-11-22T04:10:37.250Z');
    expect(currentWindows(now)).toEqual([
      {
        kind: 'minute',
        start: at('2026-11-22T04:10:00Z'),
        end: at('2026-11-22T04:11:00Z'),
        attribute: 'm#2026-11-22T04:10',
      },
      {
        kind: 'hour',
        start: at('2026-11-22T04:00:00Z'),
        end: at('2026-11-22T05:00:00Z'),
        attribute: 'h#2026-11-22T04',
      },
      { kind: 'day', start: at('2026-11-22T00:00:00Z'), end: at('2026-11-23T00:00:00Z'), attribute: 'd#2026-11-22' },
    ]);
  });

  it('starts a window at its first millisecond and ends it before the next', () => {
    expect(windowAt('minute', at('2026-11-22T04:11:00.000Z')).attribute).toBe('m#2026-11-22T04:11');
    expect(windowAt('minute', at('2026-11-22T04:10:59.999Z')).attribute).toBe('m#2026-11-22T04:10');
    expect(windowAt('day', at('2026-12-31T23:59:59.999Z')).attribute).toBe('d#2026-12-31');
    expect(windowAt('day', at('2027-01-01T00:00:00.000Z')).attribute).toBe('d#2027-01-01');
  });

  it('knows leap days', () => {
    expect(windowAt('day', at('2028-02-29T12:00:00Z'))).toMatchObject({
      attribute: 'd#2028-02-29',
      end: at('2028-03-01T00:00:00Z'),
    });
  });

  it('always contains the instant and names windows that parse back to themselves', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (now) => {
        for (const window of currentWindows(now)) {
          expect(window.start).toBeLessThanOrEqual(now);
          expect(window.end).toBeGreaterThan(now);
          expect(parseWindowAttribute(window.attribute)).toEqual(window);
        }
      }),
    );
  });
});

describe('parseWindowAttribute', () => {
  it.each([
    ['pk'],
    ['leases'],
    ['expiresAt'],
    ['m#2026-11-22T04'],
    ['h#2026-11-22'],
    ['d#2026-11-22T00'],
    ['m#2026-02-30T00:00'],
    ['x#2026-11-22'],
  ])('does not take %s for a window counter', (name) => {
    expect(parseWindowAttribute(name)).toBeUndefined();
  });
});

describe('secondsUntil', () => {
  it.each([
    ['23 s before the end', '2026-11-22T04:10:37Z', 23],
    ['a fraction of a second after a whole second', '2026-11-22T04:10:37.001Z', 23],
    ['half a second before the end', '2026-11-22T04:10:59.500Z', 1],
    ['at the start of the window', '2026-11-22T04:10:00Z', 60],
  ])('rounds %s up to whole seconds', (_label, now, seconds) => {
    expect(secondsUntil(at('2026-11-22T04:11:00Z'), at(now))).toBe(seconds);
  });

  it('never says 0, so a caller who waits finds the window over', () => {
    expect(secondsUntil(1000, 1000)).toBe(1);
    expect(secondsUntil(1000, 5000)).toBe(1);
  });
});
