/**
 * What deploys is what was tested: the bundles `cdk synth` produced (not the TypeScript sources) run behind the
 * local HTTP server against dynalite, and answer signed requests as the contract says; custom SQL runs from the
 * files beside them (the dialect is one), in execute-sql and in a hook of the hooked get-one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectFailure } from '../../../support/failure-envelope';
import { buildService, PROJECT_ROOT } from '../../../support/service-fixture';
import { FIXTURE_CONFIG, MAIN_APP, ServiceHarness } from '../../../support/service-harness';
import { synthesizedBundles } from '../../../support/synthesized-bundles';

// Inside the repository, so the bundles resolve the externalized @aws-sdk/* from its node_modules, as they
// resolve them from the Lambda runtime in AWS.
const OUTDIR = join(PROJECT_ROOT, 'cdk.out', `infra-test-${process.pid}`);
const scratch = mkdtempSync(join(tmpdir(), 'bundled-handlers-'));

/**
 * The fixture with a registered query, run by execute-sql and by an after hook of get-one on `typed` (the
 * synthesized configuration hooks get-one, so its bundle has the sandbox and the SQL engine's files beside it).
 */
function withCustomSql(): string {
  const config = JSON.parse(readFileSync(FIXTURE_CONFIG, 'utf8'));
  config.queries = [{ appCode: MAIN_APP.appCode, sqlCode: 'note-count', sql: 'SELECT COUNT(*) AS n FROM notes' }];
  config.functions = [
    {
      appCode: MAIN_APP.appCode,
      name: 'with-note-count',
      source:
        'export default async function withNoteCount(record, context) {\n' +
        "  const count = await context.client.sql.execute('note-count', {});\n" +
        '  return { ...record, notes: count.execResult[0].n };\n' +
        '}',
    },
  ];
  config.hooks = [{ datasetCode: 'typed', operation: 'get-one', node: 'after', function: 'with-note-count' }];
  const file = join(scratch, 'service-config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

let harness: ServiceHarness;

beforeAll(async () => {
  buildService({ bundle: true, outdir: OUTDIR });
  // The same loader `npm run test:bundles` uses, over this test's own synthesis.
  harness = await new ServiceHarness(withCustomSql(), { bundlesDir: OUTDIR }).start();
  // Synthesis bundles every function: about a minute alone, several on a machine busy with other work.
}, 300_000);

afterAll(async () => {
  await harness.stop();
  rmSync(OUTDIR, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe('synthesized bundles behind the local server', () => {
  it('loads every operation from cdk.out, not from functions/', () => {
    // The data operations at least; execute-sql too once its handler exists.
    expect(harness.loadedBundles.length).toBeGreaterThanOrEqual(4);
    for (const file of harness.loadedBundles)
      expect(file).toMatch(/cdk\.out\/infra-test-\d+\/asset\.[0-9a-f]{64}\/index\.js$/);
  });

  it('creates, reads, updates and lists a record', async () => {
    const created = await harness.create('notes', { title: 'from the bundle' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true });
    const id = created.body.data.id ?? created.body.data;

    const one = await harness.getOne('notes', id);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id, title: 'from the bundle' });

    const updated = await harness.update('notes', { id, title: 'changed by the bundle' });
    expect(updated.status).toBe(200);

    const list = await harness.getList('notes', { currentPage: 1, pageSize: 10 });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body.data)).toContain('changed by the bundle');
  });

  it('answers a request signed with the wrong secret with 1002 and 401', async () => {
    const result = await harness.getList('notes', {}, { app: { ...MAIN_APP, secret: 'not-the-secret' } });
    expectFailure(result, 1002);
  });

  it('answers an unknown application with 1004 and 404', async () => {
    const result = await harness.getList('notes', {}, { app: { ...MAIN_APP, appCode: 'app-nobody' } });
    expectFailure(result, 1004);
  });

  it('writes one JSON log line per request, with the operation', () => {
    const operations = harness.logLines.map((line) => line.operation);
    expect(operations).toEqual(expect.arrayContaining(['create', 'get-one', 'update', 'get-list']));
    // Every request's line; the change log's batch lines (operation change-log) belong to no request.
    const requestLines = harness.logLines.filter((line) => line.operation !== 'change-log');
    expect(requestLines.length).toBeGreaterThanOrEqual(4);
    for (const line of requestLines) expect(line).toHaveProperty('requestId');
  });
});

/**
 * What loading a bundle starts, in order, in a fresh process as a new container: `worker` when it constructs a
 * worker thread, `sdk` when it first requires an AWS SDK package (the first thing the rest of a bundle loads),
 * `waits` when init blocks on a signal, and `started` when, as init ends, that worker has signalled it started
 * (engine loaded).
 */
function initOrder(operation: string, env: Record<string, string> = {}): string[] {
  const dir = synthesizedBundles(OUTDIR).get(operation);
  if (!dir) throw new Error(`no bundle for ${operation}`);
  const script = `const Module = require('node:module');
const threads = require('node:worker_threads');
const events = [];
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request.startsWith('@aws-sdk/') && !events.includes('sdk')) events.push('sdk');
  return load.call(this, request, ...rest);
};
const Worker = threads.Worker;
let startSignal;
const wait = Atomics.wait;
Atomics.wait = (...args) => {
  events.push('waits');
  return wait(...args);
};
threads.Worker = class extends Worker {
  constructor(...args) {
    super(...args);
    startSignal = args[1]?.workerData?.startSignal;
    events.push('worker');
  }
};
require(${JSON.stringify(join(dir, 'index.js'))});
if (startSignal && Atomics.load(startSignal, 0) === 1) events.push('started');
process.stdout.write(JSON.stringify(events));
process.exit(0);`;
  return JSON.parse(
    execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ...env } }),
  ) as string[];
}

