/**
 * What the /docs page runs before each "Try it out" request: sign it in the browser with WebCrypto, over the
 * same string to sign as every other caller (the client package's signing module), with the credentials the
 * page asked for; or, with a client key, send it to the `/client/` path with `X-User-AK` instead (contract §14).
 * Bundled for the browser by docs-pages.ts; it runs in Node.js too, where a test checks it against the
 * published signature vectors.
 */
import { buildStringToSign, type SignatureInput } from '../../packages/client/src/signature';

export interface DocsCredentials {
  appCode: string;
  /** Signed mode. */
  accessKey?: string;
  signingSecret?: string;
  /** Client-key mode: a personal access key instead of signing. */
  clientKey?: string;
}

/** The request as Swagger UI hands it to its request interceptor. */
export interface DocsRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: unknown;
}

const SIGNED_HEADERS = ['X-Time-Stamp', 'X-App-Code', 'X-Dataset-Code', 'X-Token', 'X-User-AK'];

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
    return { ...request, url: url.toString(), headers: { ...headers, 'X-User-AK': credentials.clientKey }, body };
  }
  if (!credentials.accessKey || !credentials.signingSecret) {
    throw new Error('the page needs an access key and a signing secret, or a client key');
  }
  const timeStamp = String(now);
  const token = await signWithWebCrypto(
    { accessKey: credentials.accessKey, appCode: credentials.appCode, datasetCode, timeStamp },
    credentials.signingSecret,
  );
  return {
    ...request,
    headers: {
      ...headers,
      'X-Time-Stamp': timeStamp,
      'X-App-Code': credentials.appCode,
      ...(datasetCode ? { 'X-Dataset-Code': datasetCode } : {}),
      'X-Token': token,
    },
    body,
  };
}
