/**
 * `npm run bench -- change-log`: how fast the change log's writer keeps up with a bulk load in `npm start`'s
 * process. One `orders` dataset loaded through batch-create (1,000 records a batch, 4 at a time) to each size of
 * `BENCH_CHANGE_LOG_SIZES` (default 20,000 and 50,000), each in a fresh store in a data directory and a process of
 * its own; then how many events the writer had logged by the load's end, how long after it the writer caught up,
 * its rate meanwhile (events per second) and the process's CPU time per event over that span (the figure that
 * moves least with other work on the machine; it includes the folds beside the writes that run meanwhile).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalServer } from '../bin/local-server';
import { signedPost } from './signed-calls';

const APP = { appCode: 'app-cl', accessKey: 'ak-changelog-00001', secret: 'sk-changelog-secret-value' };
const BATCH = 1000;
const PARALLEL_BATCHES = 4;

const CONFIG = {
  applications: [
    {
      appCode: APP.appCode,
      name: 'change log',
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      quota: { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 100 },
      grants: [{ datasetCode: 'orders', operations: ['read', 'create', 'update'] }],
    },
  ],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      name: 'orders',
      fields: [
        { name: 'customer', type: 'string', indexed: true },
        { name: 'amount', type: 'number', indexed: true },
        { name: 'status', type: 'enum', options: ['new', 'paid', 'shipped', 'void'], indexed: true },
        { name: 'note', type: 'text' },
      ],
    },
  ],
};

function order(i: number): Record<string, unknown> {
  return {
    customer: `cust-${String(i % 5000).padStart(5, '0')}`,
    amount: ((i * 7919) % 1_000_000) / 100,
    status: ['new', 'paid', 'shipped', 'void'][i % 4],
    note: `line ${i}`,
  };
}

async function batchCreate(url: string, paramList: Record<string, unknown>[]): Promise<void> {
  const answer = (await signedPost(url, APP, 'orders', '/openapi/data/batch-create', { paramList })) as {
    errorCode?: number;
    errorMsg?: string;
  };
  if (answer.errorCode) throw new Error(`batch-create failed: ${answer.errorCode} ${answer.errorMsg}`);
}

interface Row {
  size: number;
  loadSeconds: number;
  /** Events the writer had logged when the load's last batch was answered. */
  loggedByLoadEnd: number;
  catchUpSeconds: number;
  /** Events logged per second from the load's end until the writer caught up. */
  catchUpRate: number;
  /** The process's CPU time over the same span, per event logged in it. */
  cpuMsPerEvent: number;
  logged: number;
}

async function measure(size: number): Promise<Row> {
  const configFile = path.join(os.tmpdir(), `bench-change-log-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-change-log-'));
  const batches: { logged: number }[] = [];
  const server = await startLocalServer({
    configFile,
    port: 0,
    dataDir,
    tablePrefix: 'bench-cl',
    logSink: (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.operation === 'change-log') {
        batches.push({ logged: Number(parsed.changeEventsLogged) });
      }
    },
  });
  try {
    const started = performance.now();
    let held = 0;
    while (held < size) {
      const calls: Promise<void>[] = [];
      for (let b = 0; b < PARALLEL_BATCHES && held < size; b++) {
        const count = Math.min(BATCH, size - held);
        const from = held;
        held += count;
        calls.push(
          batchCreate(
            server.url,
            Array.from({ length: count }, (_, k) => order(from + k)),
          ),
        );
      }
      await Promise.all(calls);
    }
    const loaded = performance.now();
    const loggedByLoadEnd = batches.reduce((sum, b) => sum + b.logged, 0);
    const cpuBefore = process.cpuUsage();
    await server.changesSettled();
    const caughtUp = performance.now();
    const cpu = process.cpuUsage(cpuBefore);
    const logged = batches.reduce((sum, b) => sum + b.logged, 0);
    const catchUpSeconds = (caughtUp - loaded) / 1000;
    return {
      size,
      loadSeconds: (loaded - started) / 1000,
      loggedByLoadEnd,
      catchUpSeconds,
      catchUpRate: (logged - loggedByLoadEnd) / catchUpSeconds,
      cpuMsPerEvent: (cpu.user + cpu.system) / 1000 / (logged - loggedByLoadEnd),
      logged,
    };
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configFile, { force: true });
  }
}

export async function run(): Promise<void> {
  const sizes = (process.env.BENCH_CHANGE_LOG_SIZES ?? '20000,50000').split(',').map(Number);
  if (sizes.length > 1) {
    // One process per size: a process is one container, whose handlers keep their clients and caches.
    for (const size of sizes) {
      const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
        stdio: 'inherit',
        env: { ...process.env, BENCH_CHANGE_LOG_SIZES: String(size) },
      });
      if (child.status !== 0) throw new Error(`the run at ${size} records failed (exit ${child.status})`);
    }
    return;
  }
  for (const size of sizes) {
    const row = await measure(size);
    process.stdout.write(
      `${row.size} records: loaded in ${row.loadSeconds.toFixed(1)} s (${(row.size / row.loadSeconds).toFixed(0)}/s), ` +
        `${row.loggedByLoadEnd} events logged by then; the writer caught up ${row.catchUpSeconds.toFixed(1)} s ` +
        `after the load (${row.catchUpRate.toFixed(0)} events/s, ${row.cpuMsPerEvent.toFixed(2)} ms of the ` +
        `process's CPU per event); ${row.logged} events in all\n`,
    );
  }
}
