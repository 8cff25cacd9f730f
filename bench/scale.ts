/**
 * `npm run bench -- scale`: one `orders` dataset (8 fields; `customer`, `amount` and `status` indexed, `status`
 * four values, a quarter of the records `new`) grown through batch-create to each size of `BENCH_SCALE_SIZES`
 * (default 10,000, 100,000 and 1,000,000) in one run, against the real local service over HTTP. At each size:
 * the load's rate and write units per record, get-list (unfiltered first page, a deep page, an exact total of an
 * equality, a 1 % and a 10 % range sorted by their field, the 1 % range newest first, a range holding half of the
 * records, and the first equality and the first 1 % range once the load settled), get-one, custom SQL
 * `GROUP BY status` (first call, warm with no writes since, after 1,000 single creates, and in a freshly
 * started container), and the process's memory (the service and its embedded store share it). Read units and
 * times come from the request log (docs/interface.md §11); the figures go into docs/performance.md.
 *
 * The service runs as `npm start` runs it: its embedded store in a data directory (a fresh temporary one, removed
 * at the end; `BENCH_SCALE_STORE=memory` keeps the store in memory instead), with the store's change stream and the
 * change log's writer in the same process. Besides the load's rate, the CPU time the process spent per record
 * while loading, and how long the change log's writer took after the load to catch up with it. Memory is the
 * process's resident set, with the JavaScript heap's part and the part outside it (buffers, the SQL worker's
 * WebAssembly memory and the store's LevelDB are in neither: they are the rest of the resident set). On Linux the
 * resident set is also split as /proc/self/smaps shows it: anonymous memory against mapped files (the node binary,
 * its libraries, the store's table files LevelDB maps to read them), and the part of the anonymous memory in the C
 * allocator's per-thread arenas (glibc's 64 MiB mappings, used by LevelDB's work on libuv's threads); it is taken
 * once the lists are measured, before custom SQL loads a copy of the records, and again at the end.
 *
 * A fresh container is a child process running the same service against the same store (`--container`), without
 * index jobs; its first SQL call is timed after a first request to `/health`, which loads the bench's own HTTP
 * client in that process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import { writeSection } from './report';

const APP = { appCode: 'app-scale', accessKey: 'ak-scale-000000001', secret: 'sk-scale-secret-value' };
const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const BATCH = 1000;
const PARALLEL_BATCHES = 4;
const SAMPLES = 5;
/** While loading, a list after every this many rounds of parallel batches (4,000 records each). */
const LIST_EVERY_GROUPS = 2;

const CONFIG = {
  applications: [
    {
      appCode: APP.appCode,
      name: 'scale',
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
        { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
        { name: 'region', type: 'string' },
        { name: 'items', type: 'integer' },
        { name: 'placed_at', type: 'datetime' },
        { name: 'gift', type: 'boolean' },
        { name: 'note', type: 'text' },
      ],
    },
  ],
  queries: [
    {
      appCode: APP.appCode,
      sqlCode: 'by-status',
      name: 'orders by status',
      sql: 'SELECT status, COUNT(*) AS orders, SUM(amount) AS revenue FROM orders GROUP BY status ORDER BY status',
      datasets: ['orders'],
      timeoutMs: 20_000,
    },
  ],
};

/** Record i: status `new` for a quarter, amounts 0–9999.99 spread evenly, 5,000 customers. */
function order(i: number): Record<string, unknown> {
  return {
    customer: `cust-${String(i % 5000).padStart(5, '0')}`,
    amount: ((i * 7919) % 1_000_000) / 100,
    status: STATUSES[i % 4],
    region: i % 3 ? 'EU' : 'US',
    items: 1 + (i % 7),
    placed_at: '2026-01-15 10:00:00',
    gift: i % 5 === 0,
    note: `line ${i}`,
  };
}

interface Answer {
  status: number;
  errorCode?: number;
  errorMsg?: string;
  data?: Record<string, unknown>;
  readUnits: number;
  writeUnits: number;
  ms: number;
}

type Call = (route: string, body: Record<string, unknown>, headers?: Record<string, string>) => Promise<Answer>;

/**
 * One batch of the load, with an Idempotency-Key: a batch stopped by the request time limit (2001, a store slowed by
 * other work) is sent again with the same key, which completes it and writes no record twice (docs/interface.md
 * §13), as a client would; while the stopped attempt still runs, that answers 4001 (retry in a second), and the
 * batch is sent again a second later. Its write units are those of every attempt.
 */
