/**
 * `npm run bench -- [name...]`: runs the named benchmarks, or all of them. Each benchmark is a module that
 * exports `run(): Promise<void>` and prints its own figures; add one by adding a line to BENCHMARKS.
 *
 * Several benchmarks run one after another, each in a process of its own: a process is one container, whose
 * handlers bind their clients, catalog cache and key store once (as in Lambda), so a second local server started in
 * the same process would answer from the first one's state.
 */
import { spawnSync } from 'node:child_process';

const BENCHMARKS: Record<string, string> = {
  quota: './quota',
  list: './list',
  totals: './totals',
  folds: './folds',
  scale: './scale',
  'change-log': './change-log',
  sql: './sql',
  'sql-retry': './sql-retry',
  capacity: './capacity',
  throughput: './throughput',
  'cold-start': './cold-start',
  auth: './auth',
  hardening: './hardening',
  batch: './batch',
  hooks: './hooks',
  'hook-limits': './hook-limits',
  webhooks: './webhooks',
  reindex: './reindex',
  storage: './storage',
  'after-load': './after-load',
  restart: './restart',
  aggregate: './aggregate',
  'relations-mysql': './relations-mysql',
  'sql-scale': './sql-scale',
};

interface BenchmarkModule {
  run(): Promise<void>;
}

async function main(names: string[]): Promise<void> {
  const unknown = names.filter((name) => !(name in BENCHMARKS));
  if (unknown.length) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
  }
  const selected = names.length ? names : Object.keys(BENCHMARKS);
  if (selected.length === 1) {
    const [name] = selected as [string];
    process.stdout.write(`\n== ${name} ==\n`);
    const module = (await import(BENCHMARKS[name] as string)) as BenchmarkModule;
    await module.run();
    return;
  }
  for (const name of selected) {
    const child = spawnSync(process.execPath, [...process.execArgv, __filename, name], { stdio: 'inherit' });
    if (child.status !== 0) throw new Error(`benchmark ${name} failed (exit ${child.status ?? child.signal})`);
  }
}

// The functions run on Node.js 22 in Lambda; on an older local Node the SDK's upgrade notice is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
