/**
 * `npm run bench -- hooks`: what a hook costs. In one run: the warm overhead of a trivial after hook (the same
 * operation with and without it, through the hooks wrapper the pipeline uses), the sandbox's cold start in a
 * fresh Node process laid out as a deployed function (worker start, engine load, first run), and what the
 * sandbox adds to a function's bundle and beside it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type BuildOptions, build } from 'esbuild';
import { startLocalServer } from '../bin/local-server';
import { FUNCTION_BUNDLING } from '../lib/operation-function';
import { signRequest } from '../packages/client/src/signature';
import { applicationCaller } from '../shared/access/caller';
import { Catalog } from '../shared/catalog/catalog';
import type { CatalogConfig } from '../shared/catalog/schema';
import { withHooks } from '../shared/hooks/hooked-operation';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import type { Operation, OperationContext } from '../shared/operation/operation';
import { SANDBOX_WASM_FILE, SANDBOX_WORKER_ENTRY, SANDBOX_WORKER_FILE } from '../shared/sandbox/bundle-assets';

const ITERATIONS = 2_000;
const ROOT = path.join(__dirname, '..');

function config(withHook: boolean): CatalogConfig {
  return {
    applications: [{ appCode: 'app-bench', grants: [{ datasetCode: 'orders', operations: ['read'] }] }],
    datasets: [{ appCode: 'app-bench', datasetCode: 'orders', fields: [{ name: 'amount', type: 'number' }] }],
    ...(withHook
      ? {
          functions: [
            { appCode: 'app-bench', name: 'pass', source: 'export default async function pass(data) { return data; }' },
          ],
          hooks: [{ datasetCode: 'orders', operation: 'get-one', node: 'after', function: 'pass' }],
        }
      : {}),
  } as CatalogConfig;
}

const RECORD = { id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8', amount: 12.5, gmt_create: 1, gmt_modified: 1 };
const operation: Operation = { name: 'get-one', run: async () => RECORD };

function contextFor(catalog: Catalog): OperationContext {
  const application = catalog.application('app-bench');
  if (!application) throw new Error('no application');
  return {
    requestId: 'bench',
    operation: 'get-one',
    caller: applicationCaller(application),
    catalog,
    dataset: catalog.dataset('orders'),
    grant: application.grants.get('orders'),
    ports: {} as OperationContext['ports'],
    telemetry: { capacity: new CapacityMeter(), metric: () => undefined, detail: () => undefined },
    now: Date.now,
  };
}

async function timings(withHook: boolean): Promise<number[]> {
  const catalog = new Catalog(config(withHook));
  const hooked = withHooks(operation);
  const context = contextFor(catalog);
  for (let i = 0; i < 50; i += 1) await hooked.run(context, { paramMap: { id: RECORD.id } });
  const out: number[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    const started = performance.now();
    await hooked.run(context, { paramMap: { id: RECORD.id } });
    out.push(performance.now() - started);
  }
  return out.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

interface ColdStart {
  /** A Worker that only says hello: the floor any worker-thread design pays on this machine. */
  emptyWorkerMs: number;
  /** The engine loaded and run inline on the main thread (the design before the worker), load + first run. */
  inlineMs: number;
  /** Started lazily: from the first run's call to its result (worker start, engine load, warm-up, the run). */
  lazyFirstRunMs: number;
  /** Started at init (as a hooked function's bundle does), a run requested at once: from init to its result. */
  prewarmedImmediateMs: number;
  /** Started at init, a run requested 1 s later (the worker ready by then): that run's latency. */
  prewarmedLaterMs: number;
}

/**
 * The deployed layout in a temporary directory: the host bundled as a function's code is, the worker file and
 * the .wasm beside it, as the bundling step writes them (lib/operation-function.ts); and the engine bundled
 * alone, for the inline baseline.
 */
async function deployedLayout(): Promise<{ dir: string; workerBytes: number; wasmBytes: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hooks-bench-'));
  const common: BuildOptions = {
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    minify: true,
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  };
  const sandbox = path.join(ROOT, 'shared/sandbox');
  await build({ ...common, entryPoints: [path.join(sandbox, 'sandbox.ts')], outfile: path.join(dir, 'index.js') });
  await build({ ...common, entryPoints: [SANDBOX_WORKER_ENTRY], outfile: path.join(dir, SANDBOX_WORKER_FILE) });
  await build({
    ...common,
    entryPoints: [path.join(sandbox, 'quickjs-engine.ts')],
    outfile: path.join(dir, 'inline.js'),
  });
  copyFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'), path.join(dir, SANDBOX_WASM_FILE));
  return {
    dir,
    workerBytes: statSync(path.join(dir, SANDBOX_WORKER_FILE)).size,
    wasmBytes: statSync(path.join(dir, SANDBOX_WASM_FILE)).size,
  };
}

