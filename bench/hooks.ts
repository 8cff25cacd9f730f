/**
 * `npm run bench -- hooks`: what a hook costs. In one run: the warm overhead of a trivial after hook (the same
 * operation with and without it, through the hooks wrapper the pipeline uses), the engine's cold start in a fresh
 * Node process (load, first run), and what the sandbox adds to a function's bundle.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { Catalog } from '../shared/catalog/catalog';
import type { CatalogConfig } from '../shared/catalog/schema';
import { withHooks } from '../shared/hooks/hooked-operation';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import type { Operation, OperationContext } from '../shared/operations/operation';
import { applicationCaller } from '../shared/permissions/caller';

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

function coldStart(): { loadMs: number; firstRunMs: number } {
  const script = `
    const started = performance.now();
    const { loadEngine, runFunction } = require(${JSON.stringify(path.join(ROOT, 'shared/sandbox/sandbox.ts'))});
    loadEngine().then(async () => {
      const loaded = performance.now();
      await runFunction({ name: 'pass', source: 'export default async function pass(d) { return d; }', timeoutMs: 200, memoryMb: 32 },
        { params: { a: 1 }, context: {}, read: async () => null, maxReads: 10 });
      process.stdout.write(JSON.stringify({ loadMs: loaded - started, firstRunMs: performance.now() - loaded }));
    });`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as { loadMs: number; firstRunMs: number };
}

async function bundleBytes(): Promise<{ total: number; sandbox: number; wasm: number }> {
  const result = await build({
    entryPoints: [path.join(ROOT, 'functions/get-one.ts')],
    bundle: true,
    platform: 'node',
    target: 'node22',
    minify: true,
    write: false,
    metafile: true,
    external: ['@aws-sdk/*'],
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0];
  let sandbox = 0;
  for (const [file, input] of Object.entries(output?.inputs ?? {})) {
    if (/quickjs|shared\/sandbox|shared\/hooks/.test(file)) sandbox += input.bytesInOutput;
  }
  const wasm = statSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')).size;
  return { total: output?.bytes ?? 0, sandbox, wasm };
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
  const colds = [coldStart(), coldStart(), coldStart()];
  for (const cold of colds) {
    console.log(
      `Cold start in a fresh process: engine load ${cold.loadMs.toFixed(1)} ms, first run ${cold.firstRunMs.toFixed(1)} ms`,
    );
  }
  const bytes = await bundleBytes();
  console.log(
    `Bundle (functions/get-one.ts, minified, AWS SDK external): ${(bytes.total / 1024).toFixed(0)} KiB, of which ` +
      `the sandbox and hooks ${(bytes.sandbox / 1024).toFixed(0)} KiB; the engine's .wasm beside hooked functions only: ` +
      `${(bytes.wasm / 1024).toFixed(0)} KiB`,
  );
}
