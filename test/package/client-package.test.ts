/**
 * The client package as a partner gets it: `npm pack` builds and packs packages/client, the tarball is installed
 * into an empty project (no registry needed: the package has no dependencies), and that project calls the real
 * local server from an ES module, from CommonJS, from TypeScript's type checker, and through `npx das`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_CONFIG } from '../../bin/local/default-config';
import { ServiceHarness } from '../support/service-harness';

const run = promisify(execFile);
const REPOSITORY = path.join(__dirname, '..', '..');
const PACKAGE_DIR = path.join(REPOSITORY, 'packages', 'client');
const NAME = '@data-access-service/client';
const KEYS = { DAS_APP_CODE: 'app-demo', DAS_ACCESS_KEY: 'ak-7f3c9a1b2d4e', DAS_SIGNING_SECRET: 'sk-demo-secret' };

const harness = new ServiceHarness(DEFAULT_CONFIG);
const scratch = mkdtempSync(path.join(tmpdir(), 'das-package-'));
const project = path.join(scratch, 'partner-app');
let env: NodeJS.ProcessEnv;

function npm(args: string[], cwd: string) {
  return run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env, maxBuffer: 16 << 20 });
}

beforeAll(async () => {
  await harness.start();
  // Outside the repository: no workspace, no checkout defaults, only what the tarball brings.
  env = { ...process.env, ...KEYS, DAS_URL: harness.url, npm_config_cache: path.join(scratch, 'npm-cache') };
  for (const name of Object.keys(env)) if (name.startsWith('npm_package_') || name === 'INIT_CWD') delete env[name];
  await npm(['pack', '--pack-destination', scratch], PACKAGE_DIR);
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'partner-app', private: true }));
  const tarball = readdirSync(scratch).find((file) => file.endsWith('.tgz')) as string;
  await npm(['install', '--offline', path.join(scratch, tarball)], project);
}, 240_000);
afterAll(async () => {
  await harness.stop();
  rmSync(scratch, { recursive: true, force: true });
});

it('packs a named, versioned package with ESM and CommonJS entries, types and no dependencies', () => {
  const installed = JSON.parse(
    readFileSync(path.join(project, 'node_modules', NAME, 'package.json'), 'utf8'),
  ) as Record<string, unknown>;
  expect(installed).toMatchObject({ name: NAME, version: '0.1.0', bin: { das: 'bin/das.cjs' } });
  expect(installed.dependencies).toBeUndefined();
  expect(installed.exports).toMatchObject({
    '.': {
      import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
      require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
    },
  });
  // Only the partner app and the client: nothing of the AWS SDK came along.
  expect(readdirSync(path.join(project, 'node_modules')).sort()).toEqual([
    '.bin',
    '.package-lock.json',
    '@data-access-service',
  ]);
});

it('an ES module creates and lists records against the local server', async () => {
  writeFileSync(
    path.join(project, 'esm.mjs'),
    `import { createClient, NotFoundError } from '${NAME}';
const das = createClient({ baseUrl: process.env.DAS_URL, appCode: 'app-demo', accessKey: process.env.DAS_ACCESS_KEY, signingSecret: process.env.DAS_SIGNING_SECRET });
const order = await das.create('orders', { customer_id: 'c-esm', amount: 7, status: 'new' });
const page = await das.getList('orders', { customer_id: 'c-esm' });
const missing = await das.getOne('orders', '01JD5Y0RZ6W8Q4N3V2M1K0H9G8').catch((e) => e instanceof NotFoundError && e.errorCode);
console.log(JSON.stringify({ same: page.tableData[0].id === order.id, total: page.paging.totalCount, missing }));
`,
  );
  const { stdout } = await run(process.execPath, ['esm.mjs'], { cwd: project, env });
  expect(JSON.parse(stdout)).toEqual({ same: true, total: 1, missing: 2002 });
});

it('CommonJS requires the same client and runs the registered SQL', async () => {
  writeFileSync(
    path.join(project, 'cjs.cjs'),
    `const { createClient } = require('${NAME}');
const { mintBrowserToken } = require('${NAME}/browser-token');
(async () => {
  const keys = { appCode: 'app-demo', accessKey: process.env.DAS_ACCESS_KEY };
  await createClient({ baseUrl: process.env.DAS_URL, ...keys, signingSecret: process.env.DAS_SIGNING_SECRET })
    .create('orders', { customer_id: 'c-cjs', amount: 5, status: 'paid', placed_at: '2024-03-01 10:00:00' });
  const browser = createClient({ baseUrl: process.env.DAS_URL, appCode: 'app-demo',
    token: () => mintBrowserToken(keys, process.env.DAS_SIGNING_SECRET) });
  const sql = await browser.executeSql('revenue-by-status', { since: '2024-01-01 00:00:00' });
  console.log(JSON.stringify(sql));
})();
`,
  );
  const { stdout } = await run(process.execPath, ['cjs.cjs'], { cwd: project, env });
  expect(JSON.parse(stdout)).toEqual({ execSuccess: true, execResult: [{ status: 'paid', orders: 1, revenue: 5 }] });
});

it('type-checks a TypeScript consumer against the declarations of both entries', async () => {
  writeFileSync(
    path.join(project, 'consumer.mts'),
    `import { type AggregateResult, createClient, type ListResult, ServiceCallError } from '${NAME}';
const das = createClient({ baseUrl: 'http://127.0.0.1:3000', appCode: 'app-demo', accessKey: 'k', signingSecret: 's' });
export const page: Promise<ListResult<{ amount: number }>> = das.getList<{ amount: number }>('orders', { pageSize: 5 });
export const code = (e: ServiceCallError): number => e.errorCode;
export const groups: Promise<AggregateResult> = das.aggregate('orders', {
  aggregate: [{ type: 'count', alias: 'orders' }], groupBy: ['status'], orderBy: [{ orders: 'DESC' }],
});
export const sorted = das.getList('orders', { orderBy: [{ amount: 'desc' }], page: 2 });
`,
  );
  writeFileSync(
    path.join(project, 'consumer.cts'),
    `import { createClient } from '${NAME}';
import { signRequest } from '${NAME}/signature';
export const token: string = signRequest({ accessKey: 'k', appCode: 'a', timeStamp: 1 }, 's');
export const client = createClient({ baseUrl: 'http://x', appCode: 'a', token: () => ({ token, timeStamp: 1 }) });
`,
  );
  const tsc = require.resolve('typescript/bin/tsc');
  const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
  const checked = await run(process.execPath, [tsc, ...args, 'consumer.mts', 'consumer.cts'], {
    cwd: project,
    env,
  }).then(
    () => 'no type errors',
    (error: { stdout: string }) => error.stdout,
  );
  expect(checked).toBe('no type errors');
}, 120_000);

it('npx das is the package’s command: help, and a call to the local server', async () => {
  const help = await run('npx', ['das', '--help'], { cwd: project, env });
  expect(help.stdout).toContain('Usage: das <command>');
  expect(help.stdout).toMatch(/^ {2}call <operation> +sign and send a request/m);
  expect(help.stdout).not.toContain('serve');
  const call = await run('npx', ['das', 'call', 'get-list', '--dataset', 'orders', '--param', 'customer_id=c-esm'], {
    cwd: project,
    env,
  });
  expect(JSON.parse(call.stdout)).toMatchObject({ success: true, data: { paging: { totalCount: 1 } } });
  const measured = await run(
    'npx',
    [
      'das',
      'call',
      'aggregate',
      '--dataset',
      'orders',
      '--json',
      '{"aggregate":[{"type":"SUM","column":"amount","alias":"total"}],"groupBy":["status"],"customer_id_in":["c-esm","c-cjs"]}',
    ],
    { cwd: project, env },
  );
  expect(JSON.parse(measured.stdout).data.tableData).toEqual([
    { status: 'new', total: 7 },
    { status: 'paid', total: 5 },
  ]);
  // Only DAS_URL set: the keys are what is missing, and every way to give them is named.
  const noKeys = { ...env, DAS_APP_CODE: '', DAS_ACCESS_KEY: '', DAS_SIGNING_SECRET: '' };
  const refused = await run('npx', ['das', 'call', 'get-list', '--dataset', 'orders'], {
    cwd: project,
    env: noKeys,
  }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  expect(refused).toEqual({
    code: 2,
    stderr:
      'das call: no keys to sign with: give --app, --key and --secret (or DAS_APP_CODE, DAS_ACCESS_KEY and ' +
      "DAS_SIGNING_SECRET), or --config <file> holding the application's local keys, " +
      'or --user-key (DAS_USER_KEY) for a personal access key\nSee: das call --help\n',
  });
});
