/**
 * When a failed webhook delivery is tried again (docs/interface.md §18): after about 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 14 h, 20 h and 24 h, each with ±20 % jitter so that receivers coming back are not hit by every sender at
 * once; a `Retry-After` the receiver sends is honoured when it asks for longer (up to a day). After the last
 * failure the event is parked. A local run may run the whole schedule faster (`--webhook-retry-scale`), for tests.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The waits before the second, third, ... tenth attempt. */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

/** The longest wait a receiver's `Retry-After` can ask for. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

export interface RetrySchedule {
  /**
   * The wait before the next attempt after `failures` failed ones (1 = the first attempt failed), or `undefined`
   * when that was the last and the event is parked.
   */
  nextDelay(failures: number, retryAfterMs?: number): number | undefined;
}

/** The schedule, with every wait multiplied by `scale` (1 in a deployment) and `random` for the jitter. */
export function retrySchedule(scale = 1, random: () => number = Math.random): RetrySchedule {
  return {
    nextDelay(failures, retryAfterMs) {
      const base = RETRY_DELAYS_MS[failures - 1];
      if (base === undefined) return undefined;
      const jittered = base * (0.8 + 0.4 * random());
      const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
      return Math.round(Math.max(jittered, asked) * scale);
    },
  };
}
