/**
 * Cold start of each operation function as it deploys: the size of the bundle `cdk synth` produces (without the
 * AWS SDK, which the Node.js 22 runtime provides) and the time to load it (module initialisation, what Lambda's
 * Init phase spends on our code). Budget: 330 KB and 100 ms per function.
 *
 * - Size: the app is synthesized as deployed; each function is also built again here with esbuild's API and the
 *   same options (FUNCTION_BUNDLING, as aws-cdk-lib's NodejsFunction passes them to esbuild), which must give the
 *   same bytes, for esbuild's metafile: what each bundle is made of, by package or `shared/` folder. A third build
 *   leaves out the hook sandbox and runner (the engine glue, `shared/sandbox/`, `shared/hooks/` and what only they
 *   reach), to show what a bundle weighs once they load from a file of their own only when a hook runs.
 * - Init: each measurement is a fresh Node.js process that first loads the SDK packages the bundle uses, so their
 *   cost (the runtime's) is left out, then times `require` of the synthesized bundle, with the environment of a
 *   traced Lambda function. The X-Ray instrumentation loads when the first request makes the AWS clients, not
 *   during init: its set-up (the bundled X-Ray parts required, both clients instrumented) is timed the same way.
 *
 *   npm run bench -- cold-start        (synthesizes into cdk.out/bench-cold-start first)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Metafile, Plugin } from 'esbuild';
import { buildFunctionBundle as bundle } from '../test/support/function-bundles';
import { synthesizedBundles } from '../test/support/synthesized-bundles';
import { writeSection } from './report';

const ROOT = path.join(__dirname, '..');
const OUTDIR = path.join(ROOT, 'cdk.out', 'bench-cold-start');
const RUNS = 7;
const SDK_PACKAGES = ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-secrets-manager'];
const BUDGET_KB = 330;
const BUDGET_MS = 100;
/** Parts listed in the composition table: the largest, by their largest share of any bundle. */
const TOP_PARTS = 12;

/** The environment of a traced Lambda function (tables and secrets are names only: nothing is called). */
const LAMBDA_ENV = {
  PATH: process.env.PATH,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  AWS_REGION: 'eu-west-1',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
  _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
  RECORDS_TABLE: 'records',
  CATALOG_TABLE: 'catalog',
  QUOTA_TABLE: 'quota',
  SECRET_PREFIX: 'data-access-service/bench',
  DEFAULT_SECRET_ID: 'data-access-service/bench/default',
};

/** What a bundle leaves out once hooks run from a file of their own: the engine and the hook runner. */
const HOOK_MODULES = [/[\\/]shared[\\/]sandbox[\\/]/, /[\\/]shared[\\/]hooks[\\/]/];
const HOOK_PACKAGES = /^(quickjs-emscripten-core|@jitl\/)/;

const withoutHooks: Plugin = {
  name: 'without-hooks',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'resolving') return undefined;
      if (HOOK_PACKAGES.test(args.path)) return { path: args.path, external: true };
      if (!args.path.startsWith('.')) return undefined;
      const resolved = await pluginBuild.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      return HOOK_MODULES.some((pattern) => pattern.test(resolved.path))
        ? { path: args.path, external: true }
        : resolved;
    });
  },
};

/** A bundle's input by what it belongs to: its package (node_modules) or its `shared/` folder. */
function partOf(input: string): string {
  const modules = input.indexOf('node_modules/');
  if (modules >= 0) {
    const [first, second] = input.slice(modules + 'node_modules/'.length).split('/');
    return first?.startsWith('@') ? `${first}/${second}` : (first as string);
  }
  const [top, folder] = input.split('/');
  return top === 'shared' ? `shared/${folder}` : (top as string);
}

/** Bytes of the bundle per part, from esbuild's metafile (minified bytes in the output). */
function composition(metafile: Metafile): Map<string, number> {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined);
  const parts = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const part = partOf(input);
    parts.set(part, (parts.get(part) ?? 0) + bytesInOutput);
  }
  return parts;
}

interface Timing {
  wall: number;
  cpu: number;
}

