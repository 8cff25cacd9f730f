/**
 * Client-key mode (docs/interface.md §14) over HTTP: every operation answered the same under `/client/` with a personal
 * access key as on its signed path, loginUserInfo, the user's narrowed grants, bad keys, another application's
 * key, and which headers open which paths. The real handlers, real pipeline and real dynalite.
 */
import path from 'node:path';
import { AuthenticationError, createClient } from '../../../../../packages/client/src/index';
import { userKeyDigest } from '../../../../../shared/auth/user-key';
import { failureWith } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { runDas } from '../../../../support/run-das';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const CONFIG = path.join(FIXTURES_DIR, 'client-key-config.json');
const MAIN: AppCredentials = {
  appCode: 'app-main',
  accessKey: 'ak-main-client-fixture-0001',
  secret: 'sk-main-client-fixture',
};

/** Personal access keys of the fixture's users (the fixture lists only their SHA-256 digests). */
const KEYS = {
  alice: 'dasu_alice-primary-key-0001-Qm9vdHN0cmFwcGVk',
  aliceSecond: 'dasu_alice-second-key-0002-U2Vjb25kS2V5Rm9y',
  bob: 'dasu_bob-narrowed-key-0001-TmFycm93ZWRHcmFudHM',
  carol: 'dasu_carol-revoked-key-0001-UmV2b2tlZEtleQ',
  dave: 'dasu_dave-other-app-key-0001-T3RoZXJBcHBsaWNhdGlvbg',
};

const harness = new ServiceHarness(CONFIG);
beforeAll(() => harness.start());
afterAll(() => harness.stop());

/** A request on a /client/ path with a personal access key (or none), and nothing signed. */
async function client(
  route: string,
  body: Record<string, unknown> | undefined,
  key: string | undefined,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  const init: RequestInit = {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
  };
  if (key !== undefined) (init.headers as Record<string, string>)['X-User-AK'] = key;
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(`${harness.url}${route}`, init);
  return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
}

const signed = (route: string, body: Record<string, unknown>) => harness.call(route, body, { app: MAIN });
const asAlice = (route: string, body: Record<string, unknown>) =>
  client(route, { appCode: 'app-main', ...body }, KEYS.alice);
const asBob = (route: string, body: Record<string, unknown>) =>
  client(route, { appCode: 'app-main', ...body }, KEYS.bob);

/** The record without the fields the service generates. */
function fieldsOf(record: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, gmt_create: _created, gmt_modified: _modified, ...fields } = record;
  return fields;
}

