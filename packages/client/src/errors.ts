/**
 * What the client throws. A failure envelope becomes a `ServiceCallError` subclass per contract error family,
 * so callers can `catch (e) { if (e instanceof NotFoundError) … }` or switch on `e.errorCode`; a call that never
 * got an envelope (timeout, network, a proxy's HTML page) gets its own class without an error code.
 */

import { ErrorCode, type ErrorCodeValue } from './error-codes.js';

export { ErrorCode, type ErrorCodeValue };

export interface ServiceCallErrorDetails {
  errorCode: number;
  errorMsg: string;
  httpStatus: number;
  requestId: string | undefined;
  /** Seconds the service asked the caller to wait (4001). */
  retryAfterSeconds?: number | undefined;
}

/** The service answered with a failure envelope. */
export class ServiceCallError extends Error {
  readonly errorCode: number;
  readonly errorMsg: string;
  readonly httpStatus: number;
  readonly requestId: string | undefined;

  constructor(details: ServiceCallErrorDetails) {
    super(
      `${details.errorMsg} (errorCode ${details.errorCode}, HTTP ${details.httpStatus}` +
        `${details.requestId ? `, request ${details.requestId}` : ''})`,
    );
    this.name = new.target.name;
    this.errorCode = details.errorCode;
    this.errorMsg = details.errorMsg;
    this.httpStatus = details.httpStatus;
    this.requestId = details.requestId;
  }
}

/** 1001: a parameter is missing or malformed; fix the request. */
export class InvalidParameterError extends ServiceCallError {}
/**
 * 1001 with HTTP 412: an update sent with `ifMatch` found the record at another revision and wrote nothing. Read
 * the record again and decide whether the change still applies.
 */
export class PreconditionFailedError extends InvalidParameterError {}
/** 1002, 1003: the signature does not match, or the token is older than 10 minutes. */
export class AuthenticationError extends ServiceCallError {}
/** 1004, 1005, 2002: the application, dataset or record does not exist (for this caller). */
export class NotFoundError extends ServiceCallError {}
/** 1006: the application's grant does not cover this dataset, operation or field. */
export class AccessDeniedError extends ServiceCallError {}
/** 2001: the query ran past its time limit; narrow it. */
export class QueryTimeoutError extends ServiceCallError {}
/** 3001: the service failed; quote `requestId` when reporting it. */
export class InternalServiceError extends ServiceCallError {}

/** 4001: the application's quota is spent; thrown once the client's own retries are used up. */
export class RateLimitedError extends ServiceCallError {
  readonly retryAfterSeconds: number | undefined;
  constructor(details: ServiceCallErrorDetails) {
    super(details);
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** No answer within the client's timeout; the request was aborted. */
export class RequestTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms; the request was aborted`);
    this.name = 'RequestTimeoutError';
  }
}

/** The request did not produce a service envelope: the network failed, or something else answered. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly httpStatus?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/** The one HTTP status a 1001 can have besides 400: an update's `If-Match` was not met (docs/interface.md §18). */
export const PRECONDITION_FAILED_STATUS = 412;

const FAMILIES: Record<ErrorCodeValue, new (details: ServiceCallErrorDetails) => ServiceCallError> = {
  [ErrorCode.InvalidParameter]: InvalidParameterError,
  [ErrorCode.SignatureMismatch]: AuthenticationError,
  [ErrorCode.TimestampExpired]: AuthenticationError,
  [ErrorCode.ApplicationNotFound]: NotFoundError,
  [ErrorCode.DatasetNotFound]: NotFoundError,
  [ErrorCode.DataNotFound]: NotFoundError,
  [ErrorCode.AccessDenied]: AccessDeniedError,
  [ErrorCode.QueryTimeout]: QueryTimeoutError,
  [ErrorCode.Internal]: InternalServiceError,
  [ErrorCode.RateLimited]: RateLimitedError,
};

/** The error of a failure envelope; a code the client does not know yet stays a plain `ServiceCallError`. */
export function serviceCallError(details: ServiceCallErrorDetails): ServiceCallError {
  if (details.errorCode === ErrorCode.InvalidParameter && details.httpStatus === PRECONDITION_FAILED_STATUS) {
    return new PreconditionFailedError(details);
  }
  const family = FAMILIES[details.errorCode as ErrorCodeValue] ?? ServiceCallError;
  return new family(details);
}
