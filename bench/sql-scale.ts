/**
 * `npm run bench -- sql-scale`: custom SQL on the `mysql` engine at scale (docs/interface.md §20). The local
 * service as `npm start -- --sql-engine mysql://…` runs it, over a throw-away MariaDB 10.11 (the local twin of
 * MySQL 8). It loads BENCH_SQL_SCALE_RECORDS records (default 100,000) through batch-create (batches of 1,000,
 * 4 at a time) while watching the change log and the mirror catch them (sql-scale-progress.ts); then, right
 * after the load's last answer and nothing waited for, asks a registered GROUP BY over the whole dataset through
 * the signed `/api/custom/executeSql` call, first once (retried after `Retry-After` if it answers 2001), then
 * RUNS times more, each beside the same statement sent to MariaDB directly over mysql2 on the mirror's rows.
 * Every answer must count every record and equal MariaDB's. Figures of each size are kept in the section, so a
 * run at 1,000,000 adds its row beside the 100,000 one. BENCH_SQL_SCALE_STOP_AT (an ISO time) stops a run that
 * would outlast it, cleaning up and writing nothing.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type LocalServer, startLocalServer } from '../bin/local-server';
import { parseMysqlUrl, poolOf, QUERY_SESSION, sessionOf } from '../shared/mirror/mysql-connection';
import { MariaDb } from '../test/support/mysql-compat/mariadb';
import { PERFORMANCE_DOC, writeSection } from './report';
import { type Answer, benchApplication, loadThroughBatchCreate, signedCaller } from './signed-calls';
import { type Counters, ProgressSampler, type Sample } from './sql-scale-progress';
import { renderSection, type ScaleResult } from './sql-scale-report';

const APP = { appCode: 'app-sql-scale', accessKey: 'ak-sql-scale-bench-01', secret: 'sk-sql-scale-bench' };
const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const REGIONS = ['north', 'south', 'east', 'west', 'central'] as const;
const RUNS = 9;
export const SQL =
  'SELECT status, region, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY status, region ORDER BY status, region';
const TIMEOUT_MS = 25_000;
const CONFIG = {
  applications: [benchApplication(APP, 'sql-scale bench')],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      name: 'orders',
      fields: [
        { name: 'customer', type: 'string' },
        { name: 'amount', type: 'integer' },
        { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
        { name: 'region', type: 'enum', options: [...REGIONS] },
        { name: 'note', type: 'text' },
      ],
    },
  ],
  queries: [{ appCode: APP.appCode, sqlCode: 'by-status-region', sql: SQL, timeoutMs: TIMEOUT_MS }],
};

type Row = Record<string, unknown>;

function progress(text: string): void {
  process.stderr.write(`[sql-scale ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** BENCH_SQL_SCALE_STOP_AT (an ISO time): a run still going then stops, cleaning up, and writes nothing. */
const STOP_AT = process.env.BENCH_SQL_SCALE_STOP_AT ? Date.parse(process.env.BENCH_SQL_SCALE_STOP_AT) : Infinity;
function inTime(): void {
  if (Date.now() > STOP_AT)
    throw new Error(`stopped at ${process.env.BENCH_SQL_SCALE_STOP_AT} (BENCH_SQL_SCALE_STOP_AT)`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Rows as numbers and text only, so that the service's JSON and mysql2's values compare. */
function normalised(rows: Row[]): string {
  return JSON.stringify(
    rows.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v]),
      ),
    ),
  );
}

const counted = (rows: Row[]) => rows.reduce((sum, row) => sum + Number(row.n), 0);

/** Log lines of the server: request lines for their read units, change-log lines for the events logged. */
function logSinkOf(counters: Counters) {
  const lines: Row[] = [];
  const sink = (line: string) => {
    const parsed = JSON.parse(line) as Row;
    if (parsed.requestId) {
      lines.push(parsed);
      if (lines.length > 5000) lines.splice(0, 2500);
    } else if (parsed.operation === 'change-log') counters.logged += Number(parsed.changeEventsLogged ?? 0);
  };
  return { lines, sink };
}

