/**
 * The local server's request log on a terminal: one short line per request — method, path, HTTP status,
 * milliseconds and, for an operation, the read and write units it consumed — instead of the JSON line with its
 * CloudWatch metrics block that a deployment writes (and that `--log json` keeps). Work done beside the requests
 * (the change log's writer, webhook deliveries, folds of per-value totals, index jobs) gets a short line when it did something: a poll that
 * found nothing to do writes none.
 */
import type { AnsweredRequest } from './lambda-http';

interface LoggedRequest {
  errorCode?: number;
  readUnits?: number;
  writeUnits?: number;
  errorMessage?: string;
}

export interface TerminalLog {
  /** Receives the handlers' JSON log lines (the request-log sink). */
  logSink(line: string): void;
  /** Receives every answered request from the HTTP server. */
  onResponse(answered: AnsweredRequest): void;
}

/** `POST /openapi/data/get-list 200 14 ms · 5.5 RU · 2 WU`; a failure adds its error code after the status. */
export function formatRequestLine(answered: AnsweredRequest, logged: LoggedRequest | undefined): string {
  const status = logged?.errorCode === undefined ? `${answered.status}` : `${answered.status} (${logged.errorCode})`;
  const parts = [`${answered.method} ${answered.path} ${status} ${answered.durationMs} ms`];
  if (logged?.readUnits !== undefined) parts.push(`${logged.readUnits} RU`);
  if (logged?.writeUnits !== undefined) parts.push(`${logged.writeUnits} WU`);
  const line = parts.join(' · ');
  return logged?.errorMessage ? `${line} — ${logged.errorMessage}` : line;
}

const text = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? `${value}` : '');

/**
 * A line of work done beside the requests, or undefined when it did nothing worth a line (level INFO and nothing
 * logged, delivered or built). A kind this module does not know is shown as it came.
 */
export function formatBackgroundLine(record: Record<string, unknown>, line: string): string | undefined {
  const quiet = record.level === 'INFO';
  const problem = text(record.error) || text(record.errorMessage) || text(record.reason);
  const withProblem = (summary: string) => (problem ? `${summary} — ${problem}` : summary);
  switch (record.operation) {
    case 'change-log': {
      const logged = Number(record.changeEventsLogged ?? 0);
      if (quiet && logged === 0) return undefined;
      const failed = Number(record.changeBatchFailures ?? 0);
      return withProblem(`change log · ${logged} events logged${failed > 0 ? ` · ${failed} failed` : ''}`);
    }
    case 'webhook-delivery': {
      if (quiet && record.outcome !== 'delivered') return undefined;
      const status = record.status === undefined ? '' : ` · HTTP ${text(record.status)}`;
      const attempt = record.attempt === undefined ? '' : ` · attempt ${text(record.attempt)}`;
      return withProblem(
        `webhook ${text(record.subscription)} ${text(record.outcome)} ${text(record.eventId)}${status}${attempt}`,
      );
    }
    case 'value-fold': {
      const folded = Number(record.valueFoldRecords ?? 0);
      if (quiet && folded === 0) return undefined;
      return withProblem(`totals ${text(record.datasetCode)} · ${folded} records folded`);
    }
    case 'index-job': {
      const records = Number(record.indexBuildRecords ?? 0);
      if (quiet && records === 0) return undefined;
      return withProblem(`index job ${text(record.datasetCode)} ${text(record.step)} · ${records} records`);
    }
    default:
      return line;
  }
}

export function createTerminalLog(write: (line: string) => void): TerminalLog {
  const pending = new Map<string, LoggedRequest>();
  return {
    logSink(line) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        write(line);
        return;
      }
      if (typeof record.requestId !== 'string') {
        const background = formatBackgroundLine(record, line);
        if (background !== undefined) write(background);
        return;
      }
      pending.set(record.requestId, {
        ...(typeof record.errorCode === 'number' ? { errorCode: record.errorCode } : {}),
        ...(typeof record.readUnits === 'number' ? { readUnits: record.readUnits } : {}),
        ...(typeof record.writeUnits === 'number' ? { writeUnits: record.writeUnits } : {}),
        // A 3001's cause, which the caller only sees as a request id.
        ...(typeof record.errorMessage === 'string' ? { errorMessage: record.errorMessage } : {}),
      });
    },
    onResponse(answered) {
      const logged = answered.requestId ? pending.get(answered.requestId) : undefined;
      if (answered.requestId) pending.delete(answered.requestId);
      write(formatRequestLine(answered, logged));
    },
  };
}
