/**
 * What the records table holds per record as a dataset's history grows (`npm run bench -- storage`): two datasets of
 * the scale benchmark's `orders` fields (`customer`, `amount`, `status` indexed, a `note`), BENCH_STORAGE_RECORDS
 * records each (default 30), created in batches of 100, then updated 10 times each and then 100 times each (`status`
 * and `amount` change), side by side on a driven clock through the real operations, with the fold beside the writes
 * after each round of updates: for `orders` as it runs now (`runFold`, which deletes the change items no reader needs
 * any more), for `history` the same folds without the deletions (as before). After 10 and after 100 updates per
 * record, once the last claims are past `COMPACTION_LAG_MS` and two passes have run, it counts each dataset's items
 * (its records and its meta partition) and their bytes (DynamoDB's item size rule). Index entries (GSIs) are not items
 * of the table and are left out; events (the change log's table) are the retention window: one per create or update
 * of the last 30 days.
 */
import { cpus, loadavg } from 'node:os';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { applicationCaller } from '../shared/access/caller';
import { grantView } from '../shared/access/permissions';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { type Application, Catalog, type Dataset } from '../shared/catalog/catalog';
import type { CatalogConfig, FieldConfig, GrantConfig } from '../shared/catalog/schema';
import { runFold } from '../shared/changes/value-folds';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import type { DataOperationContext } from '../shared/operation/operation';
import { batchCreateOperation } from '../shared/operations/batch-create';
import { updateOperation } from '../shared/operations/update';
import { COMPACTION_LAG_MS, COMPACTION_WAIT_MS } from '../shared/storage/change-compaction';
import { DatasetBookkeeping } from '../shared/storage/dataset-bookkeeping';
import { CHECK_SLACK_MS } from '../shared/storage/fold-limits';
import { IdempotencyStore } from '../shared/storage/idempotency-store';
import { countSlotKey, indexLayout } from '../shared/storage/index-attributes';
import { IndexBuildStore } from '../shared/storage/index-build-store';
import { ListReader } from '../shared/storage/list-reader';
import { RecordBatchStore } from '../shared/storage/record-batch-store';
import { SETTLE_MS } from '../shared/storage/record-counter';
import { RecordStore } from '../shared/storage/record-store';
import { ensureTables, localTableNames } from '../shared/storage/table-setup';
import { foldDatasetTotals } from '../shared/storage/value-fold';
import { itemSize } from './index-writes';
import { writeSection } from './report';

