/**
 * `npm run bench -- restart`: how long `npm start` takes to serve again over a store in a data directory, and to
 * answer its first list, as the store grows. One `orders` dataset (the after-load bench's fields) is loaded through
 * batch-create (batches of 1,000, 4 at a time) to each size of `BENCH_RESTART_SIZES` (default 100,000), and at each
 * size `npm start` is run as its own command (`node --import tsx bin/local-server.ts --data-dir <copy> --port 0`)
 * over a copy of the store in two states:
 * - `right after the load`: the loading server stopped as soon as its last batch was answered, so the change log's
 *   writer is far behind and catches up in the restarted process;
 * - `settled`: a process that started over the store and waited for the change log and the folds, then stopped.
 * For each start: the seconds from the command until its `/health` answers, and until a signed get-list (page 1 of
 * 20 with its total) answers with the exact total. A start over an empty store, measured the same way in the same
 * run, is what a start costs whatever the store holds (Node and tsx loading the service's modules).
 *
 * `BENCH_RESTART_COMPARE=<checkout>` measures that checkout's `npm start` too (the code before a change, say), over
 * the same copies, the two starts taking turns, in columns of their own.
 *
 * Each load and each wait for the change log runs in a process of its own (a process's handlers bind the store's
 * address once, as in Lambda): this file runs itself with `load <dir> <from> <to>` or `settle <dir>`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { startLocalServer } from '../bin/local-server';
import { writeSection } from './report';
import { benchApplication, loadThroughBatchCreate, requestLines, signedCaller, signedPost } from './signed-calls';

const APP = { appCode: 'app-restart', accessKey: 'ak-restart-000001', secret: 'sk-restart-secret-value' };
const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const CONFIG = {
  applications: [benchApplication(APP, 'restart')],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      name: 'orders',
      fields: [
        { name: 'customer', type: 'string', indexed: true },
        { name: 'amount', type: 'number', indexed: true },
        { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
        { name: 'note', type: 'text' },
      ],
    },
  ],
};
const ROOT = path.join(__dirname, '..');
/** A start that has not served by then has failed (the figures would not mean anything). */
const START_LIMIT_MS = 300_000;

