/**
 * `npm run bench -- aggregate`: what an aggregate costs (docs/interface.md §21) on each SQL engine (§20), beside
 * the list of the same records. The local service as `npm start` runs it, one process per engine (a process is one
 * container: its handlers bind their engine once): `embedded` (the dataset loaded into sql.js on the first call,
 * then caught up from the change log) and, where MariaDB is installed, `mysql` (`--sql-engine`, over the mirror the
 * process keeps; measured once the mirror holds the load). Each loads BENCH_AGGREGATE_RECORDS records (default
 * 20,000; batches of 1,000, 4 at a time) through batch-create, then asks, one after the other: page 1 of the list
 * with its total, a COUNT and SUM by status (first call, retried after `Retry-After` until it answers; second; after
 * one create), the top 20 of 1,000 customers by SUM, and a filtered GROUP BY with `having`. Both engines' answers
 * are compared: they must be the same.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { type LocalServer, startLocalServer } from '../bin/local-server';
import { MariaDb, mariaDbInstalled } from '../test/support/mysql-compat/mariadb';
import { writeSection } from './report';
import { type Answer, benchApplication, loadThroughBatchCreate, requestLines, signedCaller } from './signed-calls';

const APP = { appCode: 'app-aggregate', accessKey: 'ak-aggregate-bench-01', secret: 'sk-aggregate-bench' };
const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const REGIONS = ['north', 'south', 'east', 'west', 'central'] as const;
const CUSTOMERS = 1_000;
const CONFIG = {
  applications: [benchApplication(APP, 'aggregate bench')],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      name: 'orders',
      fields: [
        { name: 'customer', type: 'string' },
        { name: 'amount', type: 'number' },
        { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
        { name: 'region', type: 'enum', options: [...REGIONS] },
        { name: 'note', type: 'text' },
      ],
    },
  ],
};

const BY_STATUS = {
  aggregate: [
    { type: 'COUNT', alias: 'n' },
    { type: 'SUM', column: 'amount', alias: 'total' },
  ],
  groupBy: ['status'],
  orderBy: [{ status: 'asc' }],
};
const TOP_CUSTOMERS = {
  aggregate: [{ type: 'SUM', column: 'amount', alias: 'total', round: true, precision: 2 }],
  groupBy: ['customer'],
  orderBy: [{ total: 'desc' }, { customer: 'asc' }],
  pageSize: 20,
};
const PAID_BY_REGION = {
  aggregate: [
    { type: 'COUNT', alias: 'n' },
    { type: 'AVG', column: 'amount', alias: 'mean', round: true, precision: 2 },
  ],
  where: { status: 'paid', amount: { $gteq: 100 } },
  groupBy: ['region'],
  having: { n: { $gte: 10 } },
  orderBy: [{ region: 'asc' }],
};

interface Measured {
  label: string;
  readUnits: number;
  ms: number;
  calls: number;
  errorCode?: number;
  data?: unknown;
}

interface PartResult {
  engine: string;
  records: number;
  loadSeconds: number;
  /** mysql: seconds from the end of the load until an aggregate counted every record. */
  mirrorSeconds?: number;
  measured: Measured[];
}

