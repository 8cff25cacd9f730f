/**
 * Custom SQL on Aurora MySQL over the mirror (docs/interface.md §20), through the RDS Data API: the adapter of
 * sql/mirror-engine.ts a deployment registers (`SQL_ENGINE=aurora`). Each query runs in a Data API transaction of
 * its own, as the query user (its own secret, SELECT on the mirror's tables and CREATE TEMPORARY TABLES only):
 *
 * - Time limit: the transaction pins one database session; its id (`CONNECTION_ID()`) is read first, and when the
 *   limit runs out `KILL QUERY <id>` is sent as the same user, as the MySQL-protocol adapter does. That stops any
 *   statement (MAX_EXECUTION_TIME covers read-only SELECTs only, not the paging's CREATE … SELECT), and the answer
 *   is 2001. The kill is awaited before the transaction ends, so it can never reach a later caller's statement on
 *   the Data API's pooled session. The Data API's own limit (StatementTimeoutException) is 2001 too.
 * - Results whole up to 10 MB although one Data API response carries at most 1 MiB: the statement runs as sent and
 *   most results fit. When the Data API refuses a response as too large, the statement runs again in a new
 *   transaction into a temporary table numbered in the statement's row order, and the rows are read back in pages
 *   cut at about 512 KiB by the rows' own JSON sizes, counted against 10 MB (1001 beyond it).
 * - An auto-paused cluster resuming (DatabaseResumingException) is retried within the query's limit; past it,
 *   2001 with Retry-After.
 * - A statement MySQL fails answers `MySQL error <number>: <message>`, MySQL's own words.
 */
import { type RDSDataClient, StatementTimeoutException } from '@aws-sdk/client-rds-data';
import { InvalidParameterError, QueryTimeoutError } from '../contract/errors';
import type { MirrorQueryEngine, MirrorQueryRequest } from '../sql/mirror-engine';
import type { QueryResult, ResultRow } from '../sql/query-engine';
import { DataApiCalls } from './data-api-calls';
import { pagedRows, TooLargeForOnePage } from './data-api-paging';
import type { MirrorFeed } from './mirror-feed';
import { offsetOf } from './mysql-query-engine';
import { convertRow, mysqlFailure, RowBudget, timedOut, tooLarge } from './query-outcomes';

export interface DataApiQueryEngineOptions {
  client: RDSDataClient;
  resourceArn: string;
  /** The query user's secret. */
  secretArn: string;
  database: string;
  feed: Pick<MirrorFeed, 'caughtUp'>;
  /** Pause between tries while the cluster resumes (ms). */
  resumePollMs?: number;
}

const DATABASE_ERROR = /^Database error code: (\d+)\. Message: ([\s\S]*)$/;
const RESPONSE_TOO_LARGE = /response size limit/i;

export class DataApiQueryEngine implements MirrorQueryEngine {
  readonly database: string;

  constructor(private readonly options: DataApiQueryEngineOptions) {
    this.database = options.database;
  }

  async run(request: MirrorQueryRequest): Promise<QueryResult> {
    const deadline = request.startedAt + request.timeoutMs;
    await this.options.feed.caughtUp(request.datasets, request.startedAt, deadline, request.statedLimitMs);
    const calls = () =>
      new DataApiCalls(this.options, deadline, request.statedLimitMs, this.options.resumePollMs ?? 1_000);
    try {
      const whole = await this.inTransaction(calls(), request, deadline, async (c) =>
        c.rows(request.sql, request.values),
      );
      if (whole !== undefined) return { rows: withinLimit(whole, request.maxBytes) };
      const paged = await this.inTransaction(calls(), request, deadline, (c) => pagedRows(c, request));
      return { rows: paged ?? [] };
    } catch (error) {
      throw answerOf(error, request.statedLimitMs);
    }
  }

  /**
   * `work` in a transaction of its own whose statements are cancelled at the deadline; undefined when the Data
   * API refused the answer as larger than one response.
   */
  private async inTransaction<T>(
    calls: DataApiCalls,
    request: MirrorQueryRequest,
    deadline: number,
    work: (calls: DataApiCalls) => Promise<T>,
  ): Promise<T | undefined> {
    await calls.begin();
    let stopped = false;
    let killing: Promise<unknown> | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const [session] = await calls.rows('SELECT CONNECTION_ID() AS id');
      const id = Number(session?.id);
      await calls.rows('SET time_zone = ?', [offsetOf(request.timeZone, request.startedAt)]);
      timer = setTimeout(
        () => {
          stopped = true;
          killing = calls.rows(`KILL QUERY ${id}`, [], true).catch(() => undefined);
        },
        Math.max(1, deadline - Date.now()),
      );
      return await work(calls);
    } catch (error) {
      if (stopped) throw timedOut(request.statedLimitMs);
      if (error instanceof Error && RESPONSE_TOO_LARGE.test(error.message) && !(error instanceof TooLargeForOnePage)) {
        return undefined;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      await killing;
      await calls.end();
    }
  }
}

function withinLimit(rows: Record<string, unknown>[], maxBytes: number): ResultRow[] {
  const budget = new RowBudget(maxBytes);
  return rows.map((row) => {
    const converted = convertRow(row);
    if (!budget.add(converted)) throw tooLarge();
    return converted;
  });
}

/** A Data API failure as the contract's answer. */
function answerOf(error: unknown, limitMs: number): unknown {
  if (error instanceof QueryTimeoutError || error instanceof InvalidParameterError) return error;
  if (error instanceof StatementTimeoutException) return timedOut(limitMs);
  if (error instanceof TooLargeForOnePage) return error.answer();
  const match = error instanceof Error ? DATABASE_ERROR.exec(error.message) : null;
  if (match) return mysqlFailure(Number(match[1]), match[2] as string, limitMs);
  return error;
}
