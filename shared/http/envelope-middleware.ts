/**
 * The outermost step of every request: gives it its id and starts its outcome (request.ts), turns the
 * operation's result into the success envelope and every error into the failure envelope with its HTTP status
 * (docs/interface.md §2), and refuses responses too large for the platform. The only place where errors become
 * responses; the request's log line is written from the outcome afterwards (request-log-middleware.ts).
 */
import type middy from '@middy/core';
import { RETRY_AFTER_HEADER } from '../../packages/client/src/headers';
import {
  ErrorCode,
  httpStatusFor,
  InvalidParameterError,
  QueryTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
} from '../contract/errors';
import type { RouteDefinition } from '../contract/routes';
import { type ApiEvent, type ApiResult, RequestOutcome, type ServiceContext } from './request';

/** Lambda's synchronous response limit is 6 MB for the whole proxy result; keep room for headers. */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024 - 64 * 1024;

export interface EnvelopeOptions {
  route: RouteDefinition;
  /** Headers every response carries (CORS). */
  responseHeaders?: Record<string, string>;
  now?: () => number;
}

export function envelope(options: EnvelopeOptions): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const now = options.now ?? Date.now;

  const start = (context: ServiceContext, requestId: string): RequestOutcome => {
    const outcome = new RequestOutcome(requestId, options.route, now());
    Object.assign(outcome.responseHeaders, options.responseHeaders);
    context.outcome = outcome;
    return outcome;
  };

  const startRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    start(request.context, request.event.requestContext?.requestId || request.context.awsRequestId);
  };

  const respondWithData: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const outcome = request.context.outcome;
    const body = JSON.stringify({ success: true, msg: null, data: request.response ?? null });
    if (Buffer.byteLength(body) > MAX_RESPONSE_BYTES) {
      request.response = failure(
        outcome,
        new InvalidParameterError(
          'the response would exceed the 6 MB payload limit; ask for fewer records (pageSize) or fewer fields (select)',
        ),
      );
      return;
    }
    request.response = { statusCode: 200, headers: jsonHeaders(outcome.responseHeaders), body };
  };

  const respondWithError: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const outcome = request.context.outcome ?? start(request.context, request.context.awsRequestId);
    request.response = failure(outcome, request.error ?? new Error('unknown failure'));
  };

  return { before: startRequest, after: respondWithData, onError: respondWithError };
}

/** The failure envelope of an error; the outcome keeps its code, and an unexpected error's cause for the log. */
function failure(outcome: RequestOutcome, error: Error): ApiResult {
  const known = error instanceof ServiceError && error.code !== ErrorCode.Internal;
  const code = known ? (error as ServiceError).code : ErrorCode.Internal;
  const status = known ? (error as ServiceError).httpStatus : httpStatusFor(code);
  const message = known
    ? error.message
    : error instanceof ServiceUnavailableError
      ? `${error.message}; quote request id ${outcome.requestId} if it persists`
      : `internal error; quote request id ${outcome.requestId} when reporting it`;
  const headers = { ...outcome.responseHeaders };
  if (error instanceof RateLimitedError) headers[RETRY_AFTER_HEADER] = String(error.retryAfterSeconds);
  if (error instanceof QueryTimeoutError && error.retryAfterSeconds !== undefined)
    headers[RETRY_AFTER_HEADER] = String(error.retryAfterSeconds);
  outcome.errorCode = code;
  if (!known) outcome.cause = error;
  return {
    statusCode: status,
    headers: jsonHeaders(headers),
    body: JSON.stringify({ success: false, msg: null, data: null, errorCode: code, errorMsg: message }),
  };
}

function jsonHeaders(headers: Record<string, string>): Record<string, string> {
  return { 'Content-Type': 'application/json; charset=utf-8', ...headers };
}
