/**
 * The outermost middleware: gives every request an id, turns the operation's result into the success envelope
 * and every error into the failure envelope with its HTTP status (docs/interface.md §2), refuses responses too large
 * for the platform, and writes the request's log line. The only place where errors become responses.
 */
import type middy from '@middy/core';
import {
  ErrorCode,
  httpStatusFor,
  InvalidParameterError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
} from '../contract/errors';
import type { RouteDefinition } from '../contract/routes';
import { logHookRuns, logRequest } from '../observability/request-log';
import { type ApiEvent, type ApiResult, newRequestState, type ServiceContext } from './request-state';

/** Lambda's synchronous response limit is 6 MB for the whole proxy result; keep room for headers. */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024 - 64 * 1024;

export interface EnvelopeOptions {
  route: RouteDefinition;
  metricNamespace: string;
  /** Headers every response carries (CORS). */
  responseHeaders?: Record<string, string>;
  now?: () => number;
}

export function envelope(options: EnvelopeOptions): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const now = options.now ?? Date.now;

  const startRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const requestId = request.event.requestContext?.requestId || request.context.awsRequestId;
    request.context.state = newRequestState(options.route, requestId, now());
    Object.assign(request.context.state.responseHeaders, options.responseHeaders);
  };

  const respondWithData: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const state = request.context.state;
    const body = JSON.stringify({ success: true, msg: null, data: request.response ?? null });
    if (Buffer.byteLength(body) > MAX_RESPONSE_BYTES) {
      request.response = await failure(
        request.context,
        new InvalidParameterError(
          'the response would exceed the 6 MB payload limit; ask for fewer records (pageSize) or fewer fields (select)',
        ),
      );
      return;
    }
    await finish(request.context);
    request.response = { statusCode: 200, headers: jsonHeaders(state.responseHeaders), body };
  };

  const respondWithError: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    if (!request.context.state) {
      request.context.state = newRequestState(options.route, request.context.awsRequestId, now());
      Object.assign(request.context.state.responseHeaders, options.responseHeaders);
    }
    request.response = await failure(request.context, request.error ?? new Error('unknown failure'));
  };

  async function failure(context: ServiceContext, error: Error): Promise<ApiResult> {
    const state = context.state;
    const known = error instanceof ServiceError && error.code !== ErrorCode.Internal;
    const code = known ? (error as ServiceError).code : ErrorCode.Internal;
    const message = known
      ? error.message
      : error instanceof ServiceUnavailableError
        ? `${error.message}; quote request id ${state.requestId} if it persists`
        : `internal error; quote request id ${state.requestId} when reporting it`;
    const headers = { ...state.responseHeaders };
    if (error instanceof RateLimitedError) headers['Retry-After'] = String(error.retryAfterSeconds);
    await finish(context, code, known ? undefined : error);
    return {
      statusCode: httpStatusFor(code),
      headers: jsonHeaders(headers),
      body: JSON.stringify({ success: false, msg: null, data: null, errorCode: code, errorMsg: message }),
    };
  }

  async function finish(context: ServiceContext, errorCode?: number, cause?: Error): Promise<void> {
    const state = context.state;
    // An admission still in flight (a read stopped early) must register its lease release before cleanups run.
    await state.admission?.catch(() => undefined);
    const cleanups = state.cleanups.splice(0);
    const hookRuns = state.hookRuns.splice(0);
    await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
    logRequest(
      {
        requestId: state.requestId,
        operation: state.route.operation,
        appCode: state.application?.appCode,
        datasetCode: state.dataset?.datasetCode,
        mode: state.route.mode ?? 'signed',
        userId: state.caller?.user?.userId,
        errorCode,
        durationMs: now() - state.startedAt,
        readUnits: state.capacity.readUnits,
        writeUnits: state.capacity.writeUnits,
        extraMetrics: state.extraMetrics,
        detail: { ...state.logDetail, ...(cause ? describeCause(cause) : {}) },
        hookRuns,
      },
      options.metricNamespace,
    );
    logHookRuns({ requestId: state.requestId, operation: state.route.operation }, hookRuns, options.metricNamespace);
  }

  return { before: startRequest, after: respondWithData, onError: respondWithError };
}

function jsonHeaders(headers: Record<string, string>): Record<string, string> {
  return { 'Content-Type': 'application/json; charset=utf-8', ...headers };
}

/** What the log keeps of an unexpected error: its class, message and stack (never shown to the caller). */
function describeCause(error: Error): Record<string, string> {
  const detail: Record<string, string> = { errorName: error.name, errorMessage: error.message };
  if (error.stack) detail.errorStack = error.stack;
  if (error.cause instanceof Error) detail.errorCause = `${error.cause.name}: ${error.cause.message}`;
  return detail;
}
