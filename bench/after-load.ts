/**
 * `npm run bench -- after-load`: what lists cost right after a bulk load, before anything has settled, and how long
 * `npm start` takes to start again over the loaded store. The local service as `npm start` runs it (its embedded
 * store in a temporary data directory, the change log and the folds in the same process), two datasets of the scale
 * benchmark's `orders` fields (`customer`, `amount`, `status` indexed) loaded in one run through batch-create
 * (BENCH_AFTER_LOAD_RECORDS each, default 100,000; batches of 1,000, 4 at a time, no list during the load):
 * - `counted`: as the service applies a new dataset now, its record count started at zero when the configuration
 *   first named it;
 * - `uncounted`: the same with that first checkpoint removed before the load, as every dataset was before: its first
 *   count reads the whole partition.
 * Right after each load (no wait): page 1 with its total, page 50, `status = paid` and the `amount` 1 % range sorted
 * by amount, each asked twice (first, second), and before them what the totals have to read beyond their pages: per
 * slot, the batches the folds have not reached and the bytes of their claims and values items. Then the server is closed and started again on the same data
 * directory, in the same process: the time until it serves (its handlers keep the clients they bound to the first
 * server's store, so no request is made to it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalServer } from '../bin/local-server';
import { createDocumentClient, endpointClientConfig } from '../shared/aws/dynamodb';
import { datasetCounterKey } from '../shared/storage/item-keys';
import { backlogLine, slotBacklogs } from './after-load-backlog';
import { writeSection } from './report';
import { type Answer, loadThroughBatchCreate, requestLines, signedCaller } from './signed-calls';

const APP = { appCode: 'app-load', accessKey: 'ak-after-load-0001', secret: 'sk-after-load-secret' };
const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const FIELDS = [
  { name: 'customer', type: 'string', indexed: true },
  { name: 'amount', type: 'number', indexed: true },
  { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
  { name: 'note', type: 'text' },
];
const DATASETS = ['counted', 'uncounted'] as const;
const CONFIG = {
  applications: [
    {
      appCode: APP.appCode,
      name: 'after-load',
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      quota: { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 100 },
      grants: DATASETS.map((datasetCode) => ({ datasetCode, operations: ['read', 'create'] })),
    },
  ],
  datasets: DATASETS.map((datasetCode) => ({ appCode: APP.appCode, datasetCode, name: datasetCode, fields: FIELDS })),
};

function cell(answer: Answer): string {
  const units = `${Math.round(answer.readUnits * 10) / 10} RU, ${Math.round(answer.ms)} ms`;
  return answer.errorCode === undefined ? units : `**${answer.errorCode}** (${units})`;
}

function progress(text: string): void {
  process.stderr.write(`[after-load ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

const LISTS: [string, Record<string, unknown>][] = [
  ['page 1 of 20 with its total', { pageSize: 20 }],
  ['page 50', { pageSize: 20, currentPage: 50 }],
  ['`status = paid`', { status: 'paid' }],
  [
    '`amount` 1 % range, sorted by amount',
    { amount_start: 1000, amount_end: 1099.99, ytSortList: [{ amount: 'asc' }] },
  ],
];

export async function run(): Promise<void> {
  const size = Number(process.env.BENCH_AFTER_LOAD_RECORDS ?? 100_000);
  const configFile = path.join(os.tmpdir(), `bench-after-load-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-after-load-'));
  const { lines, sink } = requestLines();
  const options = { configFile, port: 0, dataDir, tablePrefix: 'bench-after-load', logSink: sink };
  const load = loadavg()[0] as number;
  let server = await startLocalServer(options);
  const call = signedCaller(APP, () => server, lines);
  const cells: Record<string, Record<string, string>> = { counted: {}, uncounted: {} };
  let restartSeconds = 0;
  const backlogs: string[] = [];
  try {
    // The dataset as it was before a new dataset's count started at zero: no first checkpoint.
    const store = createDocumentClient(new DynamoDBClient(endpointClientConfig(server.store.endpoint, 'local', false)));
    await store.send(new DeleteCommand({ TableName: 'bench-after-load-records', Key: datasetCounterKey('uncounted') }));
    for (const datasetCode of ['uncounted', 'counted'] as const) {
      const started = performance.now();
      await loadThroughBatchCreate(
        size,
        (i) => ({
          customer: `cust-${String(i % 5000).padStart(5, '0')}`,
          amount: ((i * 7919) % 1_000_000) / 100,
          status: STATUSES[i % 4],
          note: `line ${i}`,
        }),
        (paramList, key) => call(datasetCode, '/openapi/data/batch-create', { paramList }, { 'Idempotency-Key': key }),
        datasetCode,
      );
      progress(`${datasetCode}: ${size} records in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      backlogs.push(backlogLine(datasetCode, await slotBacklogs(store, 'bench-after-load-records', datasetCode)));
      for (const [label, paramMap] of LISTS) {
        const first = await call(datasetCode, '/openapi/data/get-list', { paramMap });
        const second = await call(datasetCode, '/openapi/data/get-list', { paramMap });
        (cells[datasetCode] as Record<string, string>)[label] = `${cell(first)}; ${cell(second)}`;
      }
    }
    store.destroy();
    await server.close();
    const restarted = performance.now();
    server = await startLocalServer(options);
    restartSeconds = (performance.now() - restarted) / 1000;
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configFile, { force: true });
  }
  const out = [
    `Right after a batch-create load of ${size.toLocaleString('en-US')} records into each of two datasets (4 batches of 1,000 at a time, no list during the load, nothing waited for), the local service as \`npm start\` runs it, in one run; each list asked twice (first; second):`,
    '',
    '| list | dataset counted from its creation | dataset without its first checkpoint (as before) |',
    '|---|---|---|',
    ...LISTS.map(([label]) => `| ${label} | ${cells.counted?.[label]} | ${cells.uncounted?.[label]} |`),
    '',
    'What the totals had to read beyond their pages when the lists began, per indexed field:',
    '',
    ...backlogs.map((line) => `- ${line}`),
    '',
    `The local server started again over the store of ${(2 * size).toLocaleString('en-US')} records (in the same process, so without loading its modules again): serving after ${restartSeconds.toFixed(1)} s.`,
    `Machine: ${cpus().length} cores, load ${load.toFixed(2)} at the start (shared with other work).`,
  ].join('\n');
  process.stdout.write(`${out}\n`);
  writeSection('after-load', out);
}
