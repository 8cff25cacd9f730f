/**
 * `npm start`'s twin of DynamoDB's TTL (shared/storage/expired-items.ts): a pass over the tables with an expiry
 * attribute every hour (the first a few minutes after the start), a page at a time with a pause between pages so that requests keep their share of the
 * process, deleting what has expired. Nothing depends on when it runs; stopping it mid-pass loses nothing.
 */
import type { ExpiredItems } from '../../shared/storage/expired-items';

export interface LocalExpiryOptions {
  /** Time between the start of one pass and the next (ms). */
  everyMs: number;
  /** Wait before the first pass (ms): a start is not slowed by it. */
  firstAfterMs: number;
  /** Pause between two pages of a pass (ms). */
  pauseMs: number;
  clock: () => number;
  onPass?: (deleted: number) => void;
  onError?: (error: unknown) => void;
}

export interface LocalExpiry {
  stop(): Promise<void>;
}

export function startLocalExpiry(expiry: ExpiredItems, options: LocalExpiryOptions): LocalExpiry {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = async () => {
    await sleep(options.firstAfterMs);
    while (!stopped) {
      const started = options.clock();
      try {
        let deleted = 0;
        for (;;) {
          const step = await expiry.step(options.clock());
          deleted += step.deleted;
          if (step.done || stopped) break;
          await sleep(options.pauseMs);
        }
        options.onPass?.(deleted);
      } catch (error) {
        options.onError?.(error);
      }
      if (!stopped) await sleep(Math.max(0, started + options.everyMs - options.clock()));
    }
  };
  const running = loop();
  return {
    stop: async () => {
      stopped = true;
      wake?.();
      await running;
    },
  };
}
