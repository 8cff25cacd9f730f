/** Signing (docs/interface.md §3): the vectors existing clients produce, and the laws of sign-then-verify. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { buildStringToSign, signRequest, verifySignature } from '../../../../../packages/client/src/signature';
import { FIXTURES_DIR } from '../../../../support/paths';

interface Vector {
  name: string;
  accessKey: string;
  appCode: string;
  datasetCode?: string;
  timeStamp: number;
  secret: string;
  stringToSign: string;
  token: string;
}

// The published vectors (spec/signature-vectors.json), kept with the tests so they run from any checkout.
const vectors: Vector[] = JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'signature-vectors.json'), 'utf8')).vectors;

describe('signature vectors of existing clients', () => {
  it('has the four published vectors', () => {
    expect(vectors.map((v) => v.name)).toEqual([
      'data operation with dataset',
      'custom SQL without dataset',
      'hex dataset code, other secret',
      'token whose base64 has + and /',
    ]);
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s: same string to sign and token', (_name, vector) => {
    expect(buildStringToSign(vector)).toBe(vector.stringToSign);
    expect(signRequest(vector, vector.secret)).toBe(vector.token);
    expect(verifySignature(vector.token, vector, [vector.accessKey], vector.secret)).toBe(true);
  });

  it('matches the first vector written out', () => {
    expect(
      signRequest(
        { accessKey: 'ak-7f3c9a1b2d4e', appCode: 'app-demo', datasetCode: 'orders', timeStamp: '1763800000000' },
        'sk-demo-secret',
      ),
    ).toBe('bTBf0vSF7OoO4KnVbZStVxDTmsqBlDf/tS1xZSoQ4C4=');
  });
});

describe('verifySignature', () => {
  const request = { appCode: 'app-a', datasetCode: 'orders', timeStamp: '1700000000000' };
  const token = signRequest({ ...request, accessKey: 'key-one' }, 'secret');

  it('accepts the token under either of two active keys', () => {
    expect(verifySignature(token, request, ['key-two', 'key-one'], 'secret')).toBe(true);
  });

  it.each([
    ['an empty token', ''],
    ['a truncated token', token.slice(0, 20)],
    ['the token without padding', token.replace(/=+$/, '')],
    ['the token with a trailing character', `${token}A`],
    ['non-base64 text', 'not a token at all!'],
  ])('refuses %s', (_label, candidate) => {
    expect(verifySignature(candidate, request, ['key-one'], 'secret')).toBe(false);
  });

  it('refuses when no key is active', () => {
    expect(verifySignature(token, request, [], 'secret')).toBe(false);
  });

  const code = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
  const input = fc.record({
    accessKey: fc.string({ minLength: 1, maxLength: 40 }),
    appCode: code,
    datasetCode: fc.option(code, { nil: undefined }),
    timeStamp: fc.integer({ min: 0, max: 9_999_999_999_999 }).map(String),
    secret: fc.string({ minLength: 1, maxLength: 40 }),
  });

  it('holds sign-then-verify for any input', () => {
    fc.assert(
      fc.property(input, ({ secret, accessKey, ...rest }) => {
        const signed = signRequest({ accessKey, ...rest }, secret);
        return verifySignature(signed, rest, [accessKey], secret);
      }),
    );
  });

  it('fails when any one input changes', () => {
    const field = fc.constantFrom('accessKey', 'appCode', 'datasetCode', 'timeStamp', 'secret');
    fc.assert(
      fc.property(input, field, fc.string({ minLength: 1, maxLength: 10 }), (original, name, suffix) => {
        const signed = signRequest(original, original.secret);
        const changed = { ...original, [name]: `${original[name as keyof typeof original] ?? 'd'}${suffix}` };
        const { secret, accessKey, ...rest } = changed;
        return !verifySignature(signed, rest, [accessKey], secret);
      }),
    );
  });
});
