/** A statement's moment for the SQL dialect's rendering, as execute-sql builds it: epoch and local time text. */
import { formatTimestamp } from '../../shared/records/timestamps';
import type { StatementClock } from '../../shared/sql-dialect/dialect';

export function clock(date: Date, timeZone: string): StatementClock {
  return { epochMs: date.getTime(), local: () => formatTimestamp(date, timeZone) };
}
