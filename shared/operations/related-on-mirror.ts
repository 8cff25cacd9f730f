/**
 * get-list's engine beyond the read budget (docs/interface.md §21): on a service that runs custom SQL on MySQL
 * (§20), a list naming related fields that the read budget cannot serve runs there, over the mirror, as one
 * statement (sql/related-join-sql.ts), and a second one only for a page past the last row, which carries no total.
 * As every query on MySQL, it first waits until the mirror holds every write acknowledged before the request
 * started, within its limit (else 2001 saying how far the mirror is behind), and the server enforces that limit.
 */
import type { DataOperationContext } from '../operation/operation';
import type { RelatedEngine, RelatedSelectionRunner } from '../query/related-beyond-budget';
import type { MirrorQueryEngine } from '../sql/mirror-engine';
import { relatedJoinStatements } from '../sql/related-join-sql';
import { MAX_RESULT_BYTES } from './mirror-statement';

/**
 * What the statements may take from the request's start, waiting for the mirror included: within get-list's
 * function timeout (15 s), with time left to read the page's records.
 */
export const RELATED_ON_MYSQL_LIMIT_MS = 10_000;

/** The engine the process registered (`mirror`), for each request; none registered: none (2001 as before). */
export function relatedOnMirror(mirror: () => MirrorQueryEngine | undefined): RelatedEngine {
  return (context) => {
    const engine = mirror();
    return engine ? runner(engine, context, context.now()) : undefined;
  };
}

function runner(engine: MirrorQueryEngine, context: DataOperationContext, startedAt: number): RelatedSelectionRunner {
  return async (selection) => {
    const statements = relatedJoinStatements(engine.database, context.caller, selection);
    const run = async (sql: string) => {
      const left = context.deadline === undefined ? Number.POSITIVE_INFINITY : context.deadline - startedAt;
      const result = await engine.run({
        sql,
        values: [],
        datasets: statements.datasets,
        startedAt,
        timeZone: context.catalog.config.timeZone ?? 'UTC',
        timeoutMs: Math.max(1, Math.min(RELATED_ON_MYSQL_LIMIT_MS, left)),
        statedLimitMs: RELATED_ON_MYSQL_LIMIT_MS,
        maxBytes: MAX_RESULT_BYTES,
      });
      return result.rows;
    };
    const rows = await run(statements.page);
    const counted = rows.length > 0 ? rows : await run(statements.count);
    return {
      ids: rows.map((row) => String(row.id)),
      totalCount: Number(counted[0]?.das$total ?? 0),
    };
  };
}
