/**
 * Signature version 2 (docs/interface.md §16), the part that runs anywhere: the string to sign and a signer over
 * WebCrypto (`crypto.subtle`), so that a browser page, a worker or Node computes the same token without
 * node:crypto. The service verifies with `verifySignatureV2` in `signature.ts`, over the same string.
 *
 * Version 2 adds to version 1's pairs the body's SHA-256 (lower-case hex of the raw bytes), the HTTP method,
 * a single-use nonce, the operation path (no query) and `signVersion=2`, so a captured token is good for one
 * request only: that body, that operation, once.
 */
import { joinSorted, type SignatureInput, signaturePairs } from './signature-string.js';
/** 16 to 64 letters, digits, `_` or `-`. */
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

export interface SignatureV2Input extends SignatureInput {
  /** Lower-case hex SHA-256 of the raw request body. */
  bodySha256: string;
  method: 'POST' | 'GET';
  nonce: string;
  /** The operation's path, e.g. `/openapi/data/get-list`: no query, no stage or base-address prefix. */
  path: string;
}

/** Version 1's sorted pairs plus bodySha256, method, nonce, path and signVersion=2, sorted, joined by `&`. */
export function buildStringToSignV2(input: SignatureV2Input): string {
  return joinSorted([
    ...signaturePairs(input),
    ['bodySha256', input.bodySha256],
    ['method', input.method],
    ['nonce', input.nonce],
    ['path', input.path],
    ['signVersion', '2'],
  ]);
}

/** A fresh nonce: 32 random hex characters. */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return hex(bytes);
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function base64(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

/** Lower-case hex SHA-256 of a body (text is encoded as UTF-8, as it is sent). */
export async function sha256Hex(body: string | Uint8Array): Promise<string> {
  // A copy over a plain ArrayBuffer, which is what WebCrypto's typings accept in browsers.
  const bytes = new Uint8Array(typeof body === 'string' ? new TextEncoder().encode(body) : body);
  return hex(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes)));
}

/**
 * The version-2 X-Token over WebCrypto (browsers, workers, Node 20+). A page that holds no secret gets its
 * token from a trusted server instead, which signs the same string.
 */
export async function signRequestV2Web(input: SignatureV2Input, secret: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(buildStringToSignV2(input)));
  return base64(new Uint8Array(mac));
}