const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const FIELDS: FieldConfig[] = [
  { name: 'customer', type: 'string', indexed: true },
  { name: 'amount', type: 'number', indexed: true },
  { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
  { name: 'note', type: 'text' },
];

interface Held {
  items: number;
  bytes: number;
  changeItems: number;
}

export async function run(): Promise<void> {
  const size = Number(process.env.BENCH_STORAGE_RECORDS ?? 30);
  const load = loadavg()[0] as number;
  const dynamo = await startEmbeddedDynamo();
  const names = localTableNames('bench-storage');
  await ensureTables(dynamo.client, names);
  const client = createDocumentClient(dynamo.client);
  const table = names.Records as string;
  const ports = {
    records: new RecordStore(client, table),
    lists: new ListReader(client, table),
    bookkeeping: new DatasetBookkeeping(client, table),
    recordBatches: new RecordBatchStore(client, table),
    idempotency: new IdempotencyStore(client, table),
    indexBuilds: new IndexBuildStore(client, { records: table, catalog: names.Catalog as string }),
  };
  const catalog = new Catalog({
    applications: [
      {
        appCode: 'bench',
        name: 'bench',
        accessKey: 'ak-bench-storage-01',
        signingSecret: 'sk-bench-storage-secret',
        grants: ['orders', 'history'].map((datasetCode) => ({ datasetCode, operations: ['read', 'create', 'update'] })),
      },
    ],
    datasets: ['orders', 'history'].map((datasetCode) => ({
      appCode: 'bench',
      datasetCode,
      name: datasetCode,
      fields: FIELDS,
    })),
  } as CatalogConfig);
  const application = catalog.application('bench') as Application;
  let clock = Date.now();
  const context = (datasetCode: string, operation: 'batch-create' | 'update'): DataOperationContext => {
    const dataset = catalog.dataset(datasetCode) as Dataset;
    const grant = application.grants.get(datasetCode) as GrantConfig;
    return {
      requestId: `bench-${clock}`,
      operation,
      caller: applicationCaller(application),
      catalog,
      dataset,
      grant,
      view: grantView(grant, dataset),
      ports,
      telemetry: { capacity: new CapacityMeter(), metric: () => {}, detail: () => {} },
      now: () => clock,
    };
  };
  // `orders`: the fold beside the writes as it runs now, deleting what no reader needs; `history`: the same folds
  // without the deletions, as before.
  const foldPorts = { catalog: async () => catalog, bookkeeping: ports.bookkeeping, now: () => clock };
  const historySlots = [...indexLayout(catalog.dataset('history') as Dataset).values()].map(countSlotKey);
  const fold = async (datasetCode: string): Promise<boolean> =>
    datasetCode === 'orders'
      ? (await runFold('orders', foldPorts, new CapacityMeter())).left
      : (
          await foldDatasetTotals(ports.bookkeeping, {
            datasetCode,
            slots: historySlots,
            now: clock,
            meter: new CapacityMeter(),
            until: Number.POSITIVE_INFINITY,
          })
        ).left;

  const held = async (datasetCode: string): Promise<Held> => {
    const found: Held = { items: 0, bytes: 0, changeItems: 0 };
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        if (!String(item['@pk']).endsWith(`ds#${datasetCode}`)) continue;
        found.items += 1;
        found.bytes += itemSize(item);
        if (String(item['@sk']).startsWith('change')) found.changeItems += 1;
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  };

  const ids = new Map<string, string[]>();
  for (const datasetCode of ['orders', 'history']) {
    const created: string[] = [];
    for (let first = 0; first < size; first += 100) {
      clock += 10;
      const paramList = Array.from({ length: Math.min(100, size - first) }, (_, k) => ({
        customer: `C${String((first + k) % 50).padStart(4, '0')}`,
        amount: first + k,
        status: 'new',
        note: `order ${first + k}`,
      }));
      created.push(
        ...((await batchCreateOperation.run(context(datasetCode, 'batch-create'), { paramList })) as string[]),
      );
    }
    ids.set(datasetCode, created);
  }

  let updates = 0;
  const rows: { label: string; history: Held; kept: Held; seconds: number }[] = [];
  for (const target of [10, 100]) {
    const started = performance.now();
    while (updates < target) {
      for (const datasetCode of ['orders', 'history']) {
        for (const [i, id] of (ids.get(datasetCode) as string[]).entries()) {
          clock += 5;
          const paramMap = { id, status: STATUSES[(updates + i) % 4], amount: (updates * 7 + i) % size };
          await updateOperation.run(context(datasetCode, 'update'), { paramMap });
        }
      }
      updates += 1;
      // The folds beside the writes, once this round's claims have settled (as the fold queue runs them).
      clock += SETTLE_MS + CHECK_SLACK_MS + 1_000;
      for (const datasetCode of ['orders', 'history']) while (await fold(datasetCode)) clock += 1_000;
    }
    const seconds = (performance.now() - started) / 1000;
    // The passes that come once the last claims are past the lag: one proposes, the next deletes.
    clock += COMPACTION_LAG_MS;
    await fold('orders');
    clock += COMPACTION_WAIT_MS;
    await fold('orders');
    rows.push({
      label: `${target} updates per record`,
      history: await held('history'),
      kept: await held('orders'),
      seconds,
    });
  }
  await dynamo.close();

  const per = (n: number) => (n / size).toFixed(2);
  const lines = [
    `${size} records in each of two datasets (orders' fields: 3 indexed and a note), created in batches of 100, then updated`,
    'on a driven clock, side by side in one run; records table only (GSI entries apart), items and bytes per record,',
    'change items in all:',
    '',
    '| history | kept as before: items | bytes | change items | kept now: items | bytes | change items |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      ({ label, history, kept }) =>
        `| ${label} | ${per(history.items)} | ${per(history.bytes)} | ${history.changeItems} | ${per(kept.items)} | ${per(kept.bytes)} | ${kept.changeItems} |`,
    ),
    '',
    `Updates of both datasets: ${rows.map((r) => `${r.label.split(' ')[0]} per record in ${r.seconds.toFixed(0)} s`).join(', ')}.`,
    `Machine: ${cpus().length} cores, load ${load.toFixed(2)} at the start (shared).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeSection('storage', lines.join('\n'));
}