async function createBatch(call: Call, paramList: Record<string, unknown>[], key: string): Promise<Answer> {
  let writeUnits = 0;
  let stopped = 0;
  for (let waited = 0; ; ) {
    const answer = await call('/openapi/data/batch-create', { paramList }, { 'Idempotency-Key': key });
    writeUnits += Number.isNaN(answer.writeUnits) ? 0 : answer.writeUnits;
    if (answer.errorCode === 4001 && stopped > 0 && waited < 120) {
      waited += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    if (answer.errorCode !== 2001 || stopped === 2) return { ...answer, writeUnits };
    stopped += 1;
    progress(`batch ${key} stopped by the time limit (attempt ${stopped}); sent again with its Idempotency-Key`);
  }
}

function caller(url: string, lines: Record<string, unknown>[]): Call {
  return async (route, body, headers = {}) => {
    const timeStamp = String(Date.now());
    const datasetCode = 'orders';
    const token = signRequest({ accessKey: APP.accessKey, appCode: APP.appCode, datasetCode, timeStamp }, APP.secret);
    const started = performance.now();
    const response = await fetch(`${url}${route}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': APP.appCode,
        'X-Dataset-Code': datasetCode,
        'X-Token': token,
        ...headers,
      },
      body: JSON.stringify({ appCode: APP.appCode, datasetCode, ...body }),
    });
    const envelope = (await response.json()) as {
      errorCode?: number;
      errorMsg?: string;
      data?: Record<string, unknown>;
    };
    const ms = performance.now() - started;
    const requestId = response.headers.get('x-request-id');
    const line = lines.find((l) => l.requestId === requestId);
    return {
      status: response.status,
      ...(envelope.errorCode === undefined ? {} : { errorCode: envelope.errorCode }),
      ...(envelope.errorMsg ? { errorMsg: envelope.errorMsg } : {}),
      ...(envelope.data ? { data: envelope.data } : {}),
      readUnits: Number(line?.readUnits ?? Number.NaN),
      writeUnits: Number(line?.writeUnits ?? Number.NaN),
      ms,
    };
  };
}

/** Progress on stderr: a run at a million records takes a while. */
function progress(text: string): void {
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

const sql = (call: Call) => call('/api/custom/executeSql', { sqlCode: 'by-status', params: {} });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function cell(answer: Answer): string {
  const units = `${round(answer.readUnits)} RU, ${Math.round(answer.ms)} ms`;
  return answer.errorCode === undefined ? units : `**${answer.errorCode}** (${units})`;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The median of a few calls of the same request (first call of each kind excluded when `warm`). */
async function sampled(call: Call, route: string, body: Record<string, unknown>): Promise<Answer> {
  await call(route, body);
  const answers: Answer[] = [];
  for (let i = 0; i < SAMPLES; i++) answers.push(await call(route, body));
  const ms = median(answers.map((a) => a.ms));
  const readUnits = median(answers.map((a) => a.readUnits));
  return { ...(answers[0] as Answer), ms, readUnits };
}

/**
 * One SQL call in a fresh container (a child process) against the same store. Not spawnSync: the store lives in
 * this process, which must keep answering while the child calls it.
 */
function inFreshContainer(endpoint: string, configFile: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, __filename, '--container', endpoint, configFile]);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('close', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`fresh container failed (${code}): ${err}`));
      else resolve(JSON.parse(last) as Answer);
    });
  });
}

async function container(endpoint: string, configFile: string): Promise<void> {
  const lines: Record<string, unknown>[] = [];
  const server = await startLocalServer({
    configFile,
    port: 0,
    dynamodb: { endpoint, region: 'local', credentialsConfigured: false },
    tablePrefix: 'bench-scale',
    logSink: (line) => lines.push(JSON.parse(line)),
    // A container serves requests; the index jobs are the bench's own server's.
    runIndexJobs: false,
  });
  // The caller here is this process too: its first fetch loads Node's HTTP client (tens of milliseconds), which a
  // caller pays once, not per container. A request outside the service first, so the figure is the container's.
  await (await fetch(`${server.url}/health`)).text();
  const answer = await sql(caller(server.url, lines));
  delete answer.data;
  process.stdout.write(`${JSON.stringify(answer)}\n`);
  await server.close();
  // The local server's warm hook workers would keep the process alive.
  process.exit(0);
}

/** The resident set as /proc/self/smaps splits it (Linux; undefined elsewhere), MiB. */
interface ResidentSplit {
  rss: number;
  anonymous: number;
  fileBacked: number;
  /** Of the mapped files, the embedded store's LevelDB table files (`*.ldb`). */
  storeFiles: number;
  /** glibc's thread arenas: anonymous mappings of 64 MiB reserved at a 64 MiB boundary. */
  arenas: number;
  arenaResident: number;
}

const ARENA_BYTES = 64 * 1024 * 1024;

function residentSplit(): ResidentSplit | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return undefined;
  }
  const mappings: { start: number; end: number; perms: string; name: string; rssKiB: number; anonKiB: number }[] = [];
  for (const entry of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(entry);
    if (head) {
      const [, start, end, perms, name] = head as unknown as [string, string, string, string, string];
      mappings.push({
        start: Number.parseInt(start, 16),
        end: Number.parseInt(end, 16),
        perms,
        name,
        rssKiB: 0,
        anonKiB: 0,
      });
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(entry);
    const current = mappings.at(-1);
    if (field && current) current[field[1] === 'Rss' ? 'rssKiB' : 'anonKiB'] = Number(field[2]);
  }
  let arenas = 0;
  let arenaKiB = 0;
  mappings.forEach((m, i) => {
    if (m.name !== '' || m.perms !== 'rw-p' || m.start % ARENA_BYTES !== 0) return;
    const next = mappings[i + 1];
    const end = next && next.start === m.end && next.perms === '---p' ? next.end : m.end;
    if (end - m.start !== ARENA_BYTES) return;
    arenas += 1;
    arenaKiB += m.rssKiB;
  });
  const sum = (pick: (m: (typeof mappings)[number]) => number) => mappings.reduce((total, m) => total + pick(m), 0);
  const mib = (kib: number) => Math.round(kib / 1024);
  const rss = sum((m) => m.rssKiB);
  const anonymous = sum((m) => m.anonKiB);
  return {
    rss: mib(rss),
    anonymous: mib(anonymous),
    fileBacked: mib(rss - anonymous),
    storeFiles: mib(sum((m) => (m.name.endsWith('.ldb') ? m.rssKiB : 0))),
    arenas,
    arenaResident: mib(arenaKiB),
  };
}

function splitCell(split: ResidentSplit | undefined): string {
  return split
    ? `${split.rss}: ${split.anonymous} anonymous (${split.arenaResident} in ${split.arenas} arenas) / ${split.fileBacked} mapped files (${split.storeFiles} the store's tables)`
    : 'n/a (Linux only)';
}

interface Row {
  size: number;
  loadSeconds: number;
  rate: number;
  wuPerRecord: number;
  cells: Record<string, string>;
  cpuMsPerRecord: number;
  changeLogSeconds: number;
  rssMiB: number;
  heapMiB: number;
  heapCommittedMiB: number;
  externalMiB: number;
  beforeSql?: ResidentSplit;
  atEnd?: ResidentSplit;
}

export async function run(): Promise<void> {
  const sizes = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
  const configFile = path.join(os.tmpdir(), `bench-scale-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const onDisk = process.env.BENCH_SCALE_STORE !== 'memory';
  const dataDir = onDisk ? mkdtempSync(path.join(os.tmpdir(), 'bench-scale-')) : undefined;
  const lines: Record<string, unknown>[] = [];
  // The server's own embedded store, with its stream twin: the change log and the folds beside the writes run as
  // in `npm start`; a fresh container reaches the same store at its endpoint.
  const server = await startLocalServer({
    configFile,
    port: 0,
    ...(dataDir ? { dataDir } : {}),
    tablePrefix: 'bench-scale',
    logSink: (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      // Keep what the figures need: the request log lines, not one per loaded batch forever.
      if (parsed.requestId) lines.push(parsed);
      if (parsed.errorCode === 3001) process.stderr.write(`${line}\n`);
      if (lines.length > 5000) lines.splice(0, 2500);
    },
  });
  const call = caller(server.url, lines);
  const started = Date.now();
  const load = { before: loadavg()[0] as number };
  const rows: Row[] = [];
  let held = 0;
  let groups = 0;
  try {
    for (const size of sizes) {
      // Load up to `size` through batch-create, a few batches at a time.
      const loadStarted = performance.now();
      const cpuBefore = process.cpuUsage();
      let writeUnits = 0;
      const loaded = size - held;
      while (held < size) {
        const batches: Promise<Answer>[] = [];
        for (let b = 0; b < PARALLEL_BATCHES && held < size; b++) {
          const count = Math.min(BATCH, size - held);
          const from = held;
          held += count;
          const paramList = Array.from({ length: count }, (_, k) => order(from + k));
          batches.push(createBatch(call, paramList, `scale-${from}`));
        }
        if (held % 100_000 < BATCH * PARALLEL_BATCHES) progress(`${held} records`);
        for (const answer of await Promise.all(batches)) {
          if (answer.errorCode) throw new Error(`batch-create failed: ${answer.errorCode} ${answer.errorMsg}`);
          writeUnits += answer.writeUnits;
        }
        // Lists go on while the dataset grows, as in a live service.
        groups += 1;
        if (groups % LIST_EVERY_GROUPS === 0) await call('/openapi/data/get-list', { paramMap: { status: 'paid' } });
      }
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const cpuMsPerRecord = (cpu.user + cpu.system) / 1000 / loaded;
      progress(`${size} records loaded in ${loadSeconds.toFixed(0)} s`);
      // The change log's writer runs behind a bulk load (one event per record): measured until it has caught up.
      const changeLogStarted = performance.now();
      await server.changesSettled();
      const changeLogSeconds = (performance.now() - changeLogStarted) / 1000;
      progress(`change log caught up ${changeLogSeconds.toFixed(0)} s after the load`);
      // The last batches settle (30 s and the check's 5 s), and the folds beside the writes fold them in.
      await new Promise((resolve) => setTimeout(resolve, 36_000));
      await server.changesSettled();
      const cells: Record<string, string> = {};
      cells.firstAfterLoad = cell(await call('/openapi/data/get-list', { paramMap: { status: 'paid' } }));
      // The same request as the 1 % range measured below, so that the first call compares with the next ones.
      const onePercentByAmount = {
        paramMap: { amount_start: 1000, amount_end: 1099.99, ytSortList: [{ amount: 'asc' }] },
      };
      cells.firstAfterLoadAmount = cell(await call('/openapi/data/get-list', onePercentByAmount));
      cells.unfiltered = cell(await sampled(call, '/openapi/data/get-list', { paramMap: { pageSize: 20 } }));
      cells.deep = cell(await sampled(call, '/openapi/data/get-list', { paramMap: { pageSize: 20, currentPage: 50 } }));
      const first = await call('/openapi/data/get-list', { paramMap: { pageSize: 1 } });
      const id = ((first.data?.tableData as { id: string }[] | undefined)?.[0] ?? { id: '' }).id;
      cells.getOne = cell(await sampled(call, '/openapi/data/get-one', { paramMap: { id } }));
      cells.equality = cell(await sampled(call, '/openapi/data/get-list', { paramMap: { status: 'paid' } }));
      cells.hot = cell(await sampled(call, '/openapi/data/get-list', { paramMap: { status: 'new' } }));
      cells.range = cell(await sampled(call, '/openapi/data/get-list', onePercentByAmount));
      cells.rangeNewest = cell(
        await sampled(call, '/openapi/data/get-list', { paramMap: { amount_start: 1000, amount_end: 1099.99 } }),
      );
      cells.tenth = cell(
        await sampled(call, '/openapi/data/get-list', {
          paramMap: { amount_start: 1000, amount_end: 1999.99, ytSortList: [{ amount: 'asc' }] },
        }),
      );
      cells.half = cell(
        await sampled(call, '/openapi/data/get-list', { paramMap: { amount_start: 0, amount_end: 4999.99 } }),
      );
      progress('lists measured');
      (globalThis as { gc?: () => void }).gc?.();
      const beforeSql = residentSplit();
      cells.sqlFirst = cell(await sql(call));
      cells.sqlWarm = cell(await sql(call));
      for (let i = 0; i < 1000; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, k) => call('/openapi/data/create', { paramMap: order(held + i + k) })),
        );
      }
      held += 1000;
      progress('custom SQL after 1,000 creates');
      cells.sqlAfterWrites = cell(await sql(call));
      cells.sqlFresh = cell(await inFreshContainer(server.store.endpoint, configFile));
      // With `node --expose-gc` (NODE_OPTIONS), the heap is measured after a full collection: what is held, not
      // what is garbage not yet collected.
      (globalThis as { gc?: () => void }).gc?.();
      const memory = process.memoryUsage();
      const atEnd = residentSplit();
      const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
      rows.push({
        size,
        loadSeconds,
        rate: loaded / loadSeconds,
        wuPerRecord: writeUnits / loaded,
        cpuMsPerRecord,
        changeLogSeconds,
        cells,
        rssMiB: mib(memory.rss),
        heapMiB: mib(memory.heapUsed),
        heapCommittedMiB: mib(memory.heapTotal),
        externalMiB: mib(memory.external),
        ...(beforeSql ? { beforeSql } : {}),
        ...(atEnd ? { atEnd } : {}),
      });
      process.stdout.write(`${JSON.stringify(rows.at(-1))}\n`);
    }
  } finally {
    await server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  const minutes = (Date.now() - started) / 60_000;
  const header = `| | ${rows.map((r) => r.size.toLocaleString('en-US')).join(' | ')} |`;
  const line = (label: string, value: (row: Row) => string) => `| ${label} | ${rows.map(value).join(' | ')} |`;
  const markdown = [
    '### At scale',
    '',
    `Measured by \`npm run bench -- scale\` in one run of ${minutes.toFixed(1)} minutes on ${cpus().length} cores (load average ${load.before.toFixed(1)} when it began, ${(loadavg()[0] as number).toFixed(1)} when it ended: the machine is shared, so milliseconds vary with what else runs). One \`orders\` dataset (8 fields; \`customer\`, \`amount\`, \`status\` indexed; \`status\` four values, a quarter \`new\`) grown through batch-create of 1,000 records, ${PARALLEL_BATCHES} at a time, to each size (a list of \`status = paid\` every ${(LIST_EVERY_GROUPS * BATCH * PARALLEL_BATCHES).toLocaleString('en-US')} records, as lists go on in a live service), then 36 s for the last writes to settle and the folds beside the writes to finish; the local service over HTTP as \`npm start\` runs it (${onDisk ? 'its embedded store in a data directory' : 'its embedded store in memory'}, with the change stream and the change log's writer in the same process). Read units and times are the request log's; a list figure is the median of ${SAMPLES} calls after one more. Write units per record are the request log's: the embedded store leaves index writes out (in DynamoDB add one per indexed field per record).`,
    '',
    header,
    `|---|${rows.map(() => '---').join('|')}|`,
    line('load: records per second', (r) => Math.round(r.rate).toLocaleString('en-US')),
    line('load: write units per record (request log)', (r) => r.wuPerRecord.toFixed(3)),
    line('load: CPU time of the process per record, ms', (r) => r.cpuMsPerRecord.toFixed(2)),
    line("the change log's writer caught up, seconds after the load", (r) => r.changeLogSeconds.toFixed(0)),
    line('get-list, first page of 20', (r) => r.cells.unfiltered as string),
    line('get-list, page 50', (r) => r.cells.deep as string),
    line('get-one', (r) => r.cells.getOne as string),
    line(
      'get-list `status = paid`, the first list once the load settled (and was folded beside the writes)',
      (r) => r.cells.firstAfterLoad as string,
    ),
    line(
      'the same for `amount` 1,000–1,099.99 sorted by amount (the first call of the 1 % row below)',
      (r) => r.cells.firstAfterLoadAmount as string,
    ),
    line('get-list `status = paid`, exact total', (r) => r.cells.equality as string),
    line('get-list `status = new` (the hot value), exact total', (r) => r.cells.hot as string),
    line('get-list `amount` 1,000–1,099.99 (1 %), sorted by amount', (r) => r.cells.range as string),
    line(
      'get-list `amount` 1,000–1,099.99 (1 %), newest first (the default order: every matching key is read)',
      (r) => r.cells.rangeNewest as string,
    ),
    line('get-list `amount` 1,000–1,999.99 (10 %), sorted by amount', (r) => r.cells.tenth as string),
    line('get-list `amount` 0–4,999.99 (half of the records)', (r) => r.cells.half as string),
    line('custom SQL `GROUP BY status`, first call', (r) => r.cells.sqlFirst as string),
    line('the same, warm, no writes since', (r) => r.cells.sqlWarm as string),
    line('the same after 1,000 single creates', (r) => r.cells.sqlAfterWrites as string),
    line('the same in a freshly started container', (r) => r.cells.sqlFresh as string),
    line('process memory (service and embedded store), MiB', (r) => String(r.rssMiB)),
    line(
      `of which JavaScript heap in use${'gc' in globalThis ? ' after a full collection' : ''} / committed / outside it (external), MiB`,
      (r) => `${r.heapMiB} / ${r.heapCommittedMiB} / ${r.externalMiB}`,
    ),
    line('resident set once the lists are measured, before custom SQL, MiB', (r) => splitCell(r.beforeSql)),
    line('resident set at the end, MiB', (r) => splitCell(r.atEnd)),
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  writeSection('scale', markdown);
}

if (process.argv[2] === '--container') {
  container(process.argv[3] as string, process.argv[4] as string).catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
