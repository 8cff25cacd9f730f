/**
 * Custom SQL latency: an aggregate with GROUP BY over 1k, 10k and 100k synthetic rows through the dataset
 * cache and the sql.js engine. `cold` is a dataset seen for the first time (rows turned into a table, copied to
 * the worker and loaded into SQLite); `warm` is the same query again on unchanged data (both caches hit);
 * `reload` is a warm container whose worker was replaced (after a stopped query): rows come from the cache
 * but are loaded into SQLite again. These three read the rows from memory; a second table measures the cold
 * query as a container really runs it, reading the dataset from the records table (dynalite) through the record
 * store, with the read units it costs.
 *
 * Run: npm run bench -- sql (sizes of the DynamoDB table: BENCH_SQL_DYNAMO_SIZES, default 1000,10000)
 */
import { performance } from 'node:perf_hooks';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTables, localTableNames, startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { Catalog, toDataset } from '../shared/catalog/catalog';
import type { FieldConfig } from '../shared/catalog/schema';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { DatasetBookkeeping } from '../shared/records/dataset-bookkeeping';
import { withDerivedAttributes } from '../shared/records/index-attributes';
import { datasetPartitionKey } from '../shared/records/item-keys';
import { ListReader } from '../shared/records/list-reader';
import { validateChanges } from '../shared/records/record-codec';
import { RecordAttr } from '../shared/records/table-definitions';
import { DatasetCache, type DatasetRecord, type DatasetRowSource } from '../shared/sql/dataset-cache';
import { RecordStoreRowSource } from '../shared/sql/record-store-row-source';
import { SqlJsEngine } from '../shared/sql/sqljs-engine';

const SIZES = [1_000, 10_000, 100_000];
const WARM_RUNS = 30;
const COLD_RUNS = 3;
const GOAL_WARM_10K_MS = 50;

const fields: FieldConfig[] = [
  { name: 'region', type: 'enum', options: ['EU', 'US', 'APAC', 'LATAM', 'MEA', 'NA', 'UK', 'CN'] },
  { name: 'customer', type: 'string' },
  { name: 'amount', type: 'number' },
  { name: 'quantity', type: 'integer' },
  { name: 'paid', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'meta', type: 'json' },
];

const SQL =
  'SELECT region, count(*) AS orders, sum(amount) AS total, avg(quantity) AS avgQuantity ' +
  'FROM orders WHERE amount >= #{minAmount} AND paid = #{paid} GROUP BY region ORDER BY total DESC';