const FN = `{ name: 'pass', source: 'export default async function pass(d) { return d; }', timeoutMs: 200, memoryMb: 32 }`;
const INPUT = '{ params: { a: 1 }, context: {}, read: async () => null, maxReads: 10 }';

/** One figure, in a fresh Node process (no tsx, no test runner) in the deployed layout. */
function fresh(dir: string, body: string): number {
  const script = `const report = (ms) => { process.stdout.write(String(ms)); process.exit(0); };\n${body}`;
  return Number(execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' }));
}

function coldStart(dir: string): ColdStart {
  const host = JSON.stringify(path.join(dir, 'index.js'));
  return {
    emptyWorkerMs: fresh(
      dir,
      `const t = performance.now();
      new (require('node:worker_threads').Worker)("require('node:worker_threads').parentPort.postMessage(1)", { eval: true })
        .on('message', () => report(performance.now() - t));`,
    ),
    inlineMs: fresh(
      dir,
      `const t = performance.now();
      require(${JSON.stringify(path.join(dir, 'inline.js'))}).runInEngine(${FN}, ${INPUT}).then(() => report(performance.now() - t));`,
    ),
    lazyFirstRunMs: fresh(
      dir,
      `const { runFunction } = require(${host});
      const t = performance.now();
      runFunction(${FN}, ${INPUT}).then(() => report(performance.now() - t));`,
    ),
    prewarmedImmediateMs: fresh(
      dir,
      `const { prewarmSandbox, runFunction } = require(${host});
      const t = performance.now();
      prewarmSandbox();
      runFunction(${FN}, ${INPUT}).then(() => report(performance.now() - t));`,
    ),
    prewarmedLaterMs: fresh(
      dir,
      `const { prewarmSandbox, runFunction } = require(${host});
      prewarmSandbox();
      setTimeout(() => {
        const t = performance.now();
        runFunction(${FN}, ${INPUT}).then(() => report(performance.now() - t));
      }, 1000);`,
    ),
  };
}

/**
 * The first request of a fresh container, with and without a hook: what a caller of a new container waits for.
 * Both functions are the same get-one bundle, built as `cdk synth` builds it; the hooked one has the worker file
 * and the .wasm beside it (so it starts the worker at init) and answers for a dataset with a trivial after hook,
 * the other has neither. Each run is a fresh Node.js process that loads the SDK packages first (the runtime's,
 * not counted), then times `require` of the bundle (init) and its first invocation, a signed get-one, against the
 * store of a local server this process runs (the AWS side of a deployment). Runs alternate, plain then hooked,
 * on all of the machine's cores and, where `taskset` exists, pinned to one core (a function of 1,769 MB or less
 * has at most one vCPU in Lambda: the worker's start then shares the core with init and the request). The same
 * again as a provisioned container (its init, not on a request's path, waits for the sandbox): what its first
 * request waits for after init. Each run also reports the process's resident memory at its answer.
 */
const CONTAINER_RUNS = 15;
const CONTAINER_APP = { appCode: 'app-bench', accessKey: 'ak-bench-0001', secret: 'sk-bench-secret' };
const CONTAINER_CONFIG = {
  timeZone: 'UTC',
  applications: [
    {
      appCode: CONTAINER_APP.appCode,
      accessKey: CONTAINER_APP.accessKey,
      signingSecret: CONTAINER_APP.secret,
      grants: [
        { datasetCode: 'orders', operations: ['read', 'create'] },
        { datasetCode: 'items', operations: ['read', 'create'] },
      ],
    },
  ],
  datasets: ['orders', 'items'].map((datasetCode) => ({
    appCode: CONTAINER_APP.appCode,
    datasetCode,
    fields: [{ name: 'amount', type: 'number' }],
  })),
  functions: [
    {
      appCode: CONTAINER_APP.appCode,
      name: 'mark',
      source: 'export default async function mark(data) { return { ...data, marked: true }; }',
    },
  ],
  hooks: [{ datasetCode: 'orders', operation: 'get-one', node: 'after', function: 'mark' }],
};

/** One fresh container: load the SDK (not timed), then init and the first invocation. Prints its figures. */
const CONTAINER_CHILD = `const path = require('node:path');
for (const id of ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-secrets-manager']) require(id);
const [dir, eventJson] = process.argv.slice(2);
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = () => true;
const context = { callbackWaitsForEmptyEventLoop: false, functionName: 'bench-get-one', functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench-get-one', memoryLimitInMB: '1024',
  awsRequestId: 'bench', logGroupName: '/bench', logStreamName: 'bench',
  getRemainingTimeInMillis: () => 10000, done() {}, fail() {}, succeed() {} };
const started = performance.now();
const { handler } = require(path.join(dir, 'index.js'));
const initMs = performance.now() - started;
handler(JSON.parse(eventJson), context).then((result) => {
  const firstMs = performance.now() - started;
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const rssMb = process.memoryUsage().rss / (1024 * 1024);
  write(JSON.stringify({ initMs, firstMs, cpuMs, rssMb, statusCode: result.statusCode, body: result.body }));
  process.exit(0);
});`;

function signedGetOne(datasetCode: string, id: string, n: number): string {
  const timeStamp = String(Date.now());
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-Time-Stamp': timeStamp,
    'X-App-Code': CONTAINER_APP.appCode,
    'X-Dataset-Code': datasetCode,
    'X-Token': signRequest({ ...CONTAINER_APP, datasetCode, timeStamp }, CONTAINER_APP.secret),
  };
  const route = '/openapi/data/get-one';
  return JSON.stringify({
    httpMethod: 'POST',
    path: route,
    resource: route,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    body: JSON.stringify({ appCode: CONTAINER_APP.appCode, datasetCode, paramMap: { id } }),
    isBase64Encoded: false,
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {
      requestId: `bench-${n}`,
      httpMethod: 'POST',
      path: route,
      resourcePath: route,
      stage: 'bench',
      identity: { sourceIp: '127.0.0.1' },
    },
  });
}

