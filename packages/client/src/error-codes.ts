/**
 * The contract's error codes (docs/interface.md §2), named once: the client's errors (errors.ts) and the service
 * (shared/contract/errors.ts, which pairs each with its HTTP status and typed error) import them from here.
 */
export const ErrorCode = {
  InvalidParameter: 1001,
  SignatureMismatch: 1002,
  TimestampExpired: 1003,
  ApplicationNotFound: 1004,
  DatasetNotFound: 1005,
  AccessDenied: 1006,
  QueryTimeout: 2001,
  DataNotFound: 2002,
  Internal: 3001,
  RateLimited: 4001,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];
