/**
 * Custom SQL on MySQL over the mirror (docs/interface.md §20), over the MySQL protocol: the adapter of
 * sql/mirror-engine.ts that `npm start -- --sql-engine mysql://…` registers.
 *
 * - Read-your-writes: the query first waits, within its limit, until the mirror holds every write acknowledged
 *   before the query started (mirror-feed.ts); past it, 2001 saying how far behind it is.
 * - The limit is the server's: when it runs out, `KILL QUERY` from another connection cancels the statement on
 *   MySQL 8 and MariaDB alike (1317), and the answer is 2001. A connection a KILL was sent to is closed, never
 *   reused, so the KILL can never reach a later statement.
 * - Rows are read as they come and counted as the JSON they become: past the response limit the statement is
 *   cancelled the same way and the answer is 1001, never a truncated result.
 * - A statement MySQL fails answers `MySQL error <number>: <message>`, MySQL's own words.
 * - `NOW()` and `CURDATE()` are in the configuration's time zone: the session's time zone is set to its offset
 *   at the query's moment.
 */
import type { Connection as CoreConnection } from 'mysql2';
import type mysql from 'mysql2/promise';
import { formatTimestamp } from '../records/timestamps';
import type { MirrorQueryEngine, MirrorQueryRequest } from '../sql/mirror-engine';
import type { QueryResult, ResultRow } from '../sql/query-engine';
import type { MirrorFeed } from './mirror-feed';
import { convertRow, mysqlFailure, RowBudget, timedOut, tooLarge } from './query-outcomes';

export interface MysqlQueryEngineOptions {
  database: string;
  reader: mysql.Pool;
  /** Where `KILL QUERY` is sent from: a pool of its own, so a cancel never waits behind busy queries. */
  killer: mysql.Pool;
  feed: Pick<MirrorFeed, 'caughtUp'>;
}

export class MysqlQueryEngine implements MirrorQueryEngine {
  readonly database: string;

  constructor(private readonly options: MysqlQueryEngineOptions) {
    this.database = options.database;
  }

  async run(request: MirrorQueryRequest): Promise<QueryResult> {
    const deadline = request.startedAt + request.timeoutMs;
    await this.options.feed.caughtUp(request.datasets, request.startedAt, deadline, request.statedLimitMs);
    const connection = await this.options.reader.getConnection();
    let stopped: 'time' | 'size' | undefined;
    let killing: Promise<unknown> | undefined;
    const kill = (why: 'time' | 'size') => {
      if (stopped) return;
      stopped = why;
      killing = this.options.killer.query(`KILL QUERY ${Number(connection.threadId)}`).catch(() => undefined);
    };
    const timer = setTimeout(() => kill('time'), Math.max(1, deadline - Date.now()));
    try {
      await connection.query('SET time_zone = ?', [offsetOf(request.timeZone, request.startedAt)]);
      const rows = await readRows(connection, request, () => kill('size'));
      if (stopped === 'size') throw tooLarge();
      if (stopped === 'time') throw timedOut(request.statedLimitMs);
      return { rows };
    } catch (error) {
      if (stopped === 'time') throw timedOut(request.statedLimitMs);
      if (stopped === 'size') throw tooLarge();
      const errno = (error as { errno?: unknown }).errno;
      const message = (error as { sqlMessage?: unknown }).sqlMessage;
      if (typeof errno === 'number' && typeof message === 'string') {
        throw mysqlFailure(errno, message, request.statedLimitMs);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      if (killing) {
        await killing;
        connection.destroy();
      } else connection.release();
    }
  }
}

/** The statement's rows, read one by one; `overflow` is called once they exceed the request's byte limit. */
function readRows(connection: mysql.PoolConnection, request: MirrorQueryRequest, overflow: () => void) {
  return new Promise<ResultRow[]>((resolve, reject) => {
    const rows: ResultRow[] = [];
    const budget = new RowBudget(request.maxBytes);
    let over = false;
    // The callback connection under the promise one: its query emits each row as it arrives.
    const core = connection.connection as unknown as CoreConnection;
    const query = core.query({ sql: request.sql, values: [...request.values] });
    query.on('result', (row: unknown) => {
      if (over) return;
      const converted = convertRow(row as Record<string, unknown>);
      if (!budget.add(converted)) {
        over = true;
        rows.length = 0;
        overflow();
        return;
      }
      rows.push(converted);
    });
    query.on('error', reject);
    query.on('end', () => resolve(rows));
  });
}

/** The time zone's offset from UTC at `epochMs`, as MySQL's time_zone takes it (`+08:00`). */
export function offsetOf(timeZone: string, epochMs: number): string {
  if (timeZone === 'UTC') return '+00:00';
  const local = Date.parse(`${formatTimestamp(new Date(epochMs), timeZone).replace(' ', 'T')}Z`);
  const minutes = Math.round((local - Math.floor(epochMs / 1000) * 1000) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
