/**
 * `npm run bench -- reindex`: building one index online over stored records (docs/interface.md §17), on the
 * local server and its embedded store, at 10k and 100k records (`BENCH_SIZES` to change them):
 *
 * - the build: records per second and read/write units per record, with the settings `npm start` uses (its pace
 *   of 1,000 writes a second, 2 segments at once, pages of 200);
 * - the API meanwhile: get-list p50/p99 latency and read units per request over HTTP, during the build and, in the
 *   same run, with no build going.
 *
 * The records are written straight into the table (as the list benchmark seeds them) under a configuration
 * without the index, then a configuration that indexes `items` is applied as `npm start` applies it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ulid } from 'ulid';
import { startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import { createDocumentClient, endpointClientConfig } from '../shared/aws/dynamodb';
import { Catalog } from '../shared/catalog/catalog';
import type { CatalogConfig } from '../shared/catalog/schema';
import { applyConfiguration, readDeployedCatalog } from '../shared/catalog-store/catalog-store';
import { createIndexJobs, INDEX_JOB_PAGE_SIZE, RECORDS_PER_SEGMENT } from '../shared/composition/index-job-task';
import type { SegmentRef } from '../shared/indexing/index-jobs';
import { validateChanges } from '../shared/records/record-codec';
import { formatTimestamp } from '../shared/records/timestamps';
import { environment } from '../shared/runtime/environment';
import { withDerivedAttributes } from '../shared/storage/index-attributes';
import { datasetPartitionKey } from '../shared/storage/item-keys';
import { RecordAttr } from '../shared/storage/table-definitions';
import { writeSection } from './report';
import { putAll } from './seed';

const APP = { appCode: 'app-bench', accessKey: 'ak-bench-reindex', secret: 'sk-bench-reindex-secret' };

/** One dataset per size (`orders_<size>`); `indexed` names those whose `items` is indexed. */
function configuration(sizes: readonly number[], indexed: ReadonlySet<number>): CatalogConfig {
  return {
    timeZone: 'UTC',
    applications: [
      {
        appCode: APP.appCode,
        accessKey: APP.accessKey,
        signingSecret: APP.secret,
        quota: { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 64 },
        grants: sizes.map((size) => ({ datasetCode: datasetOf(size), operations: ['read', 'create', 'update'] })),
      },
    ],
    datasets: sizes.map((size) => ({
      appCode: APP.appCode,
      datasetCode: datasetOf(size),
      fields: [
        { name: 'customer', type: 'string', indexed: true },
        { name: 'amount', type: 'number', indexed: true },
        { name: 'status', type: 'enum', options: ['new', 'paid', 'shipped'], indexed: true },
        { name: 'items', type: 'integer', ...(indexed.has(size) ? { indexed: true } : {}) },
        { name: 'note', type: 'text' },
      ],
    })),
  } as CatalogConfig;
}

const datasetOf = (size: number) => `orders_${size}`;

/** `npm start`'s index job settings (bin/local-server.ts). */
const LOCAL_SETTINGS = { writesPerSecond: 1_000, concurrency: 2, maxSegments: 8 };

/** The get-list the API keeps answering while the index builds: an indexed filter sorted by an indexed field. */
const LIST_BODY = { status: 'paid', ytSortList: [{ amount: 'desc' }], pageSize: 20 };

