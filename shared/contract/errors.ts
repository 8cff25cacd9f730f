/**
 * The contract's error codes (docs/interface.md §2) as typed errors. Domain code throws these; the envelope
 * middleware is the only place that turns one into a response. The codes themselves are the client package's
 * (packages/client/src/error-codes.ts): callers and the service read one table.
 */
import { ErrorCode, type ErrorCodeValue } from '../../packages/client/src/error-codes';

export { ErrorCode, type ErrorCodeValue };

const HTTP_STATUS: Record<ErrorCodeValue, number> = {
  1001: 400,
  1002: 401,
  1003: 401,
  1004: 404,
  1005: 404,
  1006: 403,
  2001: 504,
  2002: 404,
  3001: 500,
  4001: 429,
};

/** The HTTP status that goes with an error code, so that gateways and dashboards count failures right. */
export function httpStatusFor(code: ErrorCodeValue): number {
  return HTTP_STATUS[code];
}

/** An error whose message is safe to show the caller. */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCodeValue,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }

  /** The HTTP status of the answer: the code's, unless the error says otherwise. */
  get httpStatus(): number {
    return httpStatusFor(this.code);
  }
}

export class InvalidParameterError extends ServiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.InvalidParameter, message, options);
  }
}

/**
 * An update sent with `If-Match` for a revision the record is no longer at (docs/interface.md §18): nothing was
 * written. A 1001 like any refused parameter, answered with HTTP 412, the one 1001 not answered with 400.
 */
export class RevisionMismatchError extends InvalidParameterError {
  override get httpStatus(): number {
    return PRECONDITION_FAILED;
  }
}

/** The status of `RevisionMismatchError`. */
export const PRECONDITION_FAILED = 412;

export class SignatureMismatchError extends ServiceError {
  constructor(message = 'signature verification failed: X-Token does not match the signed headers') {
    super(ErrorCode.SignatureMismatch, message);
  }
}

export class TimestampExpiredError extends ServiceError {
  constructor(
    message = 'X-Time-Stamp is more than 10 minutes away from the server clock; sign the request again with the current time',
  ) {
    super(ErrorCode.TimestampExpired, message);
  }
}

export class ApplicationNotFoundError extends ServiceError {
  constructor(appCode: string) {
    super(ErrorCode.ApplicationNotFound, `application '${appCode}' not found`);
  }
}

export class DatasetNotFoundError extends ServiceError {
  constructor(datasetCode: string) {
    super(ErrorCode.DatasetNotFound, `dataset '${datasetCode}' not found`);
  }
}

export class AccessDeniedError extends ServiceError {
  constructor(message: string) {
    super(ErrorCode.AccessDenied, message);
  }
}

/**
 * 2001. `retryAfterSeconds`: the work goes on after this answer (a dataset's load for custom SQL), and a retry after
 * that many seconds may find it done; answered with a `Retry-After` header.
 */
export class QueryTimeoutError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(ErrorCode.QueryTimeout, message);
  }
}

export class DataNotFoundError extends ServiceError {
  constructor(message: string) {
    super(ErrorCode.DataNotFound, message);
  }
}

/** A failure of ours. Its message is for the log; the caller sees only a generic text and the request id. */
export class InternalError extends ServiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Internal, message, options);
  }
}

/**
 * A failure of ours that the caller is told about in words (3001): a dependency the service needs is out of
 * reach, and retrying later is the remedy. The message names no internals.
 */
export class ServiceUnavailableError extends ServiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Internal, message, options);
  }
}

export class RateLimitedError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(ErrorCode.RateLimited, message);
  }
}
