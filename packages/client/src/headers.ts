/**
 * The headers of the wire protocol, named once: the client and `das` send them, the service reads them and
 * answers with them (docs/interface.md §2, §3, §13, §14, §16, §18). The service imports these names from here.
 */

/** A signed request's headers (§3). */
export const TIME_STAMP_HEADER = 'X-Time-Stamp';
export const APP_CODE_HEADER = 'X-App-Code';
export const DATASET_CODE_HEADER = 'X-Dataset-Code';
export const TOKEN_HEADER = 'X-Token';

/** How far `X-Time-Stamp` may be from the service's clock, either way: a token is good this long (§3). */
export const TIMESTAMP_WINDOW_MS = 10 * 60 * 1000;

/** Signature version 2 (§16): the version, and a nonce new for every request. */
export const SIGN_VERSION_HEADER = 'X-Sign-Version';
export const NONCE_HEADER = 'X-Nonce';

/** A personal access key, on the `/client/` paths (§14). */
export const USER_KEY_HEADER = 'X-User-AK';

/** Create, batch create and update remember their answer under this key (§13)... */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** ...and say so when they answer with the kept one. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * A record's revision (§18): get-one, create and update answer it as `ETag: "<revision>"`; update takes
 * `If-Match: "<revision>"` and changes nothing when the record is at another revision (1001, HTTP 412).
 */
export const ETAG_HEADER = 'ETag';
export const IF_MATCH_HEADER = 'If-Match';

/** Every response's request id (§2). */
export const REQUEST_ID_HEADER = 'X-Request-Id';
/** The tightest quota window of the application (§2, §7): its limit, what is left, seconds until it resets. */
export const RATE_LIMIT_LIMIT_HEADER = 'RateLimit-Limit';
export const RATE_LIMIT_REMAINING_HEADER = 'RateLimit-Remaining';
export const RATE_LIMIT_RESET_HEADER = 'RateLimit-Reset';
/** Seconds to wait before trying again, with 4001. */
export const RETRY_AFTER_HEADER = 'Retry-After';

/** The response headers a browser caller may read (CORS `Access-Control-Expose-Headers`). */
export const READABLE_RESPONSE_HEADERS: readonly string[] = [
  REQUEST_ID_HEADER,
  RATE_LIMIT_LIMIT_HEADER,
  RATE_LIMIT_REMAINING_HEADER,
  RATE_LIMIT_RESET_HEADER,
  RETRY_AFTER_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  ETAG_HEADER,
];
