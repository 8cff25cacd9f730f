/**
 * `npm run bench -- batch`: batch create of 1,000 records of about 200 bytes through the real local service
 * (demo configuration), next to the same records sent as single creates, measured in the same run:
 * wall time, and write units per record as the request log reports them (docs/interface.md §11).
 *
 * The embedded store leaves index writes out of its consumed capacity, so the index writes are added from the
 * records themselves: every record carries one key of each of its dataset's generic indexes (keys only, well under
 * 1 KB: one write unit each), and a batch's records carry no count-index entry (their bulk group does).
 */
import { cpus, loadavg } from 'node:os';
import { type LocalServer, startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import { writeSection } from './report';

const APP = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', secret: 'sk-demo-secret' };
const BATCH = 1000;
const ROUNDS = 3;
const SINGLE_CREATES = 100;
/** Every authenticated request: the quota's admit and release. */
const QUOTA_UNITS = 2;

interface Dataset {
  code: string;
  indexes: number;
  record: (i: number) => Record<string, unknown>;
}

const DATASETS: Dataset[] = [
  {
    code: 'orders',
    indexes: 5,
    record: (i) => ({
      customer_id: `cust-${String(i % 500).padStart(6, '0')}`,
      amount: 10 + (i % 990) + 0.5,
      items: 1 + (i % 7),
      status: 'new',
      region: i % 3 ? 'EU' : 'US',
      placed_at: '2026-01-15 10:00:00',
      internal_note: `imported from the legacy shop, batch ${Math.floor(i / 100)}, line ${i}; checked by the night run`,
      shipping: { carrier: 'DHL', service: 'express' },
    }),
  },
  {
    code: 'products',
    indexes: 2,
    record: (i) => ({
      sku: `SKU-${String(i).padStart(6, '0')}`,
      name: `Widget number ${i}, blue, large, with a longer product title for realism and a short description of it`,
      price: 9.5 + (i % 50),
      in_stock: i % 200,
      cost: 4.25,
    }),
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export async function run(): Promise<void> {
  const lines: Record<string, unknown>[] = [];
  const server: LocalServer = await startLocalServer({ port: 0, logSink: (line) => lines.push(JSON.parse(line)) });
  const call = async (path: string, body: Record<string, unknown>, datasetCode: string, key?: string) => {
    const timeStamp = String(Date.now());
    const token = signRequest({ accessKey: APP.accessKey, appCode: APP.appCode, datasetCode, timeStamp }, APP.secret);
    const started = performance.now();
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': APP.appCode,
        'X-Dataset-Code': datasetCode,
        'X-Token': token,
        ...(key ? { 'Idempotency-Key': key } : {}),
      },
      body: JSON.stringify({ appCode: APP.appCode, datasetCode, ...body }),
    });
    const envelope = (await response.json()) as { success: boolean; errorMsg?: string };
    const ms = performance.now() - started;
    if (!envelope.success) throw new Error(`${path} failed: ${envelope.errorMsg}`);
    const line = lines.at(-1) ?? {};
    return { ms, writeUnits: Number(line.writeUnits) };
  };

  try {
    const rows: string[][] = [];
    for (const dataset of DATASETS) {
      const records = Array.from({ length: BATCH }, (_, i) => dataset.record(i));
      // As the caller sends them (JSON); the stored item adds timestamps and index keys.
      const bytes = records.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0) / records.length;
      // Warm up the handlers and the store once, outside the figures.
      await call('/openapi/data/batch-create', { paramList: records.slice(0, 10) }, dataset.code);

      const batches: { ms: number; writeUnits: number }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        batches.push(await call('/openapi/data/batch-create', { paramList: records }, dataset.code));
      }
      const keyed = await call(
        '/openapi/data/batch-create',
        { paramList: records },
        dataset.code,
        `bench-${Date.now()}`,
      );

      const singles: { ms: number; writeUnits: number }[] = [];
      for (let i = 0; i < SINGLE_CREATES; i++) {
        singles.push(await call('/openapi/data/create', { paramMap: records[i] }, dataset.code));
      }

      const batchUnits = median(batches.map((b) => b.writeUnits));
      // Per record: its own write (1 unit below 1 KB); per batch: what remains (quota, bulk group, version).
      const perBatch = batchUnits - BATCH;
      const singleUnits = median(singles.map((s) => s.writeUnits));
      const batchMs = median(batches.map((b) => b.ms));
      const singleMs = singles.reduce((sum, s) => sum + s.ms, 0) / singles.length;
      rows.push([
        `${dataset.code} (${dataset.indexes} indexes, ~${Math.round(bytes)} B)`,
        `${batchMs.toFixed(0)} ms`,
        `${((singleMs * BATCH) / 1000).toFixed(1)} s`,
        `${((singleMs * BATCH) / batchMs).toFixed(0)}×`,
        `1 + ${dataset.indexes}`,
        `${perBatch} (quota ${QUOTA_UNITS})`,
        `${keyed.writeUnits - batchUnits}`,
        `${singleUnits} + ${dataset.indexes + 1}`,
      ]);
    }
    const header = [
      'dataset',
      'batch of 1,000 (median of 3)',
      '1,000 single creates (from 100)',
      'speed-up',
      'write units per record (own + index)',
      'per batch (measured)',
      '`Idempotency-Key` extra',
      'single create (measured + index)',
    ];
    const table = [
      `| ${header.join(' | ')} |`,
      `|${header.map(() => '---').join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n');
    const section = `## Batch create

Measured by \`npm run bench -- batch\` through the real local service (demo configuration), in one run: batches of
1,000 records (median of 3), next to 100 of the same records sent as single creates (scaled to 1,000). Write units
are the request log's figures; the index writes are added from the records (one per generic index per record: the
embedded store leaves them out of its consumed capacity). Load average during this run: ${loadavg()[0]?.toFixed(1)} on
${cpus().length} cores (the wall times are only meaningful next to each other).

${table}

- **Per record**, a batch pays its record's own write (1 unit below 1 KB stored) and one write per generic index,
  nothing else: no quota, no count entry, no change item per record. A single create pays the same record and index
  writes plus, per record, the quota's 2, its count-index entry and its change item.
- **Per batch**: the quota's admit and release (2), the record count's bulk group (begun before the writes, marked
  done after: 2) and its change items, claimed before the writes: one with the batch's ids (as runs of consecutive
  ids: one unit) and one per indexed field with the records' values (1–2 units for a field of few values, up to
  about 20 for one whose every value differs). Figures measured before batches wrote their values per field.
- **With an \`Idempotency-Key\`**: the key's record, and its kept answer (the ids, compressed); a replay costs one
  consistent read of it and one failed conditional write, and writes no record.
- Records go out as BatchWriteItem calls of 25, four in flight; what DynamoDB leaves unprocessed is sent again
  after a doubling, jittered wait (at most 6 calls per chunk, at most 775 ms of waiting; a chunk still unprocessed
  then answers 3001 saying to send the batch again with the same key, which completes it). The writes it makes
  are the same when the store keeps up: one call per chunk.`;
    console.log(section);
    writeSection('batch', section);
  } finally {
    await server.close();
  }
}