async function measure(size: number): Promise<ScaleResult> {
  const loadAtStart = loadavg()[0] as number;
  const configFile = path.join(os.tmpdir(), `bench-sql-scale-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-sql-scale-'));
  const mariadb = await MariaDb.start('UTC');
  const url = mariadb.engineUrl('mirror');
  const target = parseMysqlUrl(url);
  const counters: Counters = { acknowledged: 0, logged: 0 };
  const { lines, sink } = logSinkOf(counters);
  const server: LocalServer = await startLocalServer({
    configFile,
    port: 0,
    dataDir,
    tablePrefix: 'bench-sql-scale',
    logSink: sink,
    sqlEngine: url,
  });
  const watch = poolOf(target, target, { connectionLimit: 1, init: [] });
  const direct = poolOf(target, target, { connectionLimit: 1, init: QUERY_SESSION });
  const call = signedCaller(APP, () => server, lines);
  const executeSql = () => call('orders', '/api/custom/executeSql', { sqlCode: 'by-status-region' });
  const rowsOf = (answer: Answer) => ((answer.data as { execResult?: Row[] } | undefined)?.execResult ?? []) as Row[];
  const askDirect = async () => {
    const started = performance.now();
    const [rows] = await direct.query(SQL);
    return { ms: performance.now() - started, rows: rows as Row[] };
  };
  let sampler: ProgressSampler | undefined;
  try {
    const begun = Date.now();
    sampler = new ProgressSampler(sessionOf(watch), counters, 'orders', begun, size > 200_000 ? 5_000 : 2_000);
    // The service as it starts: the mirror has made the empty dataset's table and finished its (empty) backfill.
    for (let i = 0; (await sampler.sample()).lagSeconds === null; i++) {
      if (i > 60) throw new Error('the mirror did not start');
      await pause(1_000);
    }
    sampler.samples.length = 0;
    progress(`loading ${size} records`);
    sampler.start();
    await loadThroughBatchCreate(
      size,
      (i) => ({
        customer: `cust-${String((i * 7) % 1_000).padStart(4, '0')}`,
        amount: (i * 7919) % 10_000,
        status: STATUSES[i % STATUSES.length],
        region: REGIONS[(i >> 2) % REGIONS.length],
        note: `line ${i}`,
      }),
      async (paramList, key) => {
        inTime();
        const answer = await call('orders', '/openapi/data/batch-create', { paramList }, { 'Idempotency-Key': key });
        if (answer.errorCode === undefined) counters.acknowledged += paramList.length;
        return answer;
      },
      'load',
    );
    const loadMs = Date.now() - begun;
    progress(`loaded in ${(loadMs / 1000).toFixed(0)} s`);
    // Right after the load: the first call, and retries after Retry-After as a client makes them.
    const calls: Answer[] = [];
    const firstStarted = performance.now();
    for (let attempt = 0; attempt < 120; attempt++) {
      inTime();
      const answer = await executeSql();
      calls.push(answer);
      if (answer.errorCode !== 2001) break;
      progress(`2001: ${answer.errorMsg}`);
      await pause(1_000 * (answer.retryAfter ?? 1));
    }
    const firstAnsweredMs = performance.now() - firstStarted;
    const firstAnswer = calls.at(-1) as Answer;
    if (firstAnswer.errorCode !== undefined) {
      throw new Error(`executeSql: ${firstAnswer.errorCode} ${firstAnswer.errorMsg ?? ''}`);
    }
    const firstCounted = counted(rowsOf(firstAnswer));
    progress(`first answer after ${firstAnsweredMs.toFixed(0)} ms (${calls.length} calls), ${firstCounted} counted`);
    // Until the mirror's table holds every record (the first answer says it does, if reads see their writes).
    for (let i = 0; (await sampler.sample()).mirrored < size && i < 600; i++) {
      inTime();
      await pause(1_000);
    }
    await sampler.stop();
    const directFirst = await askDirect();
    const service: Answer[] = [];
    const mariadbMs: number[] = [];
    const rounds: number[] = [];
    let directRows = directFirst.rows;
    for (let i = 0; i < RUNS; i++) {
      service.push(await executeSql());
      const measured = await askDirect();
      mariadbMs.push(measured.ms);
      directRows = measured.rows;
      const roundStarted = performance.now();
      await server.mirror?.feed.round();
      rounds.push(performance.now() - roundStarted);
    }
    const failed = service.find((answer) => answer.errorCode !== undefined);
    if (failed) throw new Error(`executeSql: ${failed.errorCode} ${failed.errorMsg ?? ''}`);
    const answers = [firstAnswer, ...service].map((answer) => normalised(rowsOf(answer)));
    const expected = normalised(directRows);
    const samples: Sample[] = sampler.samples;
    const caughtUp = samples.find((s) => s.mirrored >= size);
    const allLogged = samples.find((s) => s.logged >= size);
    const during = samples.filter((s) => s.at <= loadMs);
    const atLoadEnd = during.at(-1);
    const lags = during.map((s) => s.lagSeconds ?? 0);
    return {
      records: size,
      loadSeconds: loadMs / 1000,
      loadRate: (size * 1000) / loadMs,
      loggedRateDuringLoad: ((atLoadEnd?.logged ?? 0) * 1000) / loadMs,
      applyRateDuringLoad: ((atLoadEnd?.mirrored ?? 0) * 1000) / loadMs,
      applyRatePeak: sampler.peakRate((s) => s.mirrored, 10_000),
      applyRateOverall: caughtUp ? (size * 1000) / caughtUp.at : 0,
      lagMaxSeconds: Math.max(0, ...lags),
      behindMaxRecords: Math.max(0, ...during.map((s) => s.acknowledged - s.mirrored)),
      atLoadEnd: {
        mirrored: atLoadEnd?.mirrored ?? 0,
        logged: atLoadEnd?.logged ?? 0,
        lagSeconds: atLoadEnd?.lagSeconds ?? null,
      },
      caughtUpAfterLoadSeconds: caughtUp ? Math.max(0, caughtUp.at - loadMs) / 1000 : null,
      loggedAfterLoadSeconds: allLogged ? Math.max(0, allLogged.at - loadMs) / 1000 : null,
      trajectory: samples.map((s) => ({ ...s })),
      first: {
        calls: calls.length,
        firstCallMs: calls[0]?.ms ?? 0,
        firstCall: calls[0]?.errorCode === undefined ? 'answered' : `${calls[0]?.errorCode}: ${calls[0]?.errorMsg}`,
        answeredMs: firstAnsweredMs,
        readUnits: calls.reduce((sum, a) => sum + a.readUnits, 0),
        counted: firstCounted,
      },
      directFirstMs: directFirst.ms,
      serviceP50Ms: median(service.map((a) => a.ms)),
      serviceMs: service.map((a) => a.ms),
      mariadbP50Ms: median(mariadbMs),
      mariadbMs,
      roundP50Ms: median(rounds),
      readUnitsPerQuery: Math.max(...service.map((a) => a.readUnits)),
      counted: counted(rowsOf(service.at(-1) as Answer)),
      directCounted: counted(directRows),
      sameAsMariadb: answers.every((answer) => answer === expected),
      groups: directRows.length,
      rssPeakMiB: Math.max(process.resourceUsage().maxRSS / 1024, ...samples.map((s) => s.rssMiB)),
      rssEndMiB: process.memoryUsage().rss / (1024 * 1024),
      mariadbPeakMiB: Math.max(0, ...samples.map((s) => s.mariadbMiB)),
      loadAverage: { start: loadAtStart, end: loadavg()[0] as number },
      cores: cpus().length,
      date: new Date().toISOString().slice(0, 10),
    };
  } finally {
    await sampler?.stop();
    await Promise.allSettled([watch.end(), direct.end()]);
    await server.close();
    await mariadb.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configFile, { force: true });
  }
}

export async function run(): Promise<void> {
  const size = Number(process.env.BENCH_SQL_SCALE_RECORDS ?? 100_000);
  const result = await measure(size);
  process.stderr.write(`${JSON.stringify({ ...result, trajectory: undefined })}\n`);
  const markdown = renderSection(readFileSync(PERFORMANCE_DOC, 'utf8'), result);
  process.stdout.write(`${markdown}\n`);
  writeSection('sql-scale', markdown);
}
