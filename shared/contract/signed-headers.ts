/**
 * What the signed headers promise a caller (docs/interface.md §3): how far `X-Time-Stamp` may
 * be from the server clock. Authentication enforces it; browser tokens and the OpenAPI document state it.
 */

/** A token may be this far from the server clock, either way. */
export const TIMESTAMP_WINDOW_MS = 10 * 60 * 1000;
