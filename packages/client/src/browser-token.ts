/**
 * Pre-generated tokens (docs/interface.md §3): a trusted server that holds the access key
 * mints `{token, timeStamp, expiresAt}`, and a browser sends token and timestamp without ever seeing the key.
 * The token is an ordinary signature, so the service verifies it like any other; `expiresAt` only tells the
 * browser when to ask for a new one. The platform's existing browser helpers read `timestamp` (a number), so
 * the answer carries it too, beside `timeStamp`.
 */
import { TIMESTAMP_WINDOW_MS } from './headers.js';
import { type SignatureInput, signRequest } from './signature.js';

/** How long a token is accepted: 10 minutes either side of the service's clock (docs/interface.md §3). */
export const TOKEN_LIFETIME_MS = TIMESTAMP_WINDOW_MS;

export interface BrowserToken {
  token: string;
  /** Milliseconds since the epoch as text, exactly what goes into X-Time-Stamp. */
  timeStamp: string;
  /** The same instant as a number, for the platform's browser helpers that read `timestamp`. */
  timestamp: number;
  /** Milliseconds since the epoch after which the service answers 1003. */
  expiresAt: number;
}

export function mintBrowserToken(
  request: Omit<SignatureInput, 'timeStamp'>,
  secret: string,
  now: number = Date.now(),
): BrowserToken {
  const timeStamp = String(now);
  return {
    token: signRequest({ ...request, timeStamp }, secret),
    timeStamp,
    timestamp: now,
    expiresAt: now + TOKEN_LIFETIME_MS,
  };
}