describe('every operation answers the same in both modes', () => {
  let signedId: string;
  let clientId: string;

  beforeAll(async () => {
    const bySignature = await signed('/openapi/data/create', {
      datasetCode: 'tasks',
      paramMap: { title: 'Write the report', status: 'open', owner: 'alice', cost: 12.5 },
    });
    const byKey = await asAlice('/client/data/create', {
      datasetCode: 'tasks',
      paramMap: { title: 'Review the report', status: 'open', owner: 'bob', cost: 3 },
    });
    expect([bySignature.status, byKey.status]).toEqual([200, 200]);
    signedId = bySignature.body.data.id;
    clientId = byKey.body.data.id;
    await signed('/openapi/data/create', {
      datasetCode: 'tasks',
      paramMap: { title: 'File the expenses', status: 'done', owner: 'bob', cost: 7 },
    });
  });

  it('create: the same record shape, with the fields sent', async () => {
    const one = await signed('/openapi/data/get-one', { datasetCode: 'tasks', paramMap: { id: clientId } });
    expect(fieldsOf(one.body.data)).toEqual({ title: 'Review the report', status: 'open', owner: 'bob', cost: 3 });
    expect(Object.keys(one.body.data).sort()).toEqual(
      ['cost', 'gmt_create', 'gmt_modified', 'id', 'owner', 'status', 'title'].sort(),
    );
  });

  it('get-one: the same answer for each record', async () => {
    for (const id of [signedId, clientId]) {
      const a = await signed('/openapi/data/get-one', { datasetCode: 'tasks', paramMap: { id } });
      const b = await asAlice('/client/data/get-one', { datasetCode: 'tasks', paramMap: { id } });
      expect(b.status).toBe(200);
      expect(b.body).toEqual(a.body);
    }
  });

  it('get-list: the same page, totals and columns', async () => {
    const paramMap = { ytSortList: [{ title: 'asc' }], pageSize: 10 };
    const a = await signed('/openapi/data/get-list', { datasetCode: 'tasks', paramMap });
    const b = await asAlice('/client/data/get-list', { datasetCode: 'tasks', paramMap });
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(b.body.data.paging.totalCount).toBe(3);
    expect(b.body.data.tableData.map((r: { title: string }) => r.title)).toEqual([
      'File the expenses',
      'Review the report',
      'Write the report',
    ]);
  });

  it('update: each mode sees the other mode’s change, answered the same', async () => {
    const byKey = await asAlice('/client/data/update', { datasetCode: 'tasks', paramMap: { id: signedId, cost: 20 } });
    expect(byKey.status).toBe(200);
    expect(fieldsOf(byKey.body.data)).toEqual({ title: 'Write the report', status: 'open', owner: 'alice', cost: 20 });
    const readSigned = await signed('/openapi/data/get-one', { datasetCode: 'tasks', paramMap: { id: signedId } });
    expect(readSigned.body.data).toEqual(byKey.body.data);

    const bySignature = await signed('/openapi/data/update', {
      datasetCode: 'tasks',
      paramMap: { id: clientId, status: 'done' },
    });
    const readByKey = await asAlice('/client/data/get-one', { datasetCode: 'tasks', paramMap: { id: clientId } });
    expect(readByKey.body.data).toEqual(bySignature.body.data);
    expect(readByKey.body.data.status).toBe('done');
  });

  it('execute-sql: the same rows', async () => {
    const a = await signed('/api/custom/executeSql', { sqlCode: 'tasks-by-owner' });
    const b = await asAlice('/client/custom/executeSql', { sqlCode: 'tasks-by-owner' });
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(b.body.data).toEqual({
      execSuccess: true,
      execResult: [
        { owner: 'alice', tasks: 1 },
        { owner: 'bob', tasks: 2 },
      ],
    });
  });

  it('the same errors too: an unknown id is 2002, a wrong type 1001, naming the field', async () => {
    const missing = { datasetCode: 'tasks', paramMap: { id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8' } };
    const a = await signed('/openapi/data/get-one', missing);
    const b = await asAlice('/client/data/get-one', missing);
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(b.body).toEqual(a.body);
    const wrong = { datasetCode: 'tasks', paramMap: { title: 'x', cost: 'lots' } };
    const c = await signed('/openapi/data/create', wrong);
    const d = await asAlice('/client/data/create', wrong);
    expect(d.body).toEqual({ ...failureWith(1001), errorMsg: c.body.errorMsg });
    expect(d.body.errorMsg).toContain("'cost'");
  });

  it('both answers carry the request id and the application’s rate-limit headers', async () => {
    const b = await asAlice('/client/data/get-list', { datasetCode: 'tasks' });
    expect(b.headers.get('x-request-id')).toMatch(/.+/);
    expect(b.headers.get('ratelimit-limit')).toBe('600');
  });
});

describe('GET /client/user/loginUserInfo', () => {
  it('answers the key’s user, with its application', async () => {
    const alice = await client('/client/user/loginUserInfo', undefined, KEYS.alice);
    expect(alice.status).toBe(200);
    expect(alice.body).toEqual({
      success: true,
      msg: null,
      data: {
        id: 'alice',
        userName: 'Alice Martin',
        loginName: 'alice@example.com',
        appCode: 'app-main',
        role: 'admin',
      },
    });
    const second = await client('/client/user/loginUserInfo', undefined, KEYS.aliceSecond);
    expect(second.body.data.id).toBe('alice');
    const dave = await client('/client/user/loginUserInfo', undefined, KEYS.dave);
    expect(dave.body.data).toEqual({
      id: 'dave',
      userName: 'Dave Okafor',
      loginName: 'dave@example.com',
      appCode: 'app-other',
      role: null,
    });
  });

  it('is 1002 without an active key, and takes GET only', async () => {
    const none = await client('/client/user/loginUserInfo', undefined, undefined);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      ...failureWith(1002),
      errorMsg: 'header X-User-AK is required on /client/ paths: a personal access key',
    });
    const post = await client('/client/user/loginUserInfo', { appCode: 'app-main' }, KEYS.alice);
    expect(post.body).toEqual({ ...failureWith(1001), errorMsg: '/client/user/loginUserInfo accepts GET only' });
  });
});

