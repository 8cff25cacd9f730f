/**
 * Read-your-writes where the mirror's writer runs elsewhere (a deployment, docs/interface.md §20): a query waits,
 * within its limit, until the bookkeeping row of each dataset it reads says a round that began after the query
 * started has been applied (`caught_up_at`) and its backfill is done, reading that row through the Data API as
 * the query user every quarter second; past the limit, 2001 saying how far behind the mirror is.
 */

import { DataApiCalls } from './data-api-calls';
import type { DataApiTarget } from './data-api-session';
import { quoteIdentifier, STATE_TABLE } from './mirror-names';
import { mirrorBehindError } from './query-outcomes';

const POLL_MS = 250;

export class MirrorStateWait {
  constructor(
    private readonly target: DataApiTarget,
    private readonly pollMs: number = POLL_MS,
  ) {}

  async caughtUp(datasets: readonly string[], since: number, deadline: number, statedLimitMs: number): Promise<void> {
    if (datasets.length === 0) return;
    const calls = new DataApiCalls(this.target, deadline, statedLimitMs, this.pollMs);
    for (;;) {
      const rows = await calls.rows(
        // Every column: a table an earlier version made lacks `stale_since` until the writer's next run adds it.
        `SELECT * FROM ${quoteIdentifier(STATE_TABLE)} WHERE dataset_code IN (${datasets.map(() => '?').join(', ')})`,
        datasets,
        true,
      );
      const state = new Map(rows.map((row) => [String(row.dataset_code), row]));
      const behind = datasets.flatMap((datasetCode) => {
        const row = state.get(datasetCode);
        const caughtUpAt = Number(row?.caught_up_at ?? 0);
        const copying = Number(row?.backfill_done ?? 0) !== 1;
        const staleSince = Number(row?.stale_since ?? 0);
        return copying || caughtUpAt < since ? [{ datasetCode, copying, caughtUpAt, staleSince }] : [];
      });
      if (behind.length === 0) return;
      const now = Date.now();
      if (now + this.pollMs > deadline) throw mirrorBehindError(behind, statedLimitMs, now);
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
  }
}
