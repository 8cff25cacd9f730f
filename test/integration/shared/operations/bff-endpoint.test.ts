/**
 * GET /client/bff/endpoint/{appCode}/{functionName} over HTTP (docs/interface.md §15): a backend function's
 * description, version and modified time, and nothing else, to a personal access key of the function's
 * application; then the same through the TypeScript client's bffEndpoint and `das call bff-endpoint`. The real
 * handlers, real pipeline and real dynalite, with the hooks fixture's functions.
 */
import { request } from 'node:http';
import path from 'node:path';
import {
  AccessDeniedError,
  createClient,
  InvalidParameterError,
  NotFoundError,
} from '../../../../packages/client/src/index';
import { failureWith } from '../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../support/paths';
import { runDas } from '../../../support/run-das';
import { type CallResult, ServiceHarness } from '../../../support/service-harness';

const CONFIG = path.join(FIXTURES_DIR, 'hooks-config.json');
const KEYS = {
  /** alice, a user of app-main, which declares the fixture's functions. */
  alice: 'dasu_alice-primary-key-0001-Qm9vdHN0cmFwcGVk',
  /** dave, a user of app-other, which declares none. */
  dave: 'dasu_dave-other-app-key-0001-T3RoZXJBcHBsaWNhdGlvbg',
};

const harness = new ServiceHarness(CONFIG);
let startedAt: number;
let readyAt: number;
beforeAll(async () => {
  // Whole seconds: gmt_modified has no finer unit.
  startedAt = Math.floor(Date.now() / 1000) * 1000;
  await harness.start();
  readyAt = Date.now();
});
afterAll(() => harness.stop());

async function bff(pathAfterEndpoint: string, key?: string, init: RequestInit = {}): Promise<CallResult> {
  const response = await fetch(`${harness.url}/client/bff/endpoint/${pathAfterEndpoint}`, {
    method: 'GET',
    ...init,
    headers: { ...(key === undefined ? {} : { 'X-User-AK': key }), ...(init.headers as Record<string, string>) },
  });
  return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
}

function logOf(result: CallResult): Record<string, unknown> | undefined {
  const requestId = result.headers.get('x-request-id');
  return harness.logLines.find((line) => line.requestId === requestId);
}

describe('a function of the key’s application', () => {
  it('answers its description, version 1 and the time the server deployed it, and nothing else', async () => {
    const answer = await bff('app-main/mask-email', KEYS.alice);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      msg: null,
      data: { description: 'Masks e-mail addresses', version: 1, gmt_modified: expect.any(String) },
    });
    // `npm start` deploys the configuration when it starts: the fixture's time zone is UTC.
    expect(answer.body.data.gmt_modified).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const modified = Date.parse(`${answer.body.data.gmt_modified.replace(' ', 'T')}Z`);
    expect(modified).toBeGreaterThanOrEqual(startedAt);
    expect(modified).toBeLessThanOrEqual(readyAt);
  });

  it('answers a null description when the configuration gives none', async () => {
    const answer = await bff('app-main/runaway', KEYS.alice);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.data)).toEqual(['description', 'version', 'gmt_modified']);
    expect(answer.body.data).toMatchObject({ description: null, version: 1 });
  });

  it('logs one line with the operation, application and user, costing only the quota’s admission', async () => {
    const answer = await bff('app-main/stamp', KEYS.alice);
    expect(answer.status).toBe(200);
    expect(logOf(answer)).toMatchObject({
      operation: 'bff-endpoint',
      appCode: 'app-main',
      mode: 'client',
      userId: 'alice',
      readUnits: 0,
    });
    // One write when the environment holds no token or no live slot for the application, else none.
    expect([0, 1]).toContain(logOf(answer)?.writeUnits);
    expect(logOf(answer)?.errorCode).toBeUndefined();
  });

  it('reads the function from the path only: a body or a query string sent with the GET changes nothing', async () => {
    const url = new URL(`${harness.url}/client/bff/endpoint/app-main/mask-email?functionName=stamp`);
    const body = JSON.stringify({ appCode: 'app-other', functionName: 'stamp' });
    const text = await new Promise<string>((resolve, reject) => {
      const headers = { 'X-User-AK': KEYS.alice, 'Content-Type': 'application/json', 'Content-Length': body.length };
      const sent = request(url, { method: 'GET', headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      sent.on('error', reject);
      sent.end(body);
    });
    expect(JSON.parse(text)).toMatchObject({ success: true, data: { description: 'Masks e-mail addresses' } });
  });
});

