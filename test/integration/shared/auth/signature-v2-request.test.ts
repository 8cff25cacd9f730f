/**
 * Signature version 2 over HTTP (docs/interface.md §16): an application with `signatureVersion: 2` accepts only
 * requests signed over their body digest, method, path and a nonce, and each nonce once; a version-1 token is
 * 1002. Other applications keep version 1 unchanged. The nonce is one conditional write (1 WCU), correct
 * without TTL.
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '../../../../packages/client/src';
import { runSign } from '../../../../packages/client/src/cli/sign-command';
import { bodySha256Hex, signRequestV2 } from '../../../../packages/client/src/signature';
import { newNonce } from '../../../../packages/client/src/signature-v2';
import { CapacityMeter } from '../../../../shared/observability/capacity-meter';
import { DynamoNonceStore } from '../../../../shared/storage/nonce-store';
import { failureWith } from '../../../support/failure-envelope';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const V2: AppCredentials = { appCode: 'app-v2', accessKey: 'ak-v2-application', secret: 'sk-v2-secret-value' };
const V1: AppCredentials = { appCode: 'app-v1', accessKey: 'ak-v1-application', secret: 'sk-v1-secret-value' };
const grants = [{ datasetCode: 'notes', operations: ['read', 'create', 'update'] }];
// 10 a minute: no environment holds tokens in advance (5 % of 10 is none), so every request pays one quota write.
const quota = { perMinute: 10 };
const configFile = path.join(os.tmpdir(), `signature-v2-${process.pid}.json`);
writeFileSync(
  configFile,
  JSON.stringify({
    applications: [
      { appCode: V2.appCode, accessKey: V2.accessKey, signingSecret: V2.secret, signatureVersion: 2, grants, quota },
      { appCode: V1.appCode, accessKey: V1.accessKey, signingSecret: V1.secret, grants, quota },
    ],
    datasets: [{ appCode: V2.appCode, datasetCode: 'notes', fields: [{ name: 'text', type: 'string' }] }],
  }),
);
const harness = new ServiceHarness(configFile);

beforeAll(() => harness.start());
afterAll(async () => {
  await harness.stop();
  rmSync(configFile, { force: true });
});

interface Signed {
  route: string;
  body: string;
  headers: Record<string, string>;
}

/** A version-2 request as a client makes it: the body text, the headers, the token over both. */
function signV2(route: string, paramMap: Record<string, unknown>, nonce = newNonce()): Signed {
  const body = JSON.stringify({ appCode: V2.appCode, datasetCode: 'notes', paramMap });
  const timeStamp = String(Date.now());
  const token = signRequestV2(
    {
      accessKey: V2.accessKey,
      appCode: V2.appCode,
      datasetCode: 'notes',
      timeStamp,
      bodySha256: bodySha256Hex(body),
      method: 'POST',
      nonce,
      path: route,
    },
    V2.secret,
  );
  return {
    route,
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': V2.appCode,
      'X-Dataset-Code': 'notes',
      'X-Token': token,
      'X-Sign-Version': '2',
      'X-Nonce': nonce,
    },
  };
}

async function send(request: Signed, overrides: Partial<Signed> = {}) {
  const { route, body, headers } = { ...request, ...overrides };
  const response = await fetch(`${harness.url}${route}`, { method: 'POST', headers, body });
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever shape the operation answers
  return { status: response.status, body: (await response.json()) as any };
}

