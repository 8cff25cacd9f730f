/**
 * One run of the mirror in a deployment (docs/interface.md §20, docs/deploying.md "Custom SQL on Aurora"): the
 * mirror function is started by a schedule every minute, and each run keeps the mirror in step with the change log
 * for a little more than that minute, with the same rounds `npm start` runs (mirror-feed.ts): a round notes the
 * time, waits until the change log holds what was acknowledged before it, applies what it holds past the position
 * saved for good, and saves that the mirror held everything acknowledged before the round started, which is what
 * queries wait for. A dataset new to the mirror is backfilled beside the rounds, a page at a time, each page saved:
 * the next run goes on where this one stopped. A dataset whose saved position is older than what the change log
 * still holds (the function failing or the cluster unreachable past the retention) is backfilled again the same
 * way, and the run's log line names it.
 *
 * Runs overlap by a few seconds, so a query never waits on a gap between two of them; two rounds at once are
 * harmless (upserts guarded by revision, positions only ever applied again).
 */
import type { MirrorRunEntry } from '../observability/mirror-metrics';
import { MirrorFeed, type MirrorFeedOptions } from './mirror-feed';

export interface MirrorRunOptions extends Omit<MirrorFeedOptions, 'onError' | 'idleMs' | 'onBackfillAgain'> {
  /** How long the run keeps the mirror in step (ms). */
  runMs: number;
  /** Time left before the function is stopped (ms); the run ends `marginMs` before it whatever `runMs` says. */
  remainingMs(): number;
  marginMs: number;
}

/** Runs rounds until the run's end; answers what the run's log line says. */
export async function runMirror(options: MirrorRunOptions): Promise<MirrorRunEntry> {
  const now = options.now ?? Date.now;
  const started = now();
  const errors: unknown[] = [];
  const entry: MirrorRunEntry = { rounds: 0, failedRounds: 0, backfilling: 0, backfilledAgain: [], durationMs: 0 };
  const feed = new MirrorFeed({
    ...options,
    idleMs: 250,
    onError: (error) => errors.push(error),
    onBackfillAgain: (datasetCode) => entry.backfilledAgain.push(datasetCode),
  });
  const ends = () => now() - started >= options.runMs || options.remainingMs() <= options.marginMs;
  let codes: string[] = [];
  feed.start();
  try {
    while (!ends()) {
      const before = errors.length;
      await feed.round();
      entry.rounds += 1;
      if (errors.length > before) {
        entry.failedRounds += 1;
        continue;
      }
      codes = (await options.datasets()).map((dataset) => dataset.datasetCode);
      for (const code of codes) {
        const lag = feed.lagSeconds(code);
        if (lag !== undefined) entry.lagSeconds = Math.max(entry.lagSeconds ?? 0, lag);
      }
      // Rounds applied the change log: with nothing to copy, the mirror is as far as the round's own time.
      entry.lagSeconds ??= 0;
    }
  } finally {
    await feed.stop();
  }
  entry.backfilling = codes.filter((code) => feed.lagSeconds(code) === undefined).length;
  entry.durationMs = now() - started;
  const last = errors.at(-1);
  if (last !== undefined) entry.error = last instanceof Error ? `${last.name}: ${last.message}` : String(last);
  return entry;
}