function signedHeaders(datasetCode: string): Record<string, string> {
  const timeStamp = String(Date.now());
  return {
    'Content-Type': 'application/json',
    'X-Time-Stamp': timeStamp,
    'X-App-Code': APP.appCode,
    'X-Dataset-Code': datasetCode,
    'X-Token': signRequest({ ...APP, datasetCode, timeStamp }, APP.secret),
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

interface ListFigures {
  requests: number;
  p50: number;
  p99: number;
  unitsPerRequest: number;
}

export async function run(): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
  const rows: string[] = [];
  const lists: string[] = [];
  // One server for every size (a process is one container: a second server in it would reuse the first one's
  // clients), one dataset per size, each indexed in turn.
  const bench = await startBench(sizes);
  try {
    for (const size of sizes) {
      const figures = await bench.measure(size);
      rows.push(
        `| ${size.toLocaleString('en-US')} | ${figures.seconds.toFixed(1)} | ${Math.round(size / figures.seconds)} | ` +
          `${(figures.readUnits / size).toFixed(3)} | ${(figures.writeUnits / size).toFixed(2)} (+1 index entry) |`,
      );
      const line = (label: string, f: ListFigures) =>
        `| ${size.toLocaleString('en-US')} | ${label} | ${f.requests} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} | ${f.unitsPerRequest.toFixed(1)} |`;
      lists.push(line('no build', figures.idle), line('during the build', figures.building));
      process.stdout.write(`${rows.at(-1)}\n${lists.at(-2)}\n${lists.at(-1)}\n`);
    }
  } finally {
    await bench.close();
  }
  writeSection(
    'reindex',
    `### Building an index online (\`npm run bench -- reindex\`)

One field (\`items\`) becomes \`indexed\` under stored records; \`npm start\`'s index job settings (at most
${LOCAL_SETTINGS.writesPerSecond.toLocaleString('en-US')} writes a second, ${LOCAL_SETTINGS.concurrency} segments at once, pages of ${INDEX_JOB_PAGE_SIZE}), on the embedded store.
Units as the store reports them; DynamoDB also bills one write per record for the new index entry, which the
embedded store leaves out.

| Records | Build (s) | Records/s | Read units per record | Write units per record |
|---:|---:|---:|---:|---:|
${rows.join('\n')}

The API meanwhile, in the same run: \`status = paid\` sorted by \`amount\` desc, one request at a time over HTTP
(signature, quota, the whole pipeline), with no build going and then while the build runs in the same process.

| Records | | Requests | p50 (ms) | p99 (ms) | Read units per request |
|---:|---|---:|---:|---:|---:|
${lists.join('\n')}`,
  );
}

async function startBench(sizes: readonly number[]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'das-bench-reindex-'));
  const configFile = path.join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(configuration(sizes, new Set())));
  const units = new Map<string, number>();
  const server = await startLocalServer({
    configFile,
    dataDir: dir,
    port: 0,
    runIndexJobs: false,
    logSink: (line) => {
      const entry = JSON.parse(line) as { operation?: string; requestId?: string; readUnits?: number };
      if (entry.operation === 'get-list' && entry.requestId) units.set(entry.requestId, entry.readUnits ?? 0);
    },
  });
  const env = environment();
  const client = createDocumentClient(
    new DynamoDBClient(endpointClientConfig(env.dynamodbEndpoint as string, 'local', false)),
  );
  const tables = { catalog: env.catalogTable, records: env.recordsTable };
  const indexed = new Set<number>();

  const measure = async (size: number) => {
    const datasetCode = datasetOf(size);
    const applied = await readDeployedCatalog(client, tables.catalog);
    if (!applied) throw new Error('the local server applied no configuration');
    const dataset = new Catalog(
      applied.config,
      applied.functionVersions,
      applied.deployedAt ?? 0,
      applied.indexes,
    ).dataset(datasetCode);
    if (!dataset) throw new Error(`no dataset ${datasetCode}`);
    await putAll(client, tables.records, seedItems(dataset, size));

    const list = async (until: () => boolean, minimum: number): Promise<ListFigures> => {
      const times: number[] = [];
      const ids: string[] = [];
      while (times.length < minimum || !until()) {
        const t0 = performance.now();
        const response = await fetch(`${server.url}/openapi/data/get-list`, {
          method: 'POST',
          headers: signedHeaders(datasetCode),
          body: JSON.stringify({ appCode: APP.appCode, datasetCode, paramMap: LIST_BODY }),
        });
        const answer = (await response.json()) as { success: boolean };
        times.push(performance.now() - t0);
        if (!answer.success) throw new Error(`get-list failed: ${JSON.stringify(answer)}`);
        const id = response.headers.get('x-request-id');
        if (id) ids.push(id);
      }
      const sorted = [...times].sort((a, b) => a - b);
      const spent = ids.reduce((sum, id) => sum + (units.get(id) ?? 0), 0);
      return {
        requests: times.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        unitsPerRequest: spent / ids.length,
      };
    };

    // Warm the handlers and the count checkpoint, then the API with no build going.
    await list(() => true, 20);
    const idle = await list(() => true, 300);

    indexed.add(size);
    await applyConfiguration(client, tables, configuration(sizes, indexed), { settleMs: 0 });
    const jobs = createIndexJobs(client, tables, {
      ...LOCAL_SETTINGS,
      recordsPerSegment: RECORDS_PER_SEGMENT,
      pageSize: INDEX_JOB_PAGE_SIZE,
      settleMs: 0,
      isRunning: async () => false,
    });
    let readUnits = 0;
    let writeUnits = 0;
    let finished = false;
    const t0 = performance.now();
    const build = (async () => {
      for (;;) {
        const step = await jobs.next('bench');
        if (step.action === 'done') break;
        if (step.action === 'wait') throw new Error('the bench applies with no settle window: nothing should wait');
        const queue: SegmentRef[] = [...step.segments];
        const worker = async () => {
          for (let ref = queue.shift(); ref; ref = queue.shift()) {
            const result = await jobs.runSegment(ref, 60_000);
            readUnits += result.meter.readUnits;
            writeUnits += result.meter.writeUnits;
            if (!result.done) queue.push(ref);
          }
        };
        await Promise.all(Array.from({ length: LOCAL_SETTINGS.concurrency }, worker));
        await jobs.finish(step.jobId, 60_000);
      }
      finished = true;
    })();
    const building = await list(() => finished, 20);
    await build;
    const seconds = (performance.now() - t0) / 1000;
    return { seconds, readUnits, writeUnits, idle, building };
  };

  return {
    measure,
    close: async () => {
      client.destroy();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Records of about 200 bytes, ids one millisecond apart from 30 days ago (settled for the count checkpoint). */
function seedItems(dataset: NonNullable<ReturnType<Catalog['dataset']>>, size: number): Record<string, unknown>[] {
  const startMs = Date.now() - 30 * 24 * 3600 * 1000;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < size; i++) {
    const ms = startMs + i * 10;
    const id = ulid(ms);
    const fields = {
      customer: `cust-${i % 997}`,
      amount: (i * 7919) % 100_000,
      status: ['new', 'paid', 'shipped'][i % 3],
      items: i % 13,
      note: `order ${i} with a note of some length to make the record about two hundred bytes`,
    };
    const changes = withDerivedAttributes(dataset, id, validateChanges(dataset, fields, 'create'), 'create');
    const stamp = formatTimestamp(new Date(ms), 'UTC');
    items.push({
      ...changes.set,
      gmt_create: stamp,
      gmt_modified: stamp,
      [RecordAttr.partitionKey]: datasetPartitionKey(dataset.datasetCode),
      [RecordAttr.sortKey]: id,
    });
  }
  return items;
}
