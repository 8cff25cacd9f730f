/**
 * `npm run bench -- hooks`: what a hook costs. In one run: the warm overhead of a trivial after hook (the same
 * operation with and without it, through the hooks wrapper the pipeline uses), the sandbox's cold start in a
 * fresh Node process laid out as a deployed function (worker start, engine load, first run), and what the
 * sandbox adds to a function's bundle and beside it.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { Catalog } from '../shared/catalog/catalog';
import type { CatalogConfig } from '../shared/catalog/schema';
import { withHooks } from '../shared/hooks/hooked-operation';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import type { Operation, OperationContext } from '../shared/operations/operation';
import { applicationCaller } from '../shared/permissions/caller';
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
  const bytes = await bundleBytes();
  console.log(
    `Bundle (functions/get-one.ts, minified, AWS SDK external): ${(bytes.total / 1024).toFixed(0)} KiB, of which ` +
      `the hooks wrapper and sandbox host ${(bytes.sandbox / 1024).toFixed(0)} KiB. Beside hooked functions only: ` +
      `the worker file ${(layout.workerBytes / 1024).toFixed(0)} KiB and the engine's .wasm ${(layout.wasmBytes / 1024).toFixed(0)} KiB.`,
  );
}