/**
 * One fresh process: load the SDK, then time `setup` (a script); prints milliseconds. Bundles sit under the
 * repository (cdk.out), so their `@aws-sdk/*` requires resolve to the already loaded packages in node_modules.
 */
function timed(setup: string, extraEnv: Record<string, string> = {}): Timing {
  const script = `
    for (const name of ${JSON.stringify(SDK_PACKAGES)}) require(require.resolve(name, { paths: [${JSON.stringify(ROOT)}] }));
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    ${setup}
    const wall = Number(process.hrtime.bigint() - start) / 1e6;
    const used = process.cpuUsage(cpu);
    process.stdout.write(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000 }));
  `;
  const out = execFileSync(process.execPath, ['-e', script], { env: { ...LAMBDA_ENV, ...extraEnv }, encoding: 'utf8' });
  return JSON.parse(out) as Timing;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

function medians(runs: Timing[]): Timing {
  return { cpu: median(runs.map((t) => t.cpu)), wall: median(runs.map((t) => t.wall)) };
}

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

/** The X-Ray set-up the first request pays: shared/aws/tracing.ts bundled alone, both clients instrumented. */
async function tracingSetup(): Promise<{ bytes: number; timing: Timing }> {
  const dir = path.join(ROOT, 'cdk.out', 'bench-cold-start-tracing');
  mkdirSync(dir, { recursive: true });
  const entry = path.join(dir, 'entry.ts');
  writeFileSync(
    entry,
    [
      `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';`,
      `import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';`,
      `import { traced } from ${JSON.stringify(path.join(ROOT, 'shared', 'aws', 'tracing'))};`,
      `export const clients = () => [traced(new DynamoDBClient({ maxAttempts: 3 })), traced(new SecretsManagerClient({ maxAttempts: 2 }))];`,
      '',
    ].join('\n'),
  );
  const built = await bundle(entry);
  const file = path.join(dir, 'index.js');
  writeFileSync(file, built.code);
  // Making the two clients is the SDK's (the runtime's) cost whether traced or not: timed without tracing first.
  const setup = `const m = require(${JSON.stringify(file)}); m.clients();`;
  const plain = medians(Array.from({ length: RUNS }, () => timed(setup, { AWS_XRAY_DAEMON_ADDRESS: '' })));
  const tracedRuns = medians(
    Array.from({ length: RUNS }, () =>
      timed(setup, { LAMBDA_TASK_ROOT: dir, AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000' }),
    ),
  );
  return {
    bytes: built.code.byteLength,
    timing: { cpu: tracedRuns.cpu - plain.cpu, wall: tracedRuns.wall - plain.wall },
  };
}

interface FunctionFigures {
  operation: string;
  bytes: number;
  sameAsSynth: boolean;
  withoutHooks: number;
  parts: Map<string, number>;
  init: Timing;
}

export async function run(): Promise<void> {
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '-q', '-o', OUTDIR], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const bundles = synthesizedBundles(OUTDIR);
  const figures: FunctionFigures[] = [];
  for (const [operation, dir] of bundles) {
    const synthesized = readFileSync(path.join(dir, 'index.js'));
    const entry = path.join(ROOT, 'functions', `${operation}.ts`);
    const built = await bundle(entry);
    const lean = await bundle(entry, [withoutHooks]);
    const leanOutput = Object.values(lean.metafile.outputs).find((o) => o.entryPoint !== undefined);
    figures.push({
      operation,
      bytes: synthesized.byteLength,
      sameAsSynth: Buffer.from(built.code).equals(synthesized),
      withoutHooks: leanOutput?.bytes ?? 0,
      parts: composition(built.metafile),
      init: medians(
        Array.from({ length: RUNS }, () => timed(`require(${JSON.stringify(path.join(dir, 'index.js'))});`)),
      ),
    });
  }
  const tracing = await tracingSetup();

  // CPU time is what the load takes on an otherwise idle core (Lambda gives each container its own); wall time
  // also counts waiting for a core, which on a busy machine is most of it.
  const lines = [
    `| function | bundle (KB) | same bytes as \`cdk synth\` | without hook sandbox and runner (KB) | init CPU, median of ${RUNS} (ms) | init wall, median (ms) |`,
    '|---|---:|---|---:|---:|---:|',
    ...figures.map(
      (f) =>
        `| ${f.operation} | ${kb(f.bytes)} | ${f.sameAsSynth ? 'yes' : 'NO'} | ${kb(f.withoutHooks)} | ${f.init.cpu.toFixed(1)} | ${f.init.wall.toFixed(1)} |`,
    ),
  ];
  const largest = Math.max(...figures.map((f) => f.bytes));
  const slowest = Math.max(...figures.map((f) => f.init.cpu));
  const summary =
    `Largest bundle ${kb(largest)} KB (budget ${BUDGET_KB} KB), slowest init ${slowest.toFixed(1)} ms CPU (budget ` +
    `${BUDGET_MS} ms): ${largest / 1024 <= BUDGET_KB && slowest <= BUDGET_MS ? 'within budget' : 'OVER BUDGET'}.`;

  const names = new Set(figures.flatMap((f) => [...f.parts.keys()]));
  const top = [...names]
    .map((name) => ({ name, max: Math.max(...figures.map((f) => f.parts.get(name) ?? 0)) }))
    .sort((a, b) => b.max - a.max)
    .slice(0, TOP_PARTS);
  const partLines = [
    `| part (KB of the minified bundle) | ${figures.map((f) => f.operation).join(' | ')} |`,
    `|---|${figures.map(() => '---:').join('|')}|`,
    ...top.map(({ name }) => `| ${name} | ${figures.map((f) => kb(f.parts.get(name) ?? 0)).join(' | ')} |`),
  ];
  const tracingLine =
    `X-Ray set-up on the first request (not in init): ${tracing.timing.cpu.toFixed(1)} ms CPU, ` +
    `${tracing.timing.wall.toFixed(1)} ms wall (median of ${RUNS}, beyond making the two clients untraced); ` +
    `shared/aws/tracing.ts with what it bundles weighs ${kb(tracing.bytes)} KB alone.`;

  const table = lines.join('\n');
  process.stdout.write(`${table}\n\n${summary}\n\n${partLines.join('\n')}\n\n${tracingLine}\n`);
  writeSection(
    'cold-start',
    [
      '## Cold start: bundle size and initialisation (`npm run bench -- cold-start`)',
      '',
      'What each deployed function costs before its first request, without the AWS SDK the Node.js 22 runtime',
      'provides. The bench synthesizes the app and measures the bundles `cdk synth` wrote; it builds each one again',
      "with esbuild's API and the same options (`FUNCTION_BUNDLING`), which gives the same bytes, for esbuild's",
      'metafile: what a bundle is made of. Init is a fresh Node.js process per run that loads the SDK packages first',
      "(the runtime's, not counted) and then times `require` of the bundle with a traced Lambda function's",
      `environment, ${RUNS} runs per function. Budget: ${BUDGET_KB} KB (of 1,024 bytes) and ${BUDGET_MS} ms.`,
      '',
      table,
      '',
      summary,
      '',
      '"Without hook sandbox and runner" leaves out `shared/sandbox/`, `shared/hooks/`, the QuickJS glue',
      "packages and what only they reach (a hook's `context.client` reads, custom SQL outside execute-sql): what a",
      'bundle weighs once hooks run from a file of their own, loaded only when a hook runs.',
      '',
      'Init CPU counts every thread of the process. The demo configuration hooks get-one and create, whose bundles',
      'have the hook sandbox beside them and start its worker first thing in init: their CPU includes the part of the',
      "worker's start that runs beside init (their init wall is that of the others); see Hooks below.",
      '',
      partLines.join('\n'),
      '',
      tracingLine,
      '',
      'CPU time is the figure that carries over to a Lambda container (its own share of a core: at 1,024 MB and',
      'more, wall ≈ CPU for this synchronous load); on the shared development machine wall time is mostly waiting',
      'for a core.',
    ].join('\n'),
  );
}
