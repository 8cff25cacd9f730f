/**
 * The request's one log line (docs/interface.md §11), written when the request ends, from its outcome: who
 * called, the error code if it failed (and, for an unexpected error, its cause, never shown to the caller), the
 * time and capacity it took, the operation's metrics and details, and one line per hook run. Registered
 * before the envelope, so that it runs after the envelope has made the answer.
 */
import type middy from '@middy/core';
import { logHookRuns, logRequest } from '../observability/request-log';
import type { ApiEvent, ApiResult, ServiceContext } from './request';

export interface RequestLogOptions {
  metricNamespace: string;
  now?: () => number;
}

export function requestLog(
  options: RequestLogOptions,
): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const now = options.now ?? Date.now;

  const writeLine: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const outcome = request.context.outcome;
    if (!outcome) return;
    const hookRuns = outcome.hookRuns.splice(0);
    const operation = outcome.route.operation;
    logRequest(
      {
        requestId: outcome.requestId,
        operation,
        appCode: outcome.appCode,
        datasetCode: outcome.datasetCode,
        mode: outcome.route.mode ?? 'signed',
        userId: outcome.userId,
        errorCode: outcome.errorCode,
        durationMs: now() - outcome.startedAt,
        readUnits: outcome.capacity.readUnits,
        writeUnits: outcome.capacity.writeUnits,
        extraMetrics: outcome.metrics,
        detail: { ...outcome.logDetail, ...(outcome.cause ? describeCause(outcome.cause) : {}) },
        hookRuns,
      },
      options.metricNamespace,
    );
    logHookRuns({ requestId: outcome.requestId, operation }, hookRuns, options.metricNamespace);
  };

  return { after: writeLine, onError: writeLine };
}

/** What the log keeps of an unexpected error: its class, message and stack (never shown to the caller). */
function describeCause(error: Error): Record<string, string> {
  const detail: Record<string, string> = { errorName: error.name, errorMessage: error.message };
  if (error.stack) detail.errorStack = error.stack;
  if (error.cause instanceof Error) detail.errorCause = `${error.cause.name}: ${error.cause.message}`;
  return detail;
}
