/**
 * What the /docs page runs before each "Try it out" request: sign it in the browser with WebCrypto, over the
 * same strings to sign as every other caller (the client package's signing modules; version 2, docs/interface.md §16,
 * when the application uses it), with the credentials the page asked for; or, with a client key, send it to
 * the `/client/` path with `X-User-AK` instead (docs/interface.md §14).
 * Bundled for the browser by docs-pages.ts; it runs in Node.js too, where a test checks it against the
 * published signature vectors.
 */
import {
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  NONCE_HEADER,
  SIGN_VERSION_HEADER,
  TIME_STAMP_HEADER,
  TOKEN_HEADER,
  USER_KEY_HEADER,
} from '../../packages/client/src/headers';
import { buildStringToSign, type SignatureInput } from '../../packages/client/src/signature-string';
import { newNonce, sha256Hex, signRequestV2Web } from '../../packages/client/src/signature-v2';

export interface DocsCredentials {
  appCode: string;
  /** Signed mode. */
  accessKey?: string;
  signingSecret?: string;
  /** Client-key mode: a personal access key instead of signing. */
  clientKey?: string;
  /** 2 when the application is configured with `signatureVersion: 2`. */
  signatureVersion?: number;
}

/** The request as Swagger UI hands it to its request interceptor. */
export interface DocsRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: unknown;
}

const SIGNED_HEADERS = [
  TIME_STAMP_HEADER,
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  TOKEN_HEADER,
  USER_KEY_HEADER,
  SIGN_VERSION_HEADER,
  NONCE_HEADER,
];

/** base64 of HMAC-SHA256 over `text` keyed with `secret`, with WebCrypto (browsers, Node.js 20+). */
export async function hmacSha256Base64(secret: string, text: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)));
  let binary = '';
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The X-Token of a request: the signature every client computes, here with WebCrypto. */
export function signWithWebCrypto(input: SignatureInput, secret: string): Promise<string> {
  return hmacSha256Base64(secret, buildStringToSign(input));
}

/** `/openapi/data/get-list` → `/client/data/get-list`, `/api/custom/executeSql` → `/client/custom/executeSql`. */
export function clientKeyPath(path: string): string {
  return path.replace(/^\/openapi\/data\//, '/client/data/').replace(/^\/api\/custom\//, '/client/custom/');
}

function parseBody(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    // Not JSON: sent as typed, and the service answers 1001.
    return undefined;
  }
}

/**
 * Prepare one request: the body's `appCode` becomes the page's application (the examples name the demo's), the
 * dataset header follows the body's `datasetCode`, and the headers are signed for now.
 */
export async function prepareDocsRequest(
  request: DocsRequest,
  credentials: DocsCredentials,
  now: number = Date.now(),
): Promise<DocsRequest> {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => !SIGNED_HEADERS.includes(name)),
  ) as Record<string, string>;
  const parsed = parseBody(request.body);
  let body = request.body;
  if (parsed) {
    parsed.appCode = credentials.appCode;
    body = JSON.stringify(parsed);
  }
  const datasetCode = typeof parsed?.datasetCode === 'string' ? parsed.datasetCode : undefined;
  const url = new URL(request.url);
  if (credentials.clientKey) {
    url.pathname = clientKeyPath(url.pathname);
    return { ...request, url: url.toString(), headers: { ...headers, [USER_KEY_HEADER]: credentials.clientKey }, body };
  }
  if (!credentials.accessKey || !credentials.signingSecret) {
    throw new Error('the page needs an access key and a signing secret, or a client key');
  }
  const timeStamp = String(now);
  const signed = { accessKey: credentials.accessKey, appCode: credentials.appCode, datasetCode, timeStamp };
  let token: string;
  if (credentials.signatureVersion === 2) {
    // Version 2 also signs this very request: the bytes of the body, the method, the path and a new nonce.
    const nonce = newNonce();
    const bodySha256 = await sha256Hex(typeof body === 'string' ? body : '');
    const method = request.method.toUpperCase() === 'GET' ? 'GET' : 'POST';
    token = await signRequestV2Web(
      { ...signed, bodySha256, method, nonce, path: url.pathname },
      credentials.signingSecret,
    );
    headers[SIGN_VERSION_HEADER] = '2';
    headers[NONCE_HEADER] = nonce;
  } else {
    token = await signWithWebCrypto(signed, credentials.signingSecret);
  }
  return {
    ...request,
    headers: {
      ...headers,
      [TIME_STAMP_HEADER]: timeStamp,
      [APP_CODE_HEADER]: credentials.appCode,
      ...(datasetCode ? { [DATASET_CODE_HEADER]: datasetCode } : {}),
      [TOKEN_HEADER]: token,
    },
    body,
  };
}