function progress(text: string): void {
  process.stderr.write(`[aggregate ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One engine's run, in a process of its own. */
async function part(engine: string, size: number): Promise<PartResult> {
  const configFile = path.join(os.tmpdir(), `bench-aggregate-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-aggregate-'));
  const mariadb = engine === 'mysql' ? await MariaDb.start('UTC') : undefined;
  const { lines, sink } = requestLines();
  const server: LocalServer = await startLocalServer({
    configFile,
    port: 0,
    dataDir,
    tablePrefix: 'bench-aggregate',
    logSink: sink,
    ...(mariadb ? { sqlEngine: mariadb.engineUrl('mirror'), mirrorBackfillRecordsPerSecond: 0 } : {}),
  });
  const call = signedCaller(APP, () => server, lines);
  const aggregate = (paramMap: Record<string, unknown>) => call('orders', '/openapi/data/aggregate', { paramMap });
  const measured: Measured[] = [];
  const note = (label: string, answers: Answer[], ms?: number) =>
    measured.push({
      label,
      readUnits: answers.reduce((sum, a) => sum + a.readUnits, 0),
      ms: ms ?? answers.reduce((sum, a) => sum + a.ms, 0),
      calls: answers.length,
      ...(answers.at(-1)?.errorCode === undefined
        ? { data: answers.at(-1)?.data }
        : { errorCode: answers.at(-1)?.errorCode }),
    });
  /** Asks until an answer (a 2001 retried after its Retry-After, as a client does); every call counted. */
  const untilAnswered = async (paramMap: Record<string, unknown>): Promise<{ answers: Answer[]; ms: number }> => {
    const started = performance.now();
    const answers: Answer[] = [];
    for (let attempt = 0; attempt < 60; attempt++) {
      const answer = await aggregate(paramMap);
      answers.push(answer);
      if (answer.errorCode !== 2001) break;
      await pause(1_000 * (answer.retryAfter ?? 1));
    }
    return { answers, ms: performance.now() - started };
  };
  try {
    const loadStarted = performance.now();
    await loadThroughBatchCreate(
      size,
      (i) => ({
        customer: `cust-${String((i * 7) % CUSTOMERS).padStart(4, '0')}`,
        amount: ((i * 7919) % 100_000) / 100,
        status: STATUSES[i % STATUSES.length],
        region: REGIONS[i % REGIONS.length],
        note: `line ${i}`,
      }),
      (paramList, key) => call('orders', '/openapi/data/batch-create', { paramList }, { 'Idempotency-Key': key }),
      'load',
    );
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    progress(`${engine}: ${size} records in ${loadSeconds.toFixed(0)} s`);
    let mirrorSeconds: number | undefined;
    if (mariadb) {
      // The mirror backfills beside the load; an aggregate waits for it within its limit, else answers 2001.
      const waited = performance.now();
      for (;;) {
        const count = await aggregate({ aggregate: [{ type: 'COUNT', alias: 'n' }] });
        const n = (count.data as { tableData?: { n: number }[] } | undefined)?.tableData?.[0]?.n;
        if (n === size) break;
        if (performance.now() - waited > 600_000)
          throw new Error(`the mirror did not catch up: ${JSON.stringify(count)}`);
        await pause(1_000);
      }
      mirrorSeconds = (performance.now() - waited) / 1000;
      progress(`${engine}: the mirror holds the load after ${mirrorSeconds.toFixed(0)} s`);
    }
    note('get-list: page 1 of 20 with its total', [
      await call('orders', '/openapi/data/get-list', { paramMap: { pageSize: 20 } }),
    ]);
    const first = await untilAnswered(BY_STATUS);
    note('COUNT and SUM by status (4 groups): first call', first.answers, first.ms);
    note('the same, second call', [await aggregate(BY_STATUS)]);
    const created = await call('orders', '/openapi/data/create', {
      paramMap: { customer: 'cust-new', amount: 12.5, status: 'paid', region: 'north', note: 'one more' },
    });
    if (created.errorCode) throw new Error(`create failed: ${created.errorCode}`);
    const afterWrite = await untilAnswered(BY_STATUS);
    note('the same, after one create', afterWrite.answers, afterWrite.ms);
    const top = await untilAnswered(TOP_CUSTOMERS);
    note(
      `SUM by customer (${CUSTOMERS.toLocaleString('en-US')} groups), top 20 with the group count`,
      top.answers,
      top.ms,
    );
    const paid = await untilAnswered(PAID_BY_REGION);
    note('`status = paid`, `amount ≥ 100`, COUNT and AVG by region, `having n ≥ 10`', paid.answers, paid.ms);
    return { engine, records: size, loadSeconds, ...(mirrorSeconds === undefined ? {} : { mirrorSeconds }), measured };
  } finally {
    await server.close();
    await mariadb?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configFile, { force: true });
  }
}

/** The largest relative difference between two answers' numbers; Infinity when their shapes or other values differ. */
function difference(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') {
    return a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length
      ? Math.max(0, ...a.map((value, i) => difference(value, b[i])))
      : Number.POSITIVE_INFINITY;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = Object.keys(a);
    if (JSON.stringify(keys) !== JSON.stringify(Object.keys(b))) return Number.POSITIVE_INFINITY;
    return Math.max(
      0,
      ...keys.map((key) => difference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])),
    );
  }
  return a === b ? 0 : Number.POSITIVE_INFINITY;
}