describe('an application with signatureVersion 2', () => {
  it('accepts a version-2 request', async () => {
    const res = await send(signV2('/openapi/data/create', { text: 'first' }));
    expect(res.status).toBe(200);
    expect(res.body.data.text).toBe('first');
  });

  it('refuses the same request replayed with 1002, and writes nothing the second time', async () => {
    const request = signV2('/openapi/data/create', { text: 'once' });
    expect((await send(request)).status).toBe(200);
    const replay = await send(request);
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual({
      ...failureWith(1002),
      errorMsg: 'X-Nonce was already used: every version-2 request needs a new nonce',
    });
    const list = await send(signV2('/openapi/data/get-list', { text: 'once' }));
    expect(list.body.data.paging.totalCount).toBe(1);
  });

  it('refuses a version-1 token with 1002, saying version 2 is required', async () => {
    const res = await harness.getList('notes', {}, { app: V2 });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      ...failureWith(1002),
      errorMsg:
        'this application requires signature version 2: send X-Sign-Version: 2 and a new X-Nonce, and sign the body digest, method and path with them',
    });
  });

  it('refuses a token moved to another body or another operation with 1002', async () => {
    const signed = signV2('/openapi/data/get-list', { text: 'a' });
    const otherBody = await send(signed, { body: signed.body.replace('"a"', '"b"') });
    // What to check: the string of version 2 with the digest of the body that arrived, never the keys or the token.
    expect(otherBody.body).toEqual({
      ...failureWith(1002),
      errorMsg:
        'signature verification failed: X-Token must be base64 of HMAC-SHA256 over "accessKey=<your access key>' +
        '&appCode=app-v2&bodySha256=d3fb27cbb2d4e31dfd6d2cb3173e4f03e084ac3928ab56858185c37361a52025' +
        `&datasetCode=notes&method=POST&nonce=${signed.headers['X-Nonce']}&path=/openapi/data/get-list` +
        `&signVersion=2&timeStamp=${signed.headers['X-Time-Stamp']}" ` +
        '(signature version 2: the values sent, bodySha256 of the exact body bytes, names sorted), ' +
        'keyed with the signing secret issued for app-v2, not its access key',
    });
    for (const secret of [V2.accessKey, V2.secret, signed.headers['X-Token'] as string]) {
      expect(otherBody.body.errorMsg).not.toContain(secret);
    }
    const otherRoute = await send(signV2('/openapi/data/get-list', { text: 'a' }), { route: '/openapi/data/create' });
    expect(otherRoute.body.errorCode).toBe(1002);
  });

  it('answers 1001 for a malformed X-Nonce', async () => {
    const signed = signV2('/openapi/data/get-list', {});
    const res = await send(signed, { headers: { ...signed.headers, 'X-Nonce': 'short' } });
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: 'header X-Nonce is malformed' });
  });

  it('costs one write unit more than the same request under version 1: the nonce', async () => {
    // Both applications' quota items exist already, so both requests pay the same quota write.
    await harness.getList('notes', {}, { app: V1 });
    await send(signV2('/openapi/data/get-list', { text: 'x' }));
    const v2 = harness.logLines.at(-1) as { writeUnits: number; errorCode?: number };
    await harness.getList('notes', { text: 'x' }, { app: V1 });
    const v1 = harness.logLines.at(-1) as { writeUnits: number; errorCode?: number };
    expect(v2.errorCode).toBeUndefined();
    expect(v1.errorCode).toBeUndefined();
    expect(v2.writeUnits - v1.writeUnits).toBe(1);
  });
});

describe('the TypeScript client', () => {
  const options = { baseUrl: '', appCode: V2.appCode, accessKey: V2.accessKey, signingSecret: V2.secret };

  it('signs version 2 when told the application uses it, with a new nonce on every request', async () => {
    const client = createClient({ ...options, baseUrl: harness.url, signatureVersion: 2 as const });
    const created = await client.create('notes', { text: 'from the client' });
    const again = await client.getList('notes', { text: 'from the client' });
    const twice = await client.getList('notes', { text: 'from the client' });
    expect(again.paging.totalCount).toBe(1);
    expect(twice.tableData).toEqual([created]);
  });

  it('gets 1002 signing version 1 for a version-2 application', async () => {
    const client = createClient({ ...options, baseUrl: harness.url });
    await expect(client.getList('notes')).rejects.toMatchObject({ errorCode: 1002, httpStatus: 401 });
  });
});

