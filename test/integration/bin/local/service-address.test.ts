/**
 * The local service's address record (bin/local/service-address.ts), as a developer meets it: their `npm start`
 * runs, a second server starts in the same checkout (another terminal, or a test) and stops again, and
 * `das call` and `das sign --curl` still reach the first one. Test processes write their servers' records into
 * files of their own (test/setup-env.js), never into the checkout's, which this test checks too.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../../support/paths';
import { type DasServer, runDas, startDasServe } from '../../../support/run-das';
import { FIXTURE_CONFIG, MAIN_APP } from '../../../support/service-harness';

const scratch = mkdtempSync(path.join(tmpdir(), 'das-address-'));
const record = path.join(scratch, 'local-service.json');
const CHECKOUT_RECORD = path.join(REPO_ROOT, 'node_modules', '.cache', 'data-access-service', 'local-service.json');
const KEYS = ['--app', MAIN_APP.appCode, '--key', MAIN_APP.accessKey, '--secret', MAIN_APP.secret];
const servers: DasServer[] = [];

function serve(name: string): Promise<DasServer> {
  const args = ['--port', '0', '--data-dir', path.join(scratch, name), '--config', FIXTURE_CONFIG, '--quiet'];
  return startDasServe(args, { DAS_LOCAL_SERVICE_FILE: record }).then((server) => {
    servers.push(server);
    return server;
  });
}

function readRecord(): unknown {
  return existsSync(record) ? JSON.parse(readFileSync(record, 'utf8')) : undefined;
}

function checkoutRecord(): string | undefined {
  return existsSync(CHECKOUT_RECORD) ? readFileSync(CHECKOUT_RECORD, 'utf8') : undefined;
}

afterAll(async () => {
  for (const server of servers) await server.stop();
  rmSync(scratch, { recursive: true, force: true });
});

it('a second server that stops gives the record back to the first, which das still reaches', async () => {
  const checkoutBefore = checkoutRecord();
  const first = await serve('first');
  // With where its data is, for das webhooks.
  expect(readRecord()).toEqual({
    url: first.url,
    pid: first.pid,
    store: {
      endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      region: 'local',
      credentialsConfigured: false,
      tables: { catalog: 'das-local-catalog', events: 'das-local-events' },
    },
  });

  const second = await serve('second');
  expect(readRecord()).toMatchObject({ url: second.url, pid: second.pid });
  expect(await second.stop()).toBe(0);
  expect(readRecord()).toMatchObject({ url: first.url, pid: first.pid });

  const call = await runDas(['call', 'get-list', '--dataset', 'typed', ...KEYS], { DAS_LOCAL_SERVICE_FILE: record });
  expect([call.code, JSON.parse(call.stdout).success]).toEqual([0, true]);
  const curl = await runDas(['sign', '--curl', '--dataset', 'typed', ...KEYS], { DAS_LOCAL_SERVICE_FILE: record });
  expect(curl.stdout).toContain(`'${first.url}/openapi/data/get-list'`);

  expect(await first.stop()).toBe(0);
  expect(readRecord()).toBeUndefined();
  // Neither server wrote where a developer's own `npm start` in this checkout records itself.
  expect(checkoutRecord()).toBe(checkoutBefore);
}, 60_000);