describe('refusals', () => {
  it('an unknown function is 2002', async () => {
    const answer = await bff('app-main/no-such-function', KEYS.alice);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      ...failureWith(2002),
      errorMsg: "backend function 'no-such-function' not found in application 'app-main'",
    });
  });

  it('another application’s function is as unknown as a missing one (2002)', async () => {
    const answer = await bff('app-other/mask-email', KEYS.dave);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      ...failureWith(2002),
      errorMsg: "backend function 'mask-email' not found in application 'app-other'",
    });
  });

  it('a key of another application is 1006, whichever function is asked', async () => {
    for (const name of ['mask-email', 'no-such-function']) {
      const answer = await bff(`app-main/${name}`, KEYS.dave);
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({
        ...failureWith(1006),
        errorMsg: "this personal access key does not belong to application 'app-main'",
      });
    }
  });

  it('no key, or a key that is not active, is 1002; signed headers open nothing here', async () => {
    const none = await bff('app-main/mask-email');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      ...failureWith(1002),
      errorMsg: 'header X-User-AK is required on /client/ paths: a personal access key',
    });
    const unknown = await bff('app-main/mask-email', 'dasu_not-a-key-of-anyone-0000-AAAAAAAAAAAA');
    expect(unknown.body).toEqual({ ...failureWith(1002), errorMsg: 'X-User-AK is not an active personal access key' });
    const signedOnly = await bff('app-main/mask-email', undefined, {
      headers: { 'X-App-Code': 'app-main', 'X-Time-Stamp': String(Date.now()), 'X-Token': 'dG9rZW4=' },
    });
    expect(signedOnly.body.errorCode).toBe(1002);
  });

  it('a malformed application or function name is 1001, naming it', async () => {
    const badFunction = await bff(`app-main/${encodeURIComponent('mask email')}`, KEYS.alice);
    expect(badFunction.status).toBe(400);
    expect(badFunction.body).toEqual({
      ...failureWith(1001),
      errorMsg: 'functionName must be 1 to 64 letters, digits, "_" or "-"',
    });
    const badApp = await bff(`${'a'.repeat(65)}/mask-email`, KEYS.alice);
    expect(badApp.body).toEqual({
      ...failureWith(1001),
      errorMsg: 'appCode must be 1 to 64 letters, digits, "_" or "-"',
    });
  });

  it('takes GET only, and a missing segment is no route', async () => {
    const post = await bff('app-main/mask-email', KEYS.alice, { method: 'POST', body: '{}' });
    expect(post.body).toEqual({
      ...failureWith(1001),
      errorMsg: '/client/bff/endpoint/app-main/mask-email accepts GET only',
    });
    const short = await bff('app-main', KEYS.alice);
    expect(short.body).toEqual({ ...failureWith(1001), errorMsg: 'no operation at GET /client/bff/endpoint/app-main' });
  });
});

describe('the TypeScript client’s bffEndpoint', () => {
  const alice = () => createClient({ baseUrl: harness.url, appCode: 'app-main', userKey: KEYS.alice });

  it('answers the function’s description, version and modified time, as the path does', async () => {
    const answer = await alice().bffEndpoint('mask-email');
    expect(answer).toEqual({ description: 'Masks e-mail addresses', version: 1, gmt_modified: expect.any(String) });
    expect(answer.gmt_modified).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect((await bff('app-main/mask-email', KEYS.alice)).body.data).toEqual(answer);
    expect(await alice().bffEndpoint('runaway')).toEqual({
      description: null,
      version: 1,
      gmt_modified: answer.gmt_modified,
    });
  });

  it('an unknown function is a NotFoundError (2002)', async () => {
    const failure = alice().bffEndpoint('no-such-function');
    await expect(failure).rejects.toBeInstanceOf(NotFoundError);
    await expect(failure).rejects.toMatchObject({
      errorCode: 2002,
      httpStatus: 404,
      errorMsg: "backend function 'no-such-function' not found in application 'app-main'",
    });
  });

  it('a key of another application is an AccessDeniedError (1006)', async () => {
    const dave = createClient({ baseUrl: harness.url, appCode: 'app-main', userKey: KEYS.dave });
    const failure = dave.bffEndpoint('mask-email');
    await expect(failure).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(failure).rejects.toMatchObject({
      errorCode: 1006,
      httpStatus: 403,
      errorMsg: "this personal access key does not belong to application 'app-main'",
    });
  });

  it('sends the function’s name as one path segment, URL-encoded', async () => {
    for (const name of ['mask email', 'mask-email/../stamp', 'mask-email?x=1']) {
      const failure = alice().bffEndpoint(name);
      await expect(failure).rejects.toBeInstanceOf(InvalidParameterError);
      await expect(failure).rejects.toMatchObject({
        errorCode: 1001,
        errorMsg: 'functionName must be 1 to 64 letters, digits, "_" or "-"',
      });
    }
  });

  it('without a userKey, an appCode or a name it throws before sending anything', async () => {
    const before = harness.logLines.length;
    const signed = createClient({
      baseUrl: harness.url,
      appCode: 'app-main',
      accessKey: 'ak-main-client-fixture-0001',
      signingSecret: 'sk-main-client-fixture',
    });
    await expect(signed.bffEndpoint('mask-email')).rejects.toThrow(
      'bffEndpoint needs a userKey: /client/bff/endpoint/{appCode}/{functionName} is client-key mode only',
    );
    const noApp = createClient({ baseUrl: harness.url, appCode: '', userKey: KEYS.alice });
    await expect(noApp.bffEndpoint('mask-email')).rejects.toThrow(
      "bffEndpoint needs the client's appCode: the application of the key and of the function",
    );
    await expect(alice().bffEndpoint('')).rejects.toThrow(
      "/client/bff/endpoint/{appCode}/{functionName} needs functionName: a non-empty string other than '.' and '..'",
    );
    expect(harness.logLines.length).toBe(before);
  });
});

