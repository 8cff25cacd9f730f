/**
 * What both adapters of the MySQL engine answer (docs/interface.md §20), whatever the transport: rows as the
 * service's cells, the response limit counted as the JSON the rows become, and MySQL's failures as the contract's
 * errors (2001 for a statement stopped at its limit, 1001 past the response limit, `MySQL error <n>: <message>`).
 */
import { InvalidParameterError, QueryTimeoutError } from '../contract/errors';
import { type ResultRow, SqlStatementError, type SqlValue } from '../sql/query-engine';

/** The error MySQL and MariaDB answer a statement a KILL QUERY stopped. */
export const ER_QUERY_INTERRUPTED = 1317;

export function timedOut(limitMs: number, retryAfterSeconds?: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `the query ran longer than its limit of ${limitMs} ms and was stopped`,
    ...(retryAfterSeconds === undefined ? [] : [retryAfterSeconds]),
  );
}

export function tooLarge(): InvalidParameterError {
  return new InvalidParameterError(
    'the query answers more than the 10 MB a response may carry: select fewer rows (LIMIT, WHERE) or fewer columns',
  );
}

/** A statement MySQL failed, in MySQL's own words (`timeLimitMs`: a cancelled statement is the time limit's). */
export function mysqlFailure(errno: number, message: string, timeLimitMs: number): Error {
  if (errno === ER_QUERY_INTERRUPTED) return timedOut(timeLimitMs);
  return new SqlStatementError(`MySQL error ${errno}: ${message}`);
}

/** Counts rows as the JSON of the response: `add` answers false once they pass the limit. */
export class RowBudget {
  private bytes = 2;

  constructor(private readonly maxBytes: number) {}

  add(row: ResultRow): boolean {
    this.bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
    return this.bytes <= this.maxBytes;
  }
}

export function convertRow(row: Record<string, unknown>): ResultRow {
  const out: ResultRow = {};
  for (const [name, value] of Object.entries(row)) out[name] = cellOf(value);
  return out;
}

function cellOf(value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

/** 2001 for a query whose datasets' mirror did not catch up within its limit, saying how far behind each is. */
export function mirrorBehindError(
  behind: readonly { datasetCode: string; copying: boolean; caughtUpAt: number; staleSince?: number }[],
  statedLimitMs: number,
  now: number,
): QueryTimeoutError {
  const parts = behind.map(({ datasetCode, copying, caughtUpAt, staleSince }) => {
    // Copied again: the mirror is as far behind as the position it had stopped at.
    if (copying && staleSince) {
      return (
        `dataset '${datasetCode}' is ${Math.ceil((now - staleSince) / 1000)} s behind and being copied into it ` +
        'again, its changes since then no longer in the change log'
      );
    }
    return copying
      ? `dataset '${datasetCode}' is still being copied into it`
      : `dataset '${datasetCode}' is ${Math.ceil((now - caughtUpAt) / 1000)} s behind`;
  });
  return new QueryTimeoutError(
    `the MySQL mirror did not catch up with the writes made before this query within its limit of ` +
      `${statedLimitMs} ms (${parts.join('; ')}); try again shortly`,
  );
}