function cell(m: Measured | undefined): string {
  if (!m) return '–';
  const units = `${Math.round(m.readUnits * 10) / 10} RU, ${Math.round(m.ms)} ms`;
  const calls = m.calls > 1 ? ` (${m.calls} calls)` : '';
  return m.errorCode === undefined ? `${units}${calls}` : `**${m.errorCode}** (${units}${calls})`;
}

export async function run(): Promise<void> {
  const size = Number(process.env.BENCH_AGGREGATE_RECORDS ?? 20_000);
  const engine = process.env.BENCH_AGGREGATE_ENGINE;
  const out = process.env.BENCH_AGGREGATE_OUT;
  if (engine && out) {
    writeFileSync(out, JSON.stringify(await part(engine, size)));
    return;
  }
  const load = loadavg()[0] as number;
  const engines = mariaDbInstalled() ? ['embedded', 'mysql'] : ['embedded'];
  const results: PartResult[] = [];
  for (const name of engines) {
    const file = path.join(os.tmpdir(), `bench-aggregate-${process.pid}-${name}.json`);
    const child = spawnSync(process.execPath, [...process.execArgv, path.join(__dirname, 'run.ts'), 'aggregate'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, BENCH_AGGREGATE_ENGINE: name, BENCH_AGGREGATE_OUT: file },
    });
    if (child.status !== 0) throw new Error(`the ${name} part failed (exit ${child.status ?? child.signal})`);
    results.push(JSON.parse(readFileSync(file, 'utf8')) as PartResult);
    rmSync(file, { force: true });
  }
  const [embedded, mysql] = results;
  const labels = embedded?.measured.map((m) => m.label) ?? [];
  const data = (part: PartResult | undefined, label: string) => part?.measured.find((m) => m.label === label)?.data;
  // Sums of doubles may differ in their last bits: MySQL adds in row order, sql.js compensates (interface.md §21).
  const differences = labels.slice(1).map((label) => difference(data(embedded, label), data(mysql, label)));
  const differing = mysql ? labels.slice(1).filter((_, i) => (differences[i] ?? 0) > 1e-12) : [];
  for (const label of differing) {
    const show = (part: PartResult | undefined) => JSON.stringify(data(part, label)).slice(0, 600);
    progress(`not the same: ${label}\n  embedded: ${show(embedded)}\n  mysql:    ${show(mysql)}`);
  }
  const largest = Math.max(0, ...differences);
  const same = mysql ? differing.length === 0 : undefined;
  const text = [
    `Aggregates over ${size.toLocaleString('en-US')} records loaded through batch-create, the local service as \`npm start\` runs it, each engine in a process of its own, in one run (read units from the request log; each call after the one before):`,
    '',
    `| call | embedded (sql.js) | ${mysql ? 'mysql (MariaDB 10.11, over the mirror)' : 'mysql (MariaDB not installed)'} |`,
    '|---|---|---|',
    ...labels.map(
      (label) =>
        `| ${label} | ${cell(embedded?.measured.find((m) => m.label === label))} | ${cell(mysql?.measured.find((m) => m.label === label))} |`,
    ),
    '',
    `Loading took ${embedded?.loadSeconds.toFixed(0)} s (embedded) and ${mysql ? `${mysql.loadSeconds.toFixed(0)} s (mysql, whose mirror held every record ${mysql.mirrorSeconds?.toFixed(0)} s after the load's last answer)` : '–'}.`,
    same === undefined
      ? ''
      : `The two engines' answers were ${same ? `the same for every aggregate${largest > 0 ? ` but for the last bits of sums of doubles (largest relative difference ${largest.toExponential(1)})` : ''}` : `**not** the same for: ${differing.join('; ')}`}.`,
    `Machine: ${cpus().length} cores, load ${load.toFixed(2)} at the start (shared with other work).`,
  ]
    .filter((line, i, all) => line !== '' || all[i - 1] !== '')
    .join('\n');
  process.stdout.write(`${text}\n`);
  writeSection('aggregate', text);
}
