/**
 * The local server's request log on a terminal: one short line per request — method, path, HTTP status,
 * milliseconds and, for an operation, the read and write units it consumed — instead of the JSON line with its
 * CloudWatch metrics block that a deployment writes (and that `--log json` keeps).
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
        write(line);
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
