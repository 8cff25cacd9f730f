/**
 * What a caller is told about its quota (docs/interface.md §2, §7): the `RateLimit-*` headers for the tightest window
 * and the words of a 4001. Pure functions over the counters the quota store returns.
 */
import {
  RATE_LIMIT_LIMIT_HEADER,
  RATE_LIMIT_REMAINING_HEADER,
  RATE_LIMIT_RESET_HEADER,
} from '../../packages/client/src/headers';
import type { Quota } from '../catalog/catalog';
import { secondsUntil, type WindowKind } from './windows';

/** A quota member: one per window, plus requests in flight. */
export type LimitName = keyof Quota;

export const LIMIT_OF_WINDOW: Readonly<Record<WindowKind, Exclude<LimitName, 'concurrent'>>> = {
  minute: 'perMinute',
  hour: 'perHour',
  day: 'perDay',
};

/** How much of one window an application has used, counting the request at hand when it was admitted. */
export interface WindowUsage {
  kind: WindowKind;
  limit: number;
  used: number;
  /** Epoch ms when the window ends and its count starts again from zero. */
  end: number;
}

export function remainingOf(usage: WindowUsage): number {
  return Math.max(0, usage.limit - usage.used);
}

/**
 * The window that runs out first: fewest requests remaining. On a tie the longer window wins, because it stays
 * exhausted after the shorter one has reset, so it is the one that really limits the caller.
 */
export function tightestWindow(usage: readonly WindowUsage[]): WindowUsage | undefined {
  let tightest: WindowUsage | undefined;
  for (const candidate of usage) {
    if (
      !tightest ||
      remainingOf(candidate) < remainingOf(tightest) ||
      (remainingOf(candidate) === remainingOf(tightest) && candidate.end > tightest.end)
    ) {
      tightest = candidate;
    }
  }
  return tightest;
}

/** `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds) of the tightest window. */
export function rateLimitHeaders(usage: readonly WindowUsage[], now: number): Record<string, string> {
  const tightest = tightestWindow(usage);
  if (!tightest) return {};
  return {
    [RATE_LIMIT_LIMIT_HEADER]: String(tightest.limit),
    [RATE_LIMIT_REMAINING_HEADER]: String(remainingOf(tightest)),
    [RATE_LIMIT_RESET_HEADER]: String(secondsUntil(tightest.end, now)),
  };
}

const LIMIT_WORDS: Readonly<Record<LimitName, string>> = {
  perMinute: 'per-minute limit of',
  perHour: 'per-hour limit of',
  perDay: 'per-day limit of',
  concurrent: 'limit of',
};

/** A 4001 message a caller can act on: which limit, how large, and when to retry. */
export function rateLimitMessage(limit: LimitName, value: number, retryAfterSeconds: number): string {
  const requests = value === 1 ? '1 request' : `${value} requests`;
  const what = limit === 'concurrent' ? `${requests} in flight` : requests;
  return `${LIMIT_WORDS[limit]} ${what} reached; retry after ${retryAfterSeconds} s`;
}
