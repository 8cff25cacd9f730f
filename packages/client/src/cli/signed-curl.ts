/** A ready-to-paste, signed curl command: what the local server prints on start and `npm run sign` prints. */

import {
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  NONCE_HEADER,
  SIGN_VERSION_HEADER,
  TIME_STAMP_HEADER,
  TOKEN_HEADER,
} from '../headers.js';
import { bodySha256Hex, signRequest, signRequestV2 } from '../signature.js';
import { newNonce } from '../signature-v2.js';

export interface CurlRequest {
  baseUrl: string;
  path: string;
  appCode: string;
  datasetCode?: string | undefined;
  accessKey: string;
  secret: string;
  body: Record<string, unknown>;
  timeStamp?: number;
  /** 2 for an application with `signatureVersion: 2` (docs/interface.md §16). */
  signatureVersion?: 1 | 2 | undefined;
}

/** What version 2 also signs: the operation path and the exact body text sent. */
export interface SignedRequestV2 {
  path: string;
  bodyText: string;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The signed headers of a request (X-Dataset-Code only with a dataset); with `v2`, the version-2 token and its
 * X-Sign-Version and X-Nonce.
 */
export function signedHeaders(
  request: Omit<CurlRequest, 'baseUrl' | 'path' | 'body' | 'signatureVersion'>,
  v2?: SignedRequestV2,
): Record<string, string> {
  const timeStamp = String(request.timeStamp ?? Date.now());
  const input = { accessKey: request.accessKey, appCode: request.appCode, datasetCode: request.datasetCode, timeStamp };
  const nonce = newNonce();
  const token = v2
    ? signRequestV2(
        { ...input, bodySha256: bodySha256Hex(v2.bodyText), method: 'POST', nonce, path: v2.path },
        request.secret,
      )
    : signRequest(input, request.secret);
  return {
    [TIME_STAMP_HEADER]: timeStamp,
    [APP_CODE_HEADER]: request.appCode,
    ...(request.datasetCode ? { [DATASET_CODE_HEADER]: request.datasetCode } : {}),
    [TOKEN_HEADER]: token,
    ...(v2 ? { [SIGN_VERSION_HEADER]: '2', [NONCE_HEADER]: nonce } : {}),
  };
}

export function signedCurl(request: CurlRequest): string {
  const bodyText = JSON.stringify(request.body);
  const v2 = request.signatureVersion === 2 ? { path: request.path, bodyText } : undefined;
  const headers = { 'Content-Type': 'application/json', ...signedHeaders(request, v2) };
  return [
    `curl -sS -X POST ${shellQuote(`${request.baseUrl}${request.path}`)}`,
    ...Object.entries(headers).map(([name, value]) => `  -H ${shellQuote(`${name}: ${value}`)}`),
    `  -d ${shellQuote(bodyText)}`,
  ].join(' \\\n');
}