interface FirstRequest {
  initMs: number;
  firstMs: number;
  /** The process's CPU (all threads) from its start to the first answer, the SDK's loading included. */
  cpuMs: number;
  /** The process's resident memory at the first answer (the worker's heap and the engine's memory included). */
  rssMb: number;
}

/**
 * `provisioned`: the container runs as Lambda runs one for provisioned concurrency
 * (`AWS_LAMBDA_INITIALIZATION_TYPE=provisioned-concurrency`), whose init waits for the sandbox to be ready.
 */
type ContainerCase =
  | 'plain'
  | 'hooked'
  | 'plain-one-core'
  | 'hooked-one-core'
  | 'plain-provisioned'
  | 'hooked-provisioned'
  | 'plain-provisioned-one-core'
  | 'hooked-provisioned-one-core';

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
}

async function firstRequests(): Promise<Partial<Record<ContainerCase, FirstRequest[]>>> {
  const dir = path.join(ROOT, 'cdk.out', 'bench-hooks');
  rmSync(dir, { recursive: true, force: true });
  const [plainDir, hookedDir] = [path.join(dir, 'plain'), path.join(dir, 'hooked')];
  for (const outdir of [plainDir, hookedDir]) {
    await build({
      entryPoints: [path.join(ROOT, 'functions/get-one.ts')],
      bundle: true,
      platform: 'node',
      target: FUNCTION_BUNDLING.target,
      format: FUNCTION_BUNDLING.format,
      minify: FUNCTION_BUNDLING.minify,
      external: [...FUNCTION_BUNDLING.externalModules],
      mainFields: [...FUNCTION_BUNDLING.mainFields],
      outfile: path.join(outdir, 'index.js'),
      logLevel: 'silent',
    });
  }
  await build({
    entryPoints: [SANDBOX_WORKER_ENTRY],
    bundle: true,
    platform: 'node',
    target: FUNCTION_BUNDLING.target,
    format: 'cjs',
    minify: true,
    mainFields: ['module', 'main'],
    outfile: path.join(hookedDir, SANDBOX_WORKER_FILE),
    logLevel: 'silent',
  });
  copyFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'), path.join(hookedDir, SANDBOX_WASM_FILE));
  const childFile = path.join(dir, 'container.js');
  writeFileSync(childFile, CONTAINER_CHILD);
  const configFile = path.join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(CONTAINER_CONFIG));

  // The AWS side: a local server's store, tables and catalog; the children reach them through the environment.
  const server = await startLocalServer({ configFile, port: 0, logSink: () => undefined });
  try {
    const ids: Record<string, string> = {};
    for (const datasetCode of ['orders', 'items']) {
      const timeStamp = String(Date.now());
      const response = await fetch(`${server.url}/openapi/data/create`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Time-Stamp': timeStamp,
          'X-App-Code': CONTAINER_APP.appCode,
          'X-Dataset-Code': datasetCode,
          'X-Token': signRequest({ ...CONTAINER_APP, datasetCode, timeStamp }, CONTAINER_APP.secret),
        },
        body: JSON.stringify({ appCode: CONTAINER_APP.appCode, datasetCode, paramMap: { amount: 12.5 } }),
      });
      const created = (await response.json()) as { data: { id: string } | null };
      if (!created.data) throw new Error(`creating the bench's record failed: ${JSON.stringify(created)}`);
      ids[datasetCode] = created.data.id;
    }
    const cases: ContainerCase[] = hasTaskset()
      ? [
          'plain',
          'hooked',
          'plain-one-core',
          'hooked-one-core',
          'plain-provisioned',
          'hooked-provisioned',
          'plain-provisioned-one-core',
          'hooked-provisioned-one-core',
        ]
      : ['plain', 'hooked', 'plain-provisioned', 'hooked-provisioned'];
    const runs: Partial<Record<ContainerCase, FirstRequest[]>> = {};
    let n = 0;
    for (let round = 0; round < CONTAINER_RUNS; round += 1) {
      for (const name of cases) {
        n += 1;
        const hooked = name.startsWith('hooked');
        const datasetCode = hooked ? 'orders' : 'items';
        const child = [
          childFile,
          hooked ? hookedDir : plainDir,
          signedGetOne(datasetCode, ids[datasetCode] as string, n),
        ];
        const [command, args] = name.endsWith('one-core')
          ? ['taskset', ['-c', '0', process.execPath, ...child]]
          : [process.execPath, child];
        const env = name.includes('provisioned')
          ? { ...process.env, AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' }
          : process.env;
        const { stdout } = await promisify(execFile)(command, args, { env, encoding: 'utf8' });
        const result = JSON.parse(stdout) as FirstRequest & { statusCode: number; body: string };
        const data = (JSON.parse(result.body) as { data?: { marked?: boolean } }).data;
        if (result.statusCode !== 200 || data?.marked !== (hooked ? true : undefined)) {
          throw new Error(`a first request was not answered as expected: ${stdout}`);
        }
        const { initMs, firstMs, cpuMs, rssMb } = result;
        runs[name] = [...(runs[name] ?? []), { initMs, firstMs, cpuMs, rssMb }];
      }
    }
    return runs;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bundleBytes(): Promise<{ total: number; sandbox: number }> {
  const result = await build({
    entryPoints: [path.join(ROOT, 'functions/get-one.ts')],
    bundle: true,
    platform: 'node',
    target: 'node22',
    minify: true,
    write: false,
    metafile: true,
    external: ['@aws-sdk/*'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0];
  let sandbox = 0;
  for (const [file, input] of Object.entries(output?.inputs ?? {})) {
    if (/quickjs|shared\/sandbox|shared\/hooks/.test(file)) sandbox += input.bytesInOutput;
  }
  return { total: output?.bytes ?? 0, sandbox };
}

export async function run(): Promise<void> {
  const without = await timings(false);
  const withHook = await timings(true);
  const p50 = pct(withHook, 0.5) - pct(without, 0.5);
  console.log(`\n## Hooks (${ITERATIONS} runs each, same process)\n`);
  console.log('| | p50 (ms) | p99 (ms) |\n|---|---:|---:|');
  console.log(`| get-one without hooks | ${pct(without, 0.5).toFixed(3)} | ${pct(without, 0.99).toFixed(3)} |`);
  console.log(
    `| get-one with a trivial after hook | ${pct(withHook, 0.5).toFixed(3)} | ${pct(withHook, 0.99).toFixed(3)} |`,
  );
  console.log(`\nWarm overhead of the hook, p50: ${p50.toFixed(3)} ms (goal ≤ 2 ms).`);
  const layout = await deployedLayout();
  const colds = Array.from({ length: 5 }, () => coldStart(layout.dir));
  rmSync(layout.dir, { recursive: true, force: true });
  console.log('\nCold start, each figure in a fresh Node process (deployed layout), 5 processes each, ms:\n');
  const rows: [string, keyof ColdStart][] = [
    ['empty worker thread, start to first message (floor)', 'emptyWorkerMs'],
    ['engine inline on the main thread, load + first run (before)', 'inlineMs'],
    ['worker started by the first run: that run', 'lazyFirstRunMs'],
    ['worker started at init, run requested at once: init to answer', 'prewarmedImmediateMs'],
    ['worker started at init, run requested 1 s later: that run', 'prewarmedLaterMs'],
  ];
  console.log('| | median | min | max |\n|---|---:|---:|---:|');
  for (const [label, key] of rows) {
    const sorted = colds.map((cold) => cold[key]).sort((x, y) => x - y);
    const [min, max] = [sorted[0] ?? 0, sorted[sorted.length - 1] ?? 0];
    console.log(`| ${label} | ${pct(sorted, 0.5).toFixed(1)} | ${min.toFixed(1)} | ${max.toFixed(1)} |`);
  }
  const first = await firstRequests();
  console.log(
    `\nFirst request of a fresh container (get-one bundle as deployed, ${CONTAINER_RUNS} fresh processes each, alternating), ms:\n`,
  );
  console.log(
    '| | init, median | init + first answer, median | min | max | first answer after init, median | process CPU to the answer, median | RSS at the answer, median (MiB) |\n|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  const medians: Partial<Record<ContainerCase, { total: number; afterInit: number; rss: number }>> = {};
  for (const [label, key] of [
    ['without hooks', 'plain'],
    ['with a trivial after hook', 'hooked'],
    ['without hooks, one core', 'plain-one-core'],
    ['with a trivial after hook, one core', 'hooked-one-core'],
    ['provisioned, without hooks', 'plain-provisioned'],
    ['provisioned, with a trivial after hook', 'hooked-provisioned'],
    ['provisioned, without hooks, one core', 'plain-provisioned-one-core'],
    ['provisioned, with a trivial after hook, one core', 'hooked-provisioned-one-core'],
  ] as const) {
    const runs = first[key];
    if (!runs) continue;
    const sorted = (of: (r: FirstRequest) => number) => runs.map(of).sort((x, y) => x - y);
    const init = sorted((r) => r.initMs);
    const total = sorted((r) => r.firstMs);
    const afterInit = sorted((r) => r.firstMs - r.initMs);
    const cpu = sorted((r) => r.cpuMs);
    const rss = sorted((r) => r.rssMb);
    medians[key] = { total: pct(total, 0.5), afterInit: pct(afterInit, 0.5), rss: pct(rss, 0.5) };
    console.log(
      `| ${label} | ${pct(init, 0.5).toFixed(1)} | ${pct(total, 0.5).toFixed(1)} | ${(total[0] ?? 0).toFixed(1)} | ${(total[total.length - 1] ?? 0).toFixed(1)} | ${pct(afterInit, 0.5).toFixed(1)} | ${pct(cpu, 0.5).toFixed(1)} | ${pct(rss, 0.5).toFixed(1)} |`,
    );
  }
  const added = (hooked: ContainerCase, plain: ContainerCase, figure: 'total' | 'afterInit' | 'rss' = 'total') =>
    ((medians[hooked]?.[figure] ?? 0) - (medians[plain]?.[figure] ?? 0)).toFixed(1);
  const oneCore = medians['hooked-one-core'] !== undefined;
  console.log(
    `\nThe engine's cold start in a fresh container (difference of the medians; goal ≤ 50 ms): ${added('hooked', 'plain')} ms` +
      (oneCore ? `; on one core ${added('hooked-one-core', 'plain-one-core')} ms.` : '.'),
  );
  console.log(
    `With provisioned concurrency (init waits for the sandbox), what the first hooked request waits for beyond an unhooked one: ${added('hooked-provisioned', 'plain-provisioned', 'afterInit')} ms` +
      (oneCore
        ? `; on one core ${added('hooked-provisioned-one-core', 'plain-provisioned-one-core', 'afterInit')} ms.`
        : '.'),
  );
  console.log(
    `Memory of the sandbox (worker thread and engine) at the first answer, RSS difference of the medians: ${added('hooked', 'plain', 'rss')} MiB.`,
  );
  const bytes = await bundleBytes();
  console.log(
    `Bundle (functions/get-one.ts, minified, AWS SDK external): ${(bytes.total / 1024).toFixed(0)} KiB, of which ` +
      `the hooks wrapper and sandbox host ${(bytes.sandbox / 1024).toFixed(0)} KiB. Beside hooked functions only: ` +
      `the worker file ${(layout.workerBytes / 1024).toFixed(0)} KiB and the engine's .wasm ${(layout.wasmBytes / 1024).toFixed(0)} KiB.`,
  );
}
