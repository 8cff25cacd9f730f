/** docs/interface.md §1–§3 over HTTP: request checks, authentication order, error envelopes and their HTTP statuses. */
import { signRequest } from '../../../../packages/client/src/signature';
import { expectFailure, failureWith } from '../../../support/failure-envelope';
import { MAIN_APP, ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const LIST = '/openapi/data/get-list';
const listBody = { datasetCode: 'notes', paramMap: {} };
const MINUTE = 60_000;

describe('a correctly signed request', () => {
  it('succeeds with the success envelope and a request id', async () => {
    const res = await harness.call(LIST, listBody);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      msg: null,
      data: { paging: { pageSize: 20, totalCount: 0, currentPage: 1 }, tableData: [], tableColumns: expect.any(Array) },
    });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('is accepted with the second active access key (rotation)', async () => {
    const res = await harness.call(LIST, listBody, { app: { ...MAIN_APP, accessKey: 'ak-main-previous-0002' } });
    expect(res.status).toBe(200);
  });

  it('is accepted for an application without its own secret, signed with the default secret', async () => {
    const app = {
      appCode: 'app-default-secret',
      accessKey: 'ak-default-secret-app',
      secret: 'default-secret-of-the-deployment',
    };
    const res = await harness.call(LIST, listBody, { app });
    expect(res.status).toBe(200);
  });

  it('accepts header names in any letter case', async () => {
    const signed = await harness.call(LIST, listBody, { headers: {} });
    expect(signed.status).toBe(200);
    const ts = String(Date.now());
    const token = signRequest(
      { accessKey: MAIN_APP.accessKey, appCode: 'app-main', datasetCode: 'notes', timeStamp: ts },
      MAIN_APP.secret,
    );
    const res = await fetch(`${harness.url}${LIST}`, {
      method: 'POST',
      headers: { 'x-time-stamp': ts, 'X-APP-CODE': 'app-main', 'x-dataset-code': 'notes', 'X-TOKEN': token },
      body: JSON.stringify({ appCode: 'app-main', datasetCode: 'notes' }),
    });
    expect(res.status).toBe(200);
  });
});

describe('timestamp window (±10 minutes)', () => {
  it.each([
    ['9 minutes in the past', 200, -9 * MINUTE],
    ['9 minutes in the future', 200, 9 * MINUTE],
    ['11 minutes in the past', 401, -11 * MINUTE],
    ['11 minutes in the future', 401, 11 * MINUTE],
  ])('%s answers HTTP %i', async (_label, status, offset) => {
    const res = await harness.call(LIST, listBody, { timeStamp: Date.now() + offset });
    expect(res.status).toBe(status);
    if (status === 401) {
      expectFailure(res, 1003);
      expect(res.body.errorMsg).toContain('10 minutes');
    }
  });

  it('checks the timestamp before the signature', async () => {
    const res = await harness.call(LIST, listBody, {
      timeStamp: Date.now() - 20 * MINUTE,
      headers: { 'X-Token': 'AAAA' },
    });
    expectFailure(res, 1003);
  });
});

describe('signature (1002, HTTP 401)', () => {
  it.each([
    ['a wrong access key', { app: { ...MAIN_APP, accessKey: 'ak-not-a-key-of-this-app' } }],
    ['a wrong secret', { app: { ...MAIN_APP, secret: 'not-the-secret' } }],
    ['the signature of another dataset', { signDatasetCode: 'typed' }],
    ['a token that is not base64 of a digest', { headers: { 'X-Token': 'c2hvcnQ=' } }],
  ])('%s is refused', async (_label, options) => {
    const res = await harness.call(LIST, listBody, options);
    expectFailure(res, 1002);
  });

  it('says what to check: the string the token signs, from the values sent, and which secret; nothing of the keys', async () => {
    const timeStamp = Date.now();
    const wrongSecret = await harness.call(LIST, listBody, {
      app: { ...MAIN_APP, secret: 'not-the-secret' },
      timeStamp,
    });
    expectFailure(
      wrongSecret,
      1002,
      'signature verification failed: X-Token must be base64 of HMAC-SHA256 over ' +
        `"accessKey=<your access key>&appCode=app-main&datasetCode=notes&timeStamp=${timeStamp}" ` +
        '(the values sent, names sorted, datasetCode only with X-Dataset-Code), ' +
        'keyed with the signing secret issued for app-main, not its access key',
    );
    const right = signRequest(
      { accessKey: MAIN_APP.accessKey, appCode: 'app-main', datasetCode: 'notes', timeStamp },
      MAIN_APP.secret,
    );
    for (const secret of [MAIN_APP.accessKey, 'ak-main-previous-0002', MAIN_APP.secret, right]) {
      expect(wrongSecret.body.errorMsg).not.toContain(secret);
    }
    // Custom SQL without a dataset: no datasetCode in the string.
    const sql = await harness.call(
      '/api/custom/executeSql',
      { sqlCode: 'count-notes' },
      { app: { ...MAIN_APP, secret: 'not-the-secret' }, datasetCode: null, timeStamp },
    );
    expect(sql.body.errorMsg).toContain(`over "accessKey=<your access key>&appCode=app-main&timeStamp=${timeStamp}"`);
  });

  it('is refused when the default secret signs for an application that has its own', async () => {
    const res = await harness.call(LIST, listBody, {
      app: { ...MAIN_APP, secret: 'default-secret-of-the-deployment' },
    });
    expectFailure(res, 1002);
  });

  it('is refused when the signed timestamp differs from the header', async () => {
    const res = await harness.call(LIST, listBody, {
      timeStamp: Date.now(),
      headers: { 'X-Time-Stamp': String(Date.now() - 1000) },
    });
    expectFailure(res, 1002);
  });
});

describe('applications, datasets and grants', () => {
  it('answers 1004 (HTTP 404) for an unknown application', async () => {
    const res = await harness.call(LIST, listBody, { app: { ...MAIN_APP, appCode: 'app-nobody' } });
    expectFailure(res, 1004, "application 'app-nobody' not found");
  });

  it('answers 1005 (HTTP 404) for an unknown dataset', async () => {
    const res = await harness.call(LIST, { datasetCode: 'no_such_dataset' });
    expectFailure(res, 1005, "dataset 'no_such_dataset' not found");
  });

  it('answers 1006 (HTTP 403) for a dataset of another application without a grant', async () => {
    const res = await harness.call(LIST, { datasetCode: 'other_data' });
    expectFailure(res, 1006);
    expect(res.body.errorMsg).toBe("application 'app-main' has no access to dataset 'other_data'");
  });

  it('answers 1006 for an operation outside the grant', async () => {
    const res = await harness.create('readonly_notes', { title: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe("application 'app-main' may not create records of dataset 'readonly_notes'");
  });

  it('checks the signature before the dataset', async () => {
    const res = await harness.call(
      LIST,
      { datasetCode: 'no_such_dataset' },
      { app: { ...MAIN_APP, secret: 'wrong-secret' } },
    );
    expectFailure(res, 1002);
  });
});

describe('request checks (1001, HTTP 400)', () => {
  it.each([
    ['X-Time-Stamp missing', { headers: { 'X-Time-Stamp': undefined } }, 'header X-Time-Stamp is required'],
    [
      'X-Time-Stamp not digits',
      { headers: { 'X-Time-Stamp': '2025-01-01T00:00:00Z' } },
      'header X-Time-Stamp is malformed',
    ],
    ['X-App-Code missing', { headers: { 'X-App-Code': undefined } }, 'header X-App-Code is required'],
    ['X-Token missing', { headers: { 'X-Token': undefined } }, 'header X-Token is required'],
    ['X-Dataset-Code missing', { headers: { 'X-Dataset-Code': undefined } }, 'header X-Dataset-Code is required'],
    [
      'X-App-Code outside the code alphabet',
      { headers: { 'X-App-Code': 'app main' } },
      'header X-App-Code is malformed',
    ],
    [
      'X-Dataset-Code too long',
      { headers: { 'X-Dataset-Code': 'd'.repeat(65) } },
      'header X-Dataset-Code is malformed',
    ],
  ])('%s', async (_label, options, message) => {
    const res = await harness.call(LIST, listBody, options);
    expectFailure(res, 1001, message);
  });

  it.each([
    [
      'appCode differs from X-App-Code',
      { appCode: 'app-other', datasetCode: 'notes' },
      'appCode in the body does not match header X-App-Code',
    ],
    [
      'datasetCode differs from X-Dataset-Code',
      { appCode: 'app-main', datasetCode: 'typed' },
      'datasetCode in the body does not match header X-Dataset-Code',
    ],
    ['datasetCode absent', { appCode: 'app-main' }, 'datasetCode is required in the request body'],
  ])('%s', async (_label, body, message) => {
    const res = await harness.call(LIST, {}, { datasetCode: 'notes', rawBody: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe(message);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await harness.call(LIST, listBody, { rawBody: '{"appCode": "app-main",' });
    expectFailure(res, 1001, 'request body is not valid JSON');
  });

  it.each([['[]'], ['"text"'], ['42'], ['null']])('refuses the JSON body %s that is not an object', async (raw) => {
    const res = await harness.call(LIST, listBody, { rawBody: raw });
    expect(res.body.errorMsg).toBe('request body must be a JSON object');
  });

  it('refuses an empty body', async () => {
    const res = await harness.call(LIST, listBody, { rawBody: '' });
    expectFailure(res, 1001);
  });

  it('refuses a body over 1 MB and accepts one just under', async () => {
    const filler = (size: number) =>
      JSON.stringify({ appCode: 'app-main', datasetCode: 'notes', pad: 'x'.repeat(size) });
    const over = await harness.call(LIST, listBody, { rawBody: filler(1024 * 1024) });
    expect(over.status).toBe(400);
    expect(over.body.errorMsg).toBe('request body is larger than 1 MB (1048576 bytes)');
    const under = await harness.call(LIST, listBody, { rawBody: filler(1024 * 1024 - 100) });
    expect(under.status).toBe(200);
  });

  it('refuses a paramMap that is not an object', async () => {
    const res = await harness.call('/openapi/data/get-one', { datasetCode: 'notes', paramMap: ['id'] });
    expectFailure(res, 1001, 'paramMap must be a JSON object');
  });
});

describe('the local gateway', () => {
  it('answers an unknown path with the envelope', async () => {
    const res = await fetch(`${harness.url}/openapi/data/delete`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(failureWith(1001, 'no operation at POST /openapi/data/delete'));
  });

  it('answers the CORS preflight and lets a browser read the response headers', async () => {
    const preflight = await fetch(`${harness.url}${LIST}`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'Content-Type, X-Time-Stamp, X-App-Code, X-Dataset-Code, X-Token, X-Sign-Version, X-Nonce, Idempotency-Key, If-Match',
    );
    const res = await harness.call(LIST, listBody);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Idempotent-Replayed, ETag',
    );
  });

  it('answers GET /health', async () => {
    const res = await fetch(`${harness.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ok',
      operations: expect.arrayContaining(['get-list', 'get-one', 'create', 'update']),
    });
  });
});

describe('the request log', () => {
  it('writes one JSON line per request with the contract fields and no key material', async () => {
    const before = harness.logLines.length;
    const res = await harness.call(LIST, listBody, { app: { ...MAIN_APP, secret: 'wrong-secret' } });
    const requestId = res.headers.get('x-request-id');
    const lines = harness.logLines.slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      requestId,
      operation: 'get-list',
      appCode: 'app-main',
      errorCode: 1002,
      readUnits: 0,
      writeUnits: 0,
    });
    expect(typeof lines[0]?.durationMs).toBe('number');
    const text = JSON.stringify(lines[0]);
    for (const secret of ['sk-main-secret-value', 'ak-main-current-0001', 'wrong-secret'])
      expect(text).not.toContain(secret);
  });
});