describe('bad keys and another application’s key', () => {
  const body = { appCode: 'app-main', datasetCode: 'tasks', paramMap: {} };
  const refused = { ...failureWith(1002), errorMsg: 'X-User-AK is not an active personal access key' };

  it('a missing key is 1002', async () => {
    const answer = await client('/client/data/get-list', body, undefined);
    expect(answer.status).toBe(401);
    expect(answer.body.errorCode).toBe(1002);
  });

  it('an unknown, a malformed and a revoked key are 1002, with one message', async () => {
    for (const key of [
      'dasu_not-a-key-anybody-issued-000000000000',
      'short',
      `${KEYS.alice}x`,
      KEYS.alice.toUpperCase(),
      KEYS.carol,
    ]) {
      const answer = await client('/client/data/get-list', body, key);
      expect([key, answer.status, answer.body]).toEqual([key, 401, refused]);
    }
  });

  it('refused keys count against nothing: no rate-limit headers', async () => {
    const answer = await client('/client/data/get-list', body, KEYS.carol);
    expect(answer.headers.get('ratelimit-limit')).toBeNull();
  });

  it('a key used with another application’s appCode is 1006, whether that application exists or not', async () => {
    const dave = await client('/client/data/get-list', body, KEYS.dave);
    expect(dave.status).toBe(403);
    expect(dave.body).toEqual({
      ...failureWith(1006),
      errorMsg: "this personal access key does not belong to application 'app-main'",
    });
    const alice = await client('/client/data/get-list', { ...body, appCode: 'app-other' }, KEYS.alice);
    expect(alice.body.errorCode).toBe(1006);
    const nowhere = await client('/client/data/get-list', { ...body, appCode: 'app-nowhere' }, KEYS.alice);
    expect(nowhere.body.errorCode).toBe(1006);
  });

  it('the body still needs its codes (1001), and an unknown dataset is 1005', async () => {
    const noApp = await client('/client/data/get-list', { datasetCode: 'tasks' }, KEYS.alice);
    expect(noApp.body).toEqual({ ...failureWith(1001), errorMsg: 'appCode is required in the request body' });
    const noDataset = await client('/client/data/get-one', { appCode: 'app-main', paramMap: { id: 1 } }, KEYS.alice);
    expect(noDataset.body).toEqual({ ...failureWith(1001), errorMsg: 'datasetCode is required in the request body' });
    const unknown = await asAlice('/client/data/get-list', { datasetCode: 'nothing_here' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorCode).toBe(1005);
  });
});

describe('one way in per path', () => {
  it('signed headers do not open /client/ paths', async () => {
    const timeStamp = String(Date.now());
    const { signRequest } = await import('../../../../../packages/client/src/signature');
    const token = signRequest(
      { accessKey: MAIN.accessKey, appCode: 'app-main', datasetCode: 'tasks', timeStamp },
      MAIN.secret,
    );
    const answer = await client('/client/data/get-list', { appCode: 'app-main', datasetCode: 'tasks' }, undefined, {
      'X-Time-Stamp': timeStamp,
      'X-App-Code': 'app-main',
      'X-Dataset-Code': 'tasks',
      'X-Token': token,
    });
    expect(answer.status).toBe(401);
    expect(answer.body.errorCode).toBe(1002);
  });

  it('a client key does not open signed paths', async () => {
    const response = await fetch(`${harness.url}/openapi/data/get-list`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-User-AK': KEYS.alice },
      body: JSON.stringify({ appCode: 'app-main', datasetCode: 'tasks' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ ...failureWith(1001), errorMsg: 'header X-Time-Stamp is required' });
  });
});

describe('a user’s narrowed grants', () => {
  it('lists only the user’s rows and readable fields', async () => {
    const list = await asBob('/client/data/get-list', {
      datasetCode: 'tasks',
      paramMap: { ytSortList: [{ title: 'asc' }] },
    });
    expect(list.status).toBe(200);
    expect(list.body.data.paging.totalCount).toBe(2);
    expect(list.body.data.tableData.map((r: Record<string, unknown>) => fieldsOf(r))).toEqual([
      { title: 'File the expenses', status: 'done', owner: 'bob' },
      { title: 'Review the report', status: 'done', owner: 'bob' },
    ]);
    expect(list.body.data.tableColumns.map((c: { dataIndex: string }) => c.dataIndex)).toEqual([
      'id',
      'title',
      'status',
      'owner',
      'gmt_create',
      'gmt_modified',
    ]);
  });

  it('another user’s row is not found (2002), and custom SQL sees only the user’s rows', async () => {
    const all = await asAlice('/client/data/get-list', { datasetCode: 'tasks', paramMap: { owner: 'alice' } });
    const alicesTask = all.body.data.tableData[0].id;
    const answer = await asBob('/client/data/get-one', { datasetCode: 'tasks', paramMap: { id: alicesTask } });
    expect(answer.status).toBe(404);
    expect(answer.body.errorCode).toBe(2002);
    const sql = await asBob('/client/custom/executeSql', { sqlCode: 'tasks-by-owner' });
    expect(sql.body.data).toEqual({ execSuccess: true, execResult: [{ owner: 'bob', tasks: 2 }] });
  });

  it('operations, datasets and fields outside the user’s grant are 1006, even where the application may', async () => {
    const create = await asBob('/client/data/create', {
      datasetCode: 'tasks',
      paramMap: { title: 'Mine', owner: 'bob' },
    });
    expect(create.status).toBe(403);
    expect(create.body).toEqual({
      ...failureWith(1006),
      errorMsg: "user 'bob' of application 'app-main' may not create records of dataset 'tasks'",
    });
    const reports = await asBob('/client/data/get-list', { datasetCode: 'reports' });
    expect(reports.body).toEqual({
      ...failureWith(1006),
      errorMsg: "user 'bob' of application 'app-main' has no access to dataset 'reports'",
    });
    const mine = await asBob('/client/data/get-list', { datasetCode: 'tasks', paramMap: { status: 'done' } });
    const id = mine.body.data.tableData[0].id;
    const title = await asBob('/client/data/update', { datasetCode: 'tasks', paramMap: { id, title: 'Renamed' } });
    expect(title.body.errorCode).toBe(1006);
    const status = await asBob('/client/data/update', { datasetCode: 'tasks', paramMap: { id, status: 'open' } });
    expect(status.status).toBe(200);
    expect(fieldsOf(status.body.data)).toEqual({
      title: mine.body.data.tableData[0].title,
      status: 'open',
      owner: 'bob',
    });
  });

  it('the application itself keeps its whole grant', async () => {
    const reports = await signed('/openapi/data/get-list', { datasetCode: 'reports' });
    expect(reports.status).toBe(200);
  });
});

describe('the request log', () => {
  it('carries the mode, and the userId of a client-key request', async () => {
    const answer = await asAlice('/client/data/get-list', { datasetCode: 'reports' });
    const requestId = answer.headers.get('x-request-id');
    const line = harness.logLines.find((l) => l.requestId === requestId);
    expect(line).toMatchObject({ operation: 'get-list', appCode: 'app-main', mode: 'client', userId: 'alice' });
    const dims = (line?._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]?.Dimensions;
    expect(dims).toContainEqual(['mode']);

    const bySignature = await signed('/openapi/data/get-list', { datasetCode: 'reports' });
    const signedLine = harness.logLines.find((l) => l.requestId === bySignature.headers.get('x-request-id'));
    expect(signedLine).toMatchObject({ operation: 'get-list', appCode: 'app-main', mode: 'signed' });
    expect(signedLine?.userId).toBeUndefined();
  });

  it('never carries the key', async () => {
    await client('/client/user/loginUserInfo', undefined, KEYS.aliceSecond);
    const text = JSON.stringify(harness.logLines);
    for (const key of Object.values(KEYS)) expect(text).not.toContain(key);
  });
});

describe('the TypeScript client with a userKey', () => {
  it('calls the /client/ paths and answers as the signed client does', async () => {
    const byKey = createClient({ baseUrl: harness.url, appCode: 'app-main', userKey: KEYS.alice });
    const bySignature = createClient({
      baseUrl: harness.url,
      appCode: 'app-main',
      accessKey: MAIN.accessKey,
      signingSecret: MAIN.secret,
    });
    const params = { ytSortList: [{ title: 'asc' as const }] };
    expect(await byKey.getList('tasks', params)).toEqual(await bySignature.getList('tasks', params));
    expect(await byKey.executeSql('tasks-by-owner')).toEqual(await bySignature.executeSql('tasks-by-owner'));
    expect(await byKey.loginUserInfo()).toEqual({
      id: 'alice',
      userName: 'Alice Martin',
      loginName: 'alice@example.com',
      appCode: 'app-main',
      role: 'admin',
    });
  });

  it('turns a refused key and a narrowed grant into typed errors', async () => {
    const revoked = createClient({ baseUrl: harness.url, appCode: 'app-main', userKey: KEYS.carol });
    await expect(revoked.getList('tasks')).rejects.toBeInstanceOf(AuthenticationError);
    const bob = createClient({ baseUrl: harness.url, appCode: 'app-main', userKey: KEYS.bob });
    await expect(bob.create('tasks', { title: 'Mine' })).rejects.toMatchObject({ errorCode: 1006, httpStatus: 403 });
  });
});

describe('das with a personal access key', () => {
  const das = (args: string[], env: Record<string, string> = {}) => runDas(args, { DAS_URL: harness.url, ...env });

  it('user-key create shows a new key once with its digest, and says where the digest goes', async () => {
    const json = await das(['user-key', 'create', '--app', 'app-main', '--user', 'alice', '--json']);
    expect(json.code).toBe(0);
    const made = JSON.parse(json.stdout) as { appCode: string; userId: string; key: string; keyHash: string };
    expect(made.key).toMatch(/^dasu_[A-Za-z0-9_-]{43}$/);
    expect(made).toEqual({ appCode: 'app-main', userId: 'alice', key: made.key, keyHash: userKeyDigest(made.key) });

    const text = await das(['user-key', 'create', '--app', 'app-main', '--user', 'alice', '--config', CONFIG]);
    expect(text.code).toBe(0);
    const [key, digest] = [...text.stdout.matchAll(/^ {2}(\S+)$/gm)].map((m) => m[1]);
    expect(digest).toBe(userKeyDigest(key as string));
    expect(text.stdout).toContain("in the keyHashes of user 'alice'");
    expect(text.stdout).toContain('within 60 seconds of the deploy');

    const newcomer = await das(['user-key', 'create', '--app', 'app-main', '--user', 'zoe', '--config', CONFIG]);
    expect(newcomer.stdout).toContain('a new entry of its users: {"userId": "zoe"');
    const unknown = await das(['user-key', 'create', '--app', 'app-nowhere', '--user', 'zoe', '--config', CONFIG]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`no application 'app-nowhere' in ${CONFIG}`);
  });

  it('call --user-key (or DAS_USER_KEY) calls the /client/ path', async () => {
    const list = await das(['call', 'get-list', '--user-key', KEYS.bob, '--app', 'app-main', '--dataset', 'tasks']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).data.paging.totalCount).toBe(2);
    const who = await das(['call', 'login-user-info'], { DAS_USER_KEY: KEYS.bob });
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout).data).toMatchObject({ id: 'bob', appCode: 'app-main', role: null });
    const refused = await das(['call', 'get-list', '--app', 'app-main', '--dataset', 'tasks'], {
      DAS_USER_KEY: KEYS.carol,
    });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).errorCode).toBe(1002);
    const noApp = await das(['call', 'get-list', '--user-key', KEYS.bob, '--dataset', 'tasks']);
    expect(noApp.code).toBe(2);
    expect(noApp.stderr).toContain('--user-key needs --app');
  });
});
