/**
 * The message of a 1002 for a token that does not verify: what the caller should check (docs/interface.md §2, "words a
 * caller can act on"). It spells out the string the token must sign, built from the values the request itself
 * sent, in the order they are signed, with the access key as a placeholder, and which secret keys the HMAC. It
 * never holds the expected token, the access key or any secret.
 */
import { buildStringToSign } from '../../packages/client/src/signature-string';
import { buildStringToSignV2, type SignatureV2Input } from '../../packages/client/src/signature-v2';
import { SignatureMismatchError } from '../contract/errors';

const ACCESS_KEY = '<your access key>';

function mismatch(appCode: string, stringToSign: string, rules: string): SignatureMismatchError {
  return new SignatureMismatchError(
    `signature verification failed: X-Token must be base64 of HMAC-SHA256 over "${stringToSign}" (${rules}), ` +
      `keyed with the signing secret issued for ${appCode}, not its access key`,
  );
}

/** Version 1 (docs/interface.md §3): accessKey, appCode, datasetCode when sent, timeStamp. */
export function signatureMismatch(sent: {
  appCode: string;
  datasetCode: string | undefined;
  timeStamp: string;
}): SignatureMismatchError {
  return mismatch(
    sent.appCode,
    buildStringToSign({ ...sent, accessKey: ACCESS_KEY }),
    'the values sent, names sorted, datasetCode only with X-Dataset-Code',
  );
}

/** Version 2 (docs/interface.md §16): version 1's pairs and the body digest, method, nonce, path and signVersion. */
export function signatureV2Mismatch(sent: Omit<SignatureV2Input, 'accessKey'>): SignatureMismatchError {
  return mismatch(
    sent.appCode,
    buildStringToSignV2({ ...sent, accessKey: ACCESS_KEY }),
    'signature version 2: the values sent, bodySha256 of the exact body bytes, names sorted',
  );
}
