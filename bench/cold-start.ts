/**
 * Cold start of each operation function as it deploys: the size of the bundle `cdk synth` produces (without the
 * AWS SDK, which the Node.js 22 runtime provides) and the time to load it (module initialisation, what Lambda's
 * Init phase spends on our code). Each measurement is a fresh Node.js process that first loads the SDK packages
 * the bundle uses, so their cost (the runtime's) is left out, then times `require` of the bundle, with the
 * environment of a traced Lambda function. Budget: 300 KB and 100 ms per function.
 *
 *   npm run bench -- cold-start        (synthesizes into cdk.out/bench-cold-start first)
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { synthesizedBundles } from '../test/support/synthesized-bundles';

const ROOT = path.join(__dirname, '..');
const OUTDIR = path.join(ROOT, 'cdk.out', 'bench-cold-start');
const RUNS = 7;
const SDK_PACKAGES = ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-secrets-manager'];

/**
 * One fresh process: load the SDK, then time the bundle's require; prints milliseconds. The bundle sits under the
 * repository (cdk.out), so its `@aws-sdk/*` requires resolve to the already loaded packages in node_modules.
 */
function initMs(bundleDir: string): { wall: number; cpu: number } {
  const script = `
    for (const name of ${JSON.stringify(SDK_PACKAGES)}) require(require.resolve(name, { paths: [${JSON.stringify(ROOT)}] }));
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    require(${JSON.stringify(path.join(bundleDir, 'index.js'))});
    const wall = Number(process.hrtime.bigint() - start) / 1e6;
    const used = process.cpuUsage(cpu);
    process.stdout.write(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000 }));
  `;
  const out = execFileSync(process.execPath, ['-e', script], {
    env: {
      PATH: process.env.PATH,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_REGION: 'eu-west-1',
      AWS_LAMBDA_FUNCTION_NAME: 'bench',
      AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
      LAMBDA_TASK_ROOT: bundleDir,
      RECORDS_TABLE: 'records',
      CATALOG_TABLE: 'catalog',
      QUOTA_TABLE: 'quota',
      SECRET_PREFIX: 'data-access-service/bench',
      DEFAULT_SECRET_ID: 'data-access-service/bench/default',
    },
    encoding: 'utf8',
  });
  return JSON.parse(out) as { wall: number; cpu: number };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

export async function run(): Promise<void> {
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '-q', '-o', OUTDIR], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const bundles = synthesizedBundles(OUTDIR);
  // CPU time is what the load takes on an otherwise idle core (Lambda gives each container its own); wall time
  // also counts waiting for a core, which on a busy machine is most of it.
  process.stdout.write(
    `| function | bundle (KB) | init CPU, median of ${RUNS} (ms) | init wall, median (ms) |\n|---|---|---|---|\n`,
  );
  for (const [operation, dir] of bundles) {
    const size = statSync(path.join(dir, 'index.js')).size / 1024;
    const times = Array.from({ length: RUNS }, () => initMs(dir));
    const cpu = median(times.map((t) => t.cpu));
    const wall = median(times.map((t) => t.wall));
    process.stdout.write(`| ${operation} | ${size.toFixed(1)} | ${cpu.toFixed(1)} | ${wall.toFixed(1)} |\n`);
  }
}
