/**
 * Step 4 of authentication (docs/interface.md §3) for an application with `signatureVersion: 2` (docs/interface.md §16): the
 * token must be a version-2 signature of this very request (its body digest, method and operation path), and
 * its nonce must not have been used within the timestamp window. Anything else is 1002, a version-1 token
 * included; the nonce is claimed only after the signature is valid, so unsigned traffic writes nothing.
 */
import { NONCE_HEADER, SIGN_VERSION_HEADER } from '../../packages/client/src/headers';
import { bodySha256Hex, verifySignatureV2 } from '../../packages/client/src/signature';
import { NONCE_PATTERN } from '../../packages/client/src/signature-v2';
import { SignatureMismatchError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { NonceStore } from '../storage/nonce-store';
import { signatureV2Mismatch } from './signature-hint';

export interface VersionTwoRequest {
  /** Lower-cased header names. */
  headers: Record<string, string>;
  appCode: string;
  datasetCode: string | undefined;
  timeStamp: string;
  token: string;
  method: string;
  /** The operation's path (`/openapi/data/get-list`), as the route table names it. */
  path: string;
  rawBody: Buffer;
  /** When the request's timestamp stops being accepted: the nonce is kept until then. */
  windowEndsAt: number;
  capacity: CapacityMeter;
}

export async function verifyVersionTwo(
  request: VersionTwoRequest,
  accessKeys: readonly string[],
  secret: string,
  nonces: NonceStore,
): Promise<void> {
  const version = request.headers[SIGN_VERSION_HEADER.toLowerCase()];
  const nonce = request.headers[NONCE_HEADER.toLowerCase()];
  if (version !== '2' || nonce === undefined || !NONCE_PATTERN.test(nonce)) {
    throw new SignatureMismatchError(
      'this application requires signature version 2: send X-Sign-Version: 2 and a new X-Nonce, and sign the body digest, method and path with them',
    );
  }
  const method = request.method === 'GET' ? 'GET' : 'POST';
  const signed = {
    appCode: request.appCode,
    datasetCode: request.datasetCode,
    timeStamp: request.timeStamp,
    bodySha256: bodySha256Hex(request.rawBody),
    method,
    nonce,
    path: request.path,
  } as const;
  if (!verifySignatureV2(request.token, signed, accessKeys, secret)) throw signatureV2Mismatch(signed);
  if (!(await nonces.claim(request.appCode, nonce, request.windowEndsAt, request.capacity))) {
    throw new SignatureMismatchError('X-Nonce was already used: every version-2 request needs a new nonce');
  }
}