describe('das call bff-endpoint', () => {
  const das = (args: string[], env: Record<string, string> = {}) => runDas(args, { DAS_URL: harness.url, ...env });

  it('prints the success envelope with exit code 0; the key and application may come from the environment', async () => {
    const flags = await das([
      'call',
      'bff-endpoint',
      '--user-key',
      KEYS.alice,
      '--app',
      'app-main',
      '--function',
      'mask-email',
    ]);
    expect([flags.code, flags.stderr]).toEqual([0, '']);
    const envelope = JSON.parse(flags.stdout);
    expect(envelope).toEqual({
      success: true,
      msg: null,
      data: { description: 'Masks e-mail addresses', version: 1, gmt_modified: expect.any(String) },
    });
    expect(envelope.data.gmt_modified).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    const fromEnv = await das(['call', 'bffEndpoint', '--function', 'runaway'], {
      DAS_USER_KEY: KEYS.alice,
      DAS_APP_CODE: 'app-main',
    });
    expect(fromEnv.code).toBe(0);
    expect(JSON.parse(fromEnv.stdout)).toEqual({
      success: true,
      msg: null,
      data: { description: null, version: 1, gmt_modified: envelope.data.gmt_modified },
    });
  });

  it('prints a failure envelope with exit code 1 and the HTTP status on stderr: 2002, then 1006', async () => {
    const callAsMain = (userKey: string, functionName: string) =>
      das(['call', 'bff-endpoint', '--user-key', userKey, '--app', 'app-main', '--function', functionName]);
    const unknown = await callAsMain(KEYS.alice, 'no-such-function');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({
      ...failureWith(2002),
      errorMsg: "backend function 'no-such-function' not found in application 'app-main'",
    });
    expect(unknown.stderr).toMatch(/^HTTP 404, request id \S+\n$/);

    const foreign = await callAsMain(KEYS.dave, 'mask-email');
    expect(foreign.code).toBe(1);
    expect(JSON.parse(foreign.stdout)).toEqual({
      ...failureWith(1006),
      errorMsg: "this personal access key does not belong to application 'app-main'",
    });
    expect(foreign.stderr).toMatch(/^HTTP 403, request id \S+\n$/);
  });

  it('without a key, a function or an application it is a usage error (exit code 2) and sends nothing', async () => {
    const before = harness.logLines.length;
    const cases: [string[], string][] = [
      [
        ['--app', 'app-main', '--function', 'mask-email'],
        'bff-endpoint needs a personal access key: --user-key or DAS_USER_KEY',
      ],
      [['--user-key', KEYS.alice, '--app', 'app-main'], 'bff-endpoint needs --function <name>: the backend function'],
      [
        ['--user-key', KEYS.alice, '--function', 'mask-email'],
        '--user-key needs --app (or DAS_APP_CODE): the application of the key',
      ],
    ];
    for (const [args, message] of cases) {
      const run = await das(['call', 'bff-endpoint', ...args]);
      expect(run).toEqual({ code: 2, stdout: '', stderr: `das call: ${message}\nSee: das call --help\n` });
    }
    const misplaced = await das([
      'call',
      'get-list',
      '--user-key',
      KEYS.alice,
      '--app',
      'app-main',
      '--dataset',
      'people',
      '--function',
      'mask-email',
    ]);
    expect(misplaced).toEqual({
      code: 2,
      stdout: '',
      stderr: 'das call: --function goes with bff-endpoint\nSee: das call --help\n',
    });
    expect(harness.logLines.length).toBe(before);
  });

  it('das call --help names the operation, its option and an example', async () => {
    const help = await das(['call', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('with a personal access key login-user-info and bff-endpoint.');
    expect(help.stdout).toContain('  --function <name>   bff-endpoint: the backend function of the --app application');
    expect(help.stdout).toContain('  das call bff-endpoint --user-key "$KEY" --app app-demo --function mask-email\n');
  });
});
