/**
 * The /docs page's signer, run in Node.js's WebCrypto (the browser test runs it in chromium): the published
 * signature vectors, and how it prepares a "Try it out" request in signed and in client-key mode.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { prepareDocsRequest, signWithWebCrypto } from '../../../../bin/local/docs-signer';
import { bodySha256Hex, verifySignature, verifySignatureV2 } from '../../../../packages/client/src/signature';
import { NONCE_PATTERN } from '../../../../packages/client/src/signature-v2';

interface Vector {
  name: string;
  accessKey: string;
  appCode: string;
  datasetCode?: string;
  timeStamp: number;
  secret: string;
  token: string;
}

const vectors: Vector[] = JSON.parse(
  readFileSync(path.join(__dirname, '..', '..', '..', 'fixtures', 'signature-vectors.json'), 'utf8'),
).vectors;

it.each(vectors.map((v) => [v.name, v] as const))('WebCrypto signs the vector %s', async (_name, vector) => {
  await expect(signWithWebCrypto(vector, vector.secret)).resolves.toBe(vector.token);
});

const swaggerRequest = {
  url: 'http://127.0.0.1:3000/openapi/data/get-list',
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Token': 'pasted-earlier' },
  body: JSON.stringify({ appCode: 'app-demo', datasetCode: 'orders', paramMap: { pageSize: 5 } }),
};

it('signs for the page’s application, with the body’s dataset in the header and the signature', async () => {
  const prepared = await prepareDocsRequest(
    swaggerRequest,
    { appCode: 'app-partner-eu', accessKey: 'ak-partner-3e8d1c0b', signingSecret: 'sk-partner-secret' },
    1763800000000,
  );
  expect(JSON.parse(prepared.body as string)).toEqual({
    appCode: 'app-partner-eu',
    datasetCode: 'orders',
    paramMap: { pageSize: 5 },
  });
  expect(prepared.url).toBe(swaggerRequest.url);
  expect(prepared.headers).toEqual({
    'Content-Type': 'application/json',
    'X-Time-Stamp': '1763800000000',
    'X-App-Code': 'app-partner-eu',
    'X-Dataset-Code': 'orders',
    'X-Token': expect.any(String),
  });
  const token = prepared.headers['X-Token'] as string;
  const signed = { appCode: 'app-partner-eu', datasetCode: 'orders', timeStamp: '1763800000000' };
  expect(verifySignature(token, signed, ['ak-partner-3e8d1c0b'], 'sk-partner-secret')).toBe(true);
});

it('custom SQL without a dataset code is signed without the dataset header', async () => {
  const prepared = await prepareDocsRequest(
    {
      ...swaggerRequest,
      url: 'http://127.0.0.1:3000/api/custom/executeSql',
      body: JSON.stringify({ appCode: 'app-demo', sqlCode: 'revenue-by-status' }),
    },
    { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', signingSecret: 'sk-demo-secret' },
    1763800000000,
  );
  expect(prepared.headers['X-Dataset-Code']).toBeUndefined();
  // The published vector of a request without a dataset.
  expect(prepared.headers['X-Token']).toBe('AdDwLbTGoiiH7IH5r2zOiedCAWpiUXF2tuGDGOwz6aE=');
});

it('with a client key, sends X-User-AK to the /client/ path and signs nothing', async () => {
  const prepared = await prepareDocsRequest(swaggerRequest, { appCode: 'app-demo', clientKey: 'uk-0123456789abcdef' });
  expect(prepared.url).toBe('http://127.0.0.1:3000/client/data/get-list');
  expect(prepared.headers).toEqual({ 'Content-Type': 'application/json', 'X-User-AK': 'uk-0123456789abcdef' });
  const sql = await prepareDocsRequest(
    { ...swaggerRequest, url: 'http://127.0.0.1:3000/api/custom/executeSql' },
    { appCode: 'app-demo', clientKey: 'uk-0123456789abcdef' },
  );
  expect(sql.url).toBe('http://127.0.0.1:3000/client/custom/executeSql');
});

it('refuses to send without keys', async () => {
  await expect(prepareDocsRequest(swaggerRequest, { appCode: 'app-demo' })).rejects.toThrow(
    'the page needs an access key and a signing secret, or a client key',
  );
});

it('signs version 2 when the application requires it: body digest, method, path and a new nonce', async () => {
  const credentials = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', signingSecret: 'sk-demo-secret' };
  const prepared = await prepareDocsRequest(swaggerRequest, { ...credentials, signatureVersion: 2 }, 1763800000000);
  const nonce = prepared.headers['X-Nonce'] as string;
  expect(prepared.headers).toMatchObject({ 'X-Sign-Version': '2', 'X-Time-Stamp': '1763800000000' });
  expect(nonce).toMatch(NONCE_PATTERN);
  const signed = {
    appCode: 'app-demo',
    datasetCode: 'orders',
    timeStamp: '1763800000000',
    bodySha256: bodySha256Hex(prepared.body as string),
    method: 'POST' as const,
    nonce,
    path: '/openapi/data/get-list',
  };
  expect(verifySignatureV2(prepared.headers['X-Token'] as string, signed, ['ak-7f3c9a1b2d4e'], 'sk-demo-secret')).toBe(
    true,
  );
  const again = await prepareDocsRequest(swaggerRequest, { ...credentials, signatureVersion: 2 }, 1763800000000);
  expect(again.headers['X-Nonce']).not.toBe(nonce);
});
