/**
 * Request signing (docs/interface.md §3). The same module signs in clients and the
 * command-line tool and verifies in the service, so the two cannot drift.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignatureInput {
  accessKey: string;
  appCode: string;
  /** Only when the request names a dataset. */
  datasetCode?: string | undefined;
  /** Milliseconds since the epoch, exactly as sent in X-Time-Stamp. */
  timeStamp: string | number;
}

/** The sorted `name=value` pairs joined by `&` that the HMAC covers. */
export function buildStringToSign(input: SignatureInput): string {
  const pairs: [string, string][] = [
    ['accessKey', input.accessKey],
    ['appCode', input.appCode],
    ['timeStamp', String(input.timeStamp)],
  ];
  if (input.datasetCode !== undefined && input.datasetCode !== '') pairs.push(['datasetCode', input.datasetCode]);
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** The X-Token for a request: base64 of HMAC-SHA256 over the string to sign. */
export function signRequest(input: SignatureInput, secret: string): string {
  return createHmac('sha256', secret).update(buildStringToSign(input), 'utf8').digest('base64');
}

const SHA256_BYTES = 32;

/**
 * Whether `token` is the signature of the request under one of `accessKeys` (two are active during a rotation).
 * Every key is tried and compared in constant time, so the answer's timing says nothing about which part differed.
 */
export function verifySignature(
  token: string,
  request: Omit<SignatureInput, 'accessKey'>,
  accessKeys: readonly string[],
  secret: string,
): boolean {
  const presented = Buffer.alloc(SHA256_BYTES);
  const decoded = Buffer.from(token, 'base64');
  decoded.copy(presented, 0, 0, SHA256_BYTES);
  // A token of the wrong length can never match, but it still goes through the same comparisons.
  const wellFormed = decoded.length === SHA256_BYTES && decoded.toString('base64') === token;
  let matched = false;
  for (const accessKey of accessKeys) {
    const expected = createHmac('sha256', secret)
      .update(buildStringToSign({ ...request, accessKey }), 'utf8')
      .digest();
    if (timingSafeEqual(expected, presented)) matched = true;
  }
  return matched && wellFormed;
}
