/**
 * Request signing (docs/interface.md §3). The same module signs in clients and the
 * command-line tool and verifies in the service, so the two cannot drift.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { buildStringToSign, type SignatureInput } from './signature-string.js';
import { buildStringToSignV2, type SignatureV2Input } from './signature-v2.js';

export { buildStringToSign, type SignatureInput } from './signature-string.js';

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
  return verifyAgainst(token, accessKeys, (accessKey) =>
    createHmac('sha256', secret)
      .update(buildStringToSign({ ...request, accessKey }), 'utf8')
      .digest(),
  );
}

function verifyAgainst(
  token: string,
  accessKeys: readonly string[],
  expectedFor: (accessKey: string) => Buffer,
): boolean {
  const presented = Buffer.alloc(SHA256_BYTES);
  const decoded = Buffer.from(token, 'base64');
  decoded.copy(presented, 0, 0, SHA256_BYTES);
  // A token of the wrong length can never match, but it still goes through the same comparisons.
  const wellFormed = decoded.length === SHA256_BYTES && decoded.toString('base64') === token;
  let matched = false;
  for (const accessKey of accessKeys) {
    if (timingSafeEqual(expectedFor(accessKey), presented)) matched = true;
  }
  return matched && wellFormed;
}

/** Lower-case hex SHA-256 of the raw body bytes (version 2). */
export function bodySha256Hex(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex');
}

/** The version-2 X-Token (docs/interface.md §16): base64 of HMAC-SHA256 over `buildStringToSignV2`. */
export function signRequestV2(input: SignatureV2Input, secret: string): string {
  return createHmac('sha256', secret).update(buildStringToSignV2(input), 'utf8').digest('base64');
}

/** As `verifySignature`, for version 2: every active key tried, compared in constant time. */
export function verifySignatureV2(
  token: string,
  request: Omit<SignatureV2Input, 'accessKey'>,
  accessKeys: readonly string[],
  secret: string,
): boolean {
  return verifyAgainst(token, accessKeys, (accessKey) =>
    createHmac('sha256', secret)
      .update(buildStringToSignV2({ ...request, accessKey }), 'utf8')
      .digest(),
  );
}