function progress(text: string): void {
  process.stderr.write(`[restart ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

function serverOptions(configFile: string, dataDir: string) {
  // The prefix `npm start` uses, so that the command itself opens the same tables.
  return { configFile, port: 0, dataDir, tablePrefix: 'das-local' };
}

/** Records `from` to `to` (exclusive) through batch-create; the server stops as soon as the last batch answers. */
async function load(configFile: string, dataDir: string, from: number, to: number): Promise<void> {
  const { lines, sink } = requestLines();
  const server = await startLocalServer({ ...serverOptions(configFile, dataDir), logSink: sink });
  const call = signedCaller(APP, () => server, lines);
  try {
    await loadThroughBatchCreate(
      to - from,
      (k) => {
        const i = from + k;
        return {
          customer: `cust-${String(i % 5000).padStart(5, '0')}`,
          amount: ((i * 7919) % 1_000_000) / 100,
          status: STATUSES[i % 4],
          note: `line ${i}`,
        };
      },
      (paramList, key) => call('orders', '/openapi/data/batch-create', { paramList }, { 'Idempotency-Key': key }),
      `orders-${from}`,
    );
  } finally {
    await server.close();
  }
}

/** Start over the store, wait until the change log and the folds have caught up, stop. */
async function settle(configFile: string, dataDir: string): Promise<void> {
  const server = await startLocalServer({ ...serverOptions(configFile, dataDir), logSink: () => undefined });
  try {
    await server.changesSettled();
  } finally {
    await server.close();
  }
}

/** Run a phase of this benchmark in a process of its own. */
function phase(...args: string[]): void {
  const child = spawnSync(process.execPath, [...process.execArgv, __filename, ...args], { stdio: 'inherit' });
  if (child.status !== 0) throw new Error(`restart bench: ${args[0]} failed (exit ${child.status ?? child.signal})`);
}

interface Start {
  /** From the command to its `/health` answering (s). */
  serving: number;
  /** From the command to the first list's answer (s). */
  listed: number;
  total: unknown;
}

async function signedList(url: string): Promise<{ total: unknown; errorCode?: number }> {
  const envelope = (await signedPost(url, APP, 'orders', '/openapi/data/get-list', { paramMap: { pageSize: 20 } })) as {
    errorCode?: number;
    data?: { paging?: { totalCount?: number } };
  };
  return { total: envelope.data?.paging?.totalCount, errorCode: envelope.errorCode };
}

/** The URL `npm start` prints once it listens. */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no start within ${START_LIMIT_MS} ms`)), START_LIMIT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start ended (exit ${code}) before it served`));
    });
  });
}

/** `npm start` over a copy of the store: until it serves, until its first list answers; then it is stopped. */
async function start(configFile: string, store: string, checkout: string): Promise<Start> {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'bench-restart-run-'));
  cpSync(store, copy, { recursive: true });
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bin/local-server.ts', '--config', configFile, '--port', '0', '--data-dir', copy, '--quiet'],
    {
      cwd: checkout,
      env: {
        ...process.env,
        DAS_LOCAL_SERVICE_FILE: path.join(copy, 'local-service.json'),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const url = await listeningUrl(child);
    const health = await fetch(`${url}/health`);
    if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
    const serving = (performance.now() - started) / 1000;
    const list = await signedList(url);
    if (list.errorCode !== undefined) throw new Error(`the first list answered ${list.errorCode}`);
    return { serving, listed: (performance.now() - started) / 1000, total: list.total };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    rmSync(copy, { recursive: true, force: true });
  }
}

function seconds(starts: Start[], key: 'serving' | 'listed'): string {
  return starts.map((s) => s[key].toFixed(1)).join(', ');
}

function median(starts: Start[], key: 'serving' | 'listed'): number {
  const sorted = starts.map((s) => s[key]).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export async function run(): Promise<void> {
  const sizes = (process.env.BENCH_RESTART_SIZES ?? '100000').split(',').map(Number);
  const runs = Number(process.env.BENCH_RESTART_RUNS ?? 3);
  const compare = process.env.BENCH_RESTART_COMPARE ? path.resolve(process.env.BENCH_RESTART_COMPARE) : undefined;
  const checkouts = compare ? [ROOT, compare] : [ROOT];
  const configFile = path.join(os.tmpdir(), `bench-restart-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const work = mkdtempSync(path.join(os.tmpdir(), 'bench-restart-'));
  const live = path.join(work, 'live');
  const load0 = loadavg()[0] as number;
  const rows: string[] = [];
  const checks: string[] = [];
  try {
    const measure = async (label: string, store: string, expected: number) => {
      const starts: Start[][] = checkouts.map(() => []);
      for (let i = 0; i < runs; i++) {
        for (const [c, checkout] of checkouts.entries()) starts[c]?.push(await start(configFile, store, checkout));
      }
      const cells: string[] = [];
      for (const [c, checkout] of checkouts.entries()) {
        const of = starts[c] as Start[];
        for (const s of of) {
          if (s.total !== expected) {
            checks.push(`${label} (${checkout}): the first list's total was ${s.total}, not ${expected}`);
          }
        }
        cells.push(
          `**${median(of, 'serving').toFixed(1)}** (${seconds(of, 'serving')})`,
          `**${median(of, 'listed').toFixed(1)}** (${seconds(of, 'listed')})`,
        );
        progress(`${label} [${checkout}]: serving ${seconds(of, 'serving')} s; first list ${seconds(of, 'listed')} s`);
      }
      rows.push(`| ${label} | ${cells.join(' | ')} |`);
    };
    // An empty store: the configuration applied, no record.
    phase('load', configFile, live, '0', '0');
    await measure('empty store', live, 0);
    let held = 0;
    for (const size of sizes) {
      const loaded = performance.now();
      phase('load', configFile, live, String(held), String(size));
      progress(`loaded to ${size} in ${((performance.now() - loaded) / 1000).toFixed(0)} s`);
      held = size;
      const behind = path.join(work, `behind-${size}`);
      cpSync(live, behind, { recursive: true });
      const settling = performance.now();
      phase('settle', configFile, live);
      progress(`settled ${size} in ${((performance.now() - settling) / 1000).toFixed(0)} s`);
      await measure(`${size.toLocaleString('en-US')} records, right after the load`, behind, size);
      rmSync(behind, { recursive: true, force: true });
      await measure(`${size.toLocaleString('en-US')} records, settled`, live, size);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(configFile, { force: true });
  }
  const out = [
    `\`npm start\` over a store in a data directory (one \`orders\` dataset loaded through batch-create, 4 batches of 1,000 at a time), run as its own command ${runs} times for each state, each over a fresh copy of the store; seconds from the command, median (each run):`,
    '',
    compare
      ? '| store | this code: `/health` answers | this code: first list answers | compared: `/health` answers | compared: first list answers |'
      : '| store | `/health` answers | first signed list (page 1 of 20 with its exact total) answers |',
    compare ? '|---|---|---|---|---|' : '|---|---|---|',
    ...rows,
    '',
    ...(checks.length ? ['**Wrong totals:**', ...checks.map((c) => `- ${c}`), ''] : []),
    `Machine: ${cpus().length} cores, load ${load0.toFixed(2)} at the start (shared with other work).`,
  ].join('\n');
  process.stdout.write(`${out}\n`);
  writeSection('restart', out);
}

if (require.main === module) {
  const [what, configFile, dataDir, from, to] = process.argv.slice(2) as string[];
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const done =
    what === 'load'
      ? load(configFile as string, dataDir as string, Number(from), Number(to))
      : settle(configFile as string, dataDir as string);
  done.then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