function syntheticOrders(count: number): DatasetRecord[] {
  const regions = ['EU', 'US', 'APAC', 'LATAM', 'MEA', 'NA', 'UK', 'CN'];
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  return Array.from({ length: count }, (_, i) => ({
    id: `01HZ${String(i).padStart(22, '0')}`,
    region: regions[i % regions.length],
    customer: `customer-${Math.floor(random() * 5_000)}`,
    amount: Math.round(random() * 100_000) / 100,
    quantity: 1 + Math.floor(random() * 20),
    paid: random() < 0.7,
    day: `2024-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    meta: { channel: i % 3 === 0 ? 'web' : 'shop', tags: ['a', 'b'] },
    gmt_create: '2024-01-01 10:00:00',
    gmt_modified: '2024-01-01 10:00:00',
  }));
}

/** An in-memory row source whose version can be bumped, to force a cold load. */
class MemorySource implements DatasetRowSource {
  versionNumber = 1;
  constructor(private readonly rows: DatasetRecord[]) {}
  async version(): Promise<number> {
    return this.versionNumber;
  }
  async readRows(_datasetCode: string, request: { limit: number }): Promise<DatasetRecord[]> {
    return this.rows.slice(0, request.limit);
  }
}

async function time(action: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function run(): Promise<void> {
  const respawns: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const fresh = new SqlJsEngine();
    respawns.push(await time(() => fresh.warm()));
    await fresh.close();
  }

  const view = { datasetCode: 'orders', fields };
  const params = { minAmount: 100, paid: true };
  const lines: string[][] = [];

  for (const size of SIZES) {
    // A fresh engine per size, as a new container would have: figures do not depend on the sizes run before.
    const engine = new SqlJsEngine();
    await engine.warm();
    const source = new MemorySource(syntheticOrders(size));
    const cache = new DatasetCache();
    const query = async () =>
      engine.run({ tables: await cache.tables([view], source), sql: SQL, params, timeoutMs: 20_000 });

    const cold: number[] = [];
    for (let i = 0; i < COLD_RUNS; i += 1) {
      source.versionNumber += 1;
      cold.push(await time(query));
    }
    // A few unmeasured runs first, so the figures show a steady state rather than the JIT warming up.
    for (let i = 0; i < 3; i += 1) await query();
    const warm: number[] = [];
    for (let i = 0; i < WARM_RUNS; i += 1) warm.push(await time(query));

    const reload: number[] = [];
    for (let i = 0; i < COLD_RUNS; i += 1) {
      await engine.close(); // the next query starts a new worker, as after a stopped query
      await engine.warm();
      reload.push(await time(query));
    }
    const check = await query();
    lines.push([
      size.toLocaleString('en-US'),
      median(cold).toFixed(1),
      median(warm).toFixed(2),
      percentile(warm, 95).toFixed(2),
      median(reload).toFixed(1),
      String(check.rows.length),
    ]);
    await engine.close();
  }

  const header = ['rows', 'cold ms (median)', 'warm ms (median)', 'warm ms (p95)', 'reload ms (median)', 'groups'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ')} |`;
  console.log(
    `custom SQL: aggregate with GROUP BY (node ${process.version}, ${WARM_RUNS} warm runs, ${COLD_RUNS} cold)`,
  );
  console.log(format(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const line of lines) console.log(format(line));
  console.log(`worker start (spawn + WASM compile + first statement): median ${median(respawns).toFixed(1)} ms`);
  await coldFromDynamo();
  const warm10k = Number(lines[1]?.[2]);
  console.log(
    `goal: warm at 10k <= ${GOAL_WARM_10K_MS} ms: ${warm10k <= GOAL_WARM_10K_MS ? 'met' : 'NOT met'} (${warm10k} ms)`,
  );
}

/**
 * The cold query as a container runs it: the dataset's rows read from the records table through the record store
 * (items in the layout the create operation writes), then loaded into the engine.
 */
async function coldFromDynamo(): Promise<void> {
  const sizes = (process.env.BENCH_SQL_DYNAMO_SIZES ?? '1000,10000').split(',').map(Number);
  const dynamo = await startEmbeddedDynamo();
  const names = localTableNames('bench-sql');
  await ensureTables(dynamo.client, names);
  const doc = createDocumentClient(dynamo.client);
  const reader = new ListReader(doc, names.Records as string);
  const bookkeeping = new DatasetBookkeeping(doc, names.Records as string);
  const rows: string[][] = [];
  try {
    for (const size of sizes) {
      const datasetCode = `orders_${size}`;
      const config = { appCode: 'bench', datasetCode, fields };
      const dataset = toDataset(config);
      const catalog = new Catalog({ applications: [], datasets: [config] });
      const items = syntheticOrders(size).map((record) => {
        const { id, gmt_create, gmt_modified, ...values } = record;
        const changes = withDerivedAttributes(
          dataset,
          id as string,
          validateChanges(dataset, values, 'create'),
          'create',
        );
        return {
          ...changes.set,
          gmt_create,
          gmt_modified,
          [RecordAttr.partitionKey]: datasetPartitionKey(datasetCode),
          [RecordAttr.sortKey]: id,
        };
      });
      for (let i = 0; i < items.length; i += 25) {
        let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
        while (pending.length > 0) {
          const result = await doc.send(
            new BatchWriteCommand({ RequestItems: { [names.Records as string]: pending } }),
          );
          pending = (result.UnprocessedItems?.[names.Records as string] ?? []) as typeof pending;
        }
      }
      const engine = new SqlJsEngine();
      await engine.warm();
      const meter = new CapacityMeter();
      const source = new RecordStoreRowSource(reader, bookkeeping, catalog, meter);
      const cache = new DatasetCache();
      const view = { datasetCode, fields };
      const sql = SQL.replace('FROM orders', `FROM ${datasetCode}`);
      const params = { minAmount: 100, paid: true };
      const cold = await time(async () =>
        engine.run({ tables: await cache.tables([view], source), sql, params, timeoutMs: 20_000 }),
      );
      const coldUnits = meter.readUnits;
      const warmMeter = new CapacityMeter();
      const warmSource = new RecordStoreRowSource(reader, bookkeeping, catalog, warmMeter);
      const warm = await time(async () =>
        engine.run({ tables: await cache.tables([view], warmSource), sql, params, timeoutMs: 20_000 }),
      );
      rows.push([
        size.toLocaleString('en-US'),
        cold.toFixed(0),
        String(coldUnits),
        warm.toFixed(1),
        String(warmMeter.readUnits),
      ]);
      await engine.close();
    }
  } finally {
    await dynamo.close();
  }
  console.log('\ncustom SQL, rows read from the records table (dynalite) through the record store:');
  console.log('| rows | cold ms | cold read units | warm ms | warm read units |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}
