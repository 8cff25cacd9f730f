/**
 * Pre-generated tokens (docs/interface.md §3): a trusted server that holds the access key
 * mints `{token, timeStamp, expiresAt}`, and a browser sends token and timestamp without ever seeing the key.
 * The token is an ordinary signature, so the service verifies it like any other; `expiresAt` only tells the
 * browser when to ask for a new one.
 */
import { TIMESTAMP_WINDOW_MS } from '../contract/signed-headers';
import { type SignatureInput, signRequest } from './signature';

export interface BrowserToken {
  token: string;
  /** Milliseconds since the epoch as text, exactly what goes into X-Time-Stamp. */
  timeStamp: string;
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
    expiresAt: now + TIMESTAMP_WINDOW_MS,
  };
}
