/**
 * Signature version 2 (docs/interface.md §16): the published vectors (test/fixtures/signature-v2-vectors.json, checked
 * when they were made against an independent HMAC implementation), the same tokens from the WebCrypto signer a
 * browser uses, and the laws: sign-then-verify holds, and changing any signed part breaks it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  bodySha256Hex,
  signRequest,
  signRequestV2,
  verifySignatureV2,
} from '../../../../../packages/client/src/signature';
import {
  buildStringToSignV2,
  NONCE_PATTERN,
  newNonce,
  type SignatureV2Input,
  sha256Hex,
  signRequestV2Web,
} from '../../../../../packages/client/src/signature-v2';
import { FIXTURES_DIR } from '../../../../support/paths';

interface Vector extends Omit<SignatureV2Input, 'method'> {
  name: string;
  method: 'POST';
  secret: string;
  body: string;
  stringToSign: string;
  token: string;
}

const vectors: Vector[] = JSON.parse(
  readFileSync(path.join(FIXTURES_DIR, 'signature-v2-vectors.json'), 'utf8'),
).vectors;

describe('published version-2 vectors', () => {
  it('has four vectors', () => {
    expect(vectors.map((v) => v.name)).toEqual([
      'get-list with dataset',
      'custom SQL without dataset',
      'create with non-ASCII body',
      'empty body',
    ]);
  });

  it('matches the first vector written out', () => {
    const first = vectors[0] as Vector;
    expect(bodySha256Hex(first.body)).toBe('6277eadd70975639e2eace1e1f036c436597b864ce686969b34bef639e65f6f1');
    expect(buildStringToSignV2(first)).toBe(
      'accessKey=ak-7f3c9a1b2d4e&appCode=app-demo&bodySha256=6277eadd70975639e2eace1e1f036c436597b864ce686969b34bef639e65f6f1&datasetCode=orders&method=POST&nonce=n-0123456789abcdef&path=/openapi/data/get-list&signVersion=2&timeStamp=1763800000000',
    );
    expect(signRequestV2(first, first.secret)).toBe('WcqU0Rd3ySdrQ+qIIYjkbzF2/YF/9EQfgrL5zpbJQPk=');
  });

  it.each(
    vectors.map((v) => [v.name, v] as const),
  )('%s: digest, string, token; Node and WebCrypto agree', async (_n, v) => {
    expect(bodySha256Hex(Buffer.from(v.body, 'utf8'))).toBe(v.bodySha256);
    expect(await sha256Hex(v.body)).toBe(v.bodySha256);
    expect(buildStringToSignV2(v)).toBe(v.stringToSign);
    expect(signRequestV2(v, v.secret)).toBe(v.token);
    expect(await signRequestV2Web(v, v.secret)).toBe(v.token);
    expect(verifySignatureV2(v.token, v, [v.accessKey], v.secret)).toBe(true);
  });

  it('never accepts the version-1 token of the same request', () => {
    for (const v of vectors)
      expect(verifySignatureV2(signRequest(v, v.secret), v, [v.accessKey], v.secret)).toBe(false);
  });
});

describe('laws', () => {
  const input = fc.record({
    accessKey: fc.string({ minLength: 8, maxLength: 20 }),
    appCode: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
    datasetCode: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
    timeStamp: fc.nat().map(String),
    bodySha256: fc.stringMatching(/^[0-9a-f]{64}$/),
    method: fc.constantFrom('POST' as const, 'GET' as const),
    nonce: fc.stringMatching(NONCE_PATTERN),
    path: fc.constantFrom('/openapi/data/get-list', '/openapi/data/create', '/api/custom/executeSql'),
  });

  it('verifies what it signed, and nothing with one signed part changed', () => {
    fc.assert(
      fc.property(
        input,
        fc.constantFrom('bodySha256', 'method', 'nonce', 'path', 'timeStamp', 'datasetCode'),
        (request, part) => {
          const token = signRequestV2(request, 'secret-x');
          expect(verifySignatureV2(token, request, [request.accessKey], 'secret-x')).toBe(true);
          const changed: SignatureV2Input = { ...request };
          if (part === 'method') changed.method = request.method === 'POST' ? 'GET' : 'POST';
          else if (part === 'path') changed.path = `${request.path}/x`;
          else changed[part] = `${request[part]}0`;
          expect(verifySignatureV2(token, changed, [request.accessKey], 'secret-x')).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('makes nonces the service accepts, never the same twice', () => {
    const nonces = Array.from({ length: 1000 }, newNonce);
    expect(nonces.every((n) => NONCE_PATTERN.test(n))).toBe(true);
    expect(new Set(nonces).size).toBe(1000);
  });
});
