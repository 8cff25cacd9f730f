/**
 * docs/totals-and-changes.md, "A mirror stopped past the retention": a position is expired once its time is older
 * than now − the retention + a margin of a day (a quarter of the retention when it is under four days).
 */
import { expiredReason, positionExpired, retentionMarginMs } from '../../../../shared/mirror/mirror-retention';
import { lastPositionAt } from '../../../../shared/storage/event-store';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 6, 12, 0, 0);

describe("the mirror position's expiry", () => {
  it('counts a 30-day retention as 29 days: expired a millisecond past, kept at the edge', () => {
    expect(retentionMarginMs(30)).toBe(DAY);
    expect(positionExpired(lastPositionAt(NOW - 29 * DAY - 1), NOW, 30)).toBe(true);
    expect(positionExpired(lastPositionAt(NOW - 29 * DAY), NOW, 30)).toBe(false);
    expect(positionExpired(lastPositionAt(NOW - 60_000), NOW, 30)).toBe(false);
  });

  it('takes a quarter of a retention under four days as its margin, so a recent position is never expired', () => {
    expect(retentionMarginMs(1)).toBe(DAY / 4);
    expect(retentionMarginMs(4)).toBe(DAY);
    expect(positionExpired(lastPositionAt(NOW - 0.75 * DAY - 1), NOW, 1)).toBe(true);
    expect(positionExpired(lastPositionAt(NOW - 0.75 * DAY), NOW, 1)).toBe(false);
  });

  it('treats what is not a position as expired, and says why in words', () => {
    expect(positionExpired('not-a-position', NOW, 30)).toBe(true);
    expect(expiredReason(lastPositionAt(Date.UTC(2026, 10, 1)), 30)).toBe(
      'the mirror stopped at the change log position of 2026-11-01T00:00:00.000Z, and the change log keeps changes ' +
        '30 days: the dataset is copied again from the records',
    );
  });
});