describe('custom SQL from the bundles', () => {
  let notes: number;

  beforeAll(async () => {
    expect((await harness.create('notes', { title: 'counted by custom SQL' })).body.success).toBe(true);
    notes = (await harness.getList('notes')).body.data.paging.totalCount;
  });

  it('execute-sql runs a registered query with the dialect loaded from the file beside its bundle', async () => {
    const answer = await harness.call('/api/custom/executeSql', { sqlCode: 'note-count' }, { datasetCode: null });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, msg: null, data: { execSuccess: true, execResult: [{ n: notes }] } });
  });

  it('a hook of the hooked get-one runs the same query from its own bundle', async () => {
    const created = await harness.create('typed', { s: 'hooked' });
    expect(created.body.success).toBe(true);
    const one = await harness.getOne('typed', created.body.data.id ?? created.body.data);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ s: 'hooked', notes });
  });

  it('loads both from cdk.out', () => {
    const loaded = (operation: string) => synthesizedBundles(OUTDIR).get(operation);
    expect(harness.loadedBundles).toEqual(
      expect.arrayContaining([
        join(loaded('execute-sql') ?? '', 'index.js'),
        join(loaded('get-one') ?? '', 'index.js'),
      ]),
    );
  });
});

describe('the hook sandbox at init', () => {
  it('starts the worker of a hooked operation before the rest of its bundle loads', () => {
    // The fixture hooks get-one: its bundle has the worker file beside it.
    // Whether the worker has also started by the end of init depends on the cores: init does not wait for it.
    expect(initOrder('get-one').slice(0, 2)).toEqual(['worker', 'sdk']);
  });

  it('starts no worker in an operation without hooks', () => {
    expect(initOrder('get-list')).toEqual(['sdk']);
  });

  it('ends the init of a provisioned container only once its worker has started', () => {
    const provisioned = { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' };
    expect(initOrder('get-one', provisioned)).toEqual(['worker', 'sdk', 'waits', 'started']);
    expect(initOrder('get-list', provisioned)).toEqual(['sdk']);
  });
});