describe('das sign', () => {
  function sign(args: string[]): string {
    let out = '';
    runSign(['--config', configFile, '--app', V2.appCode, ...args], { out: (t) => (out += t), err: () => {}, env: {} });
    return out;
  }

  it('signs version 2 for an application whose configuration says so: headers plus the body they are good for', async () => {
    const printed = JSON.parse(sign(['--op', 'get-list', '--dataset', 'notes', '--body', '{"text":"x"}', '--json']));
    expect(printed.path).toBe('/openapi/data/get-list');
    expect(printed.body).toBe('{"appCode":"app-v2","datasetCode":"notes","paramMap":{"text":"x"}}');
    expect(printed.headers).toMatchObject({
      'X-Sign-Version': '2',
      'X-Nonce': expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const res = await send({ route: printed.path, body: printed.body, headers: printed.headers });
    expect(res.status).toBe(200);
  });

  it('puts the version-2 headers in a signed curl command', () => {
    const curl = sign(['--curl', '--op', 'create', '--dataset', 'notes', '--body', '{"text":"y"}']);
    expect(curl).toContain("-H 'X-Sign-Version: 2'");
    expect(curl).toMatch(/-H 'X-Nonce: [0-9a-f]{32}'/);
  });
});

describe('an application without the setting', () => {
  it('keeps version 1 unchanged, and ignores version-2 headers whatever their values', async () => {
    await harness.create('notes', { text: 'v1 note' }, { app: V1 });
    const headerSets: Record<string, string>[] = [
      { 'X-Sign-Version': '2' },
      { 'X-Sign-Version': 'seven' },
      { 'X-Nonce': 'x' },
      { 'X-Nonce': 'a well formed nonce? no: spaces' },
      { 'X-Nonce': newNonce() },
      { 'X-Sign-Version': '2', 'X-Nonce': newNonce() },
      { 'X-Sign-Version': '1', 'X-Nonce': '' },
    ];
    const answers = [];
    for (const headers of headerSets) {
      const res = await harness.getList('notes', { text: 'v1 note' }, { app: V1, headers });
      answers.push({
        headers,
        status: res.status,
        rows: res.body.data?.tableData?.map((r: { text: string }) => r.text),
      });
    }
    expect(answers).toEqual(headerSets.map((headers) => ({ headers, status: 200, rows: ['v1 note'] })));
    // A version-1 token is still checked as one: a wrong token is 1002 with or without the headers.
    const forgedAt = Date.now();
    const forged = await harness.getList(
      'notes',
      {},
      { app: V1, timeStamp: forgedAt, headers: { 'X-Token': 'AAAA', 'X-Sign-Version': '2', 'X-Nonce': newNonce() } },
    );
    expect(forged.body).toEqual(
      failureWith(
        1002,
        `signature verification failed: X-Token must be base64 of HMAC-SHA256 over "accessKey=<your access key>&appCode=app-v1&datasetCode=notes&timeStamp=${forgedAt}" (the values sent, names sorted, datasetCode only with X-Dataset-Code), keyed with the signing secret issued for app-v1, not its access key`,
      ),
    );
  });

  it('leaves the version-2 rules as they were: a malformed X-Nonce is 1001 before the timestamp is checked', async () => {
    const signed = signV2('/openapi/data/get-list', {});
    const expired = String(Date.now() - 3_600_000);
    const res = await send(signed, { headers: { ...signed.headers, 'X-Nonce': 'short', 'X-Time-Stamp': expired } });
    expect(res.body).toEqual({ ...failureWith(1001), errorMsg: 'header X-Nonce is malformed' });
  });
});

describe('the nonce store', () => {
  it('lets a nonce be claimed again once its window has ended, without TTL (dynalite has none)', async () => {
    const { client, tables } = harness.dynamo();
    let clock = 1_800_000_000_000;
    const store = new DynamoNonceStore(client, tables.quota, () => clock);
    const meter = new CapacityMeter();
    expect(await store.claim('app-x', 'nonce-0000000000000001', clock + 600_000, meter)).toBe(true);
    expect(await store.claim('app-x', 'nonce-0000000000000001', clock + 600_000, meter)).toBe(false);
    expect(await store.claim('app-y', 'nonce-0000000000000001', clock + 600_000, meter)).toBe(true);
    clock += 601_000;
    expect(await store.claim('app-x', 'nonce-0000000000000001', clock + 600_000, meter)).toBe(true);
    expect(meter.writeUnits).toBe(4);
  });
});
