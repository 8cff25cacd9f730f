/**
 * The cost of folding a bulk load into per-value totals (`npm run bench -- folds`): the `orders` dataset of the
 * scale benchmark (`customer` 5,000 values, `amount` nearly one value per record, `status` four values, all three
 * indexed), loaded through batch-create in batches of 1,000 on a driven clock, then, once its change items have
 * settled, folded into count pages by one `foldDatasetTotals` as the fold beside the writes runs it. Write and
 * read units are the fold's own calls' ReturnConsumedCapacity; wall time is the fold's. Sizes: BENCH_FOLDS_SIZES
 * (default 20,000 and 100,000 records). Each size is folded twice on separate datasets holding the same records:
 * with the rounds the fold uses, and with rounds of a fixed 5,000 records whatever they add to a page, for the ratio.
 */
import { cpus, loadavg } from 'node:os';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { applicationCaller } from '../shared/access/caller';
import { grantView } from '../shared/access/permissions';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { type Application, Catalog, type Dataset } from '../shared/catalog/catalog';
import type { CatalogConfig, FieldConfig, GrantConfig } from '../shared/catalog/schema';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import type { DataOperationContext } from '../shared/operation/operation';
import { batchCreateOperation } from '../shared/operations/batch-create';
import { equalityInterval } from '../shared/records/value-encoding';
import { DatasetBookkeeping } from '../shared/storage/dataset-bookkeeping';
import { CHECK_SLACK_MS, FOLD_ROUND_LIMITS, type FoldRoundLimits } from '../shared/storage/fold-limits';
import { IdempotencyStore } from '../shared/storage/idempotency-store';
import { countSlotKey, indexLayout } from '../shared/storage/index-attributes';
import { IndexBuildStore } from '../shared/storage/index-build-store';
import { ListReader } from '../shared/storage/list-reader';
import { RecordBatchStore } from '../shared/storage/record-batch-store';
import { SETTLE_MS } from '../shared/storage/record-counter';
import { RecordStore } from '../shared/storage/record-store';
import { ensureTables, localTableNames } from '../shared/storage/table-setup';
import { countSlotValues } from '../shared/storage/value-counter';
import { foldDatasetTotals } from '../shared/storage/value-fold';
import { writeSection } from './report';

const STATUSES = ['new', 'paid', 'shipped', 'void'] as const;
const FIELDS: FieldConfig[] = [
  { name: 'customer', type: 'string', indexed: true },
  { name: 'amount', type: 'number', indexed: true },
  { name: 'status', type: 'enum', options: [...STATUSES], indexed: true },
  { name: 'note', type: 'text' },
];
const BATCH = 1000;
/** The rounds folds used before they were sized by what they add to each page. */
const FIXED_ROUNDS: FoldRoundLimits = {
  records: 5_000,
  pageBytes: Number.POSITIVE_INFINITY,
  pages: FOLD_ROUND_LIMITS.pages,
};

interface Fold {
  writeUnits: number;
  readUnits: number;
  seconds: number;
}

export async function run(): Promise<void> {
  const sizes = (process.env.BENCH_FOLDS_SIZES ?? '20000,100000').split(',').map(Number);
  const load = loadavg()[0] as number;
  const dynamo = await startEmbeddedDynamo();
  const names = localTableNames('bench-folds');
  await ensureTables(dynamo.client, names);
  const client = createDocumentClient(dynamo.client);
  const ports = {
    records: new RecordStore(client, names.Records as string),
    lists: new ListReader(client, names.Records as string),
    bookkeeping: new DatasetBookkeeping(client, names.Records as string),
    recordBatches: new RecordBatchStore(client, names.Records as string),
    idempotency: new IdempotencyStore(client, names.Records as string),
    indexBuilds: new IndexBuildStore(client, { records: names.Records as string, catalog: names.Catalog as string }),
  };
  let clock = Date.now();

  /** Load `size` records into a new dataset, fold them once settled, and check one total against the load. */
  const loadAndFold = async (code: string, size: number, limits: FoldRoundLimits): Promise<Fold> => {
    const catalog = new Catalog({
      applications: [
        {
          appCode: 'bench',
          name: 'bench',
          accessKey: `ak-${code}-0001`,
          signingSecret: 'sk-bench-folds-secret',
          grants: [{ datasetCode: code, operations: ['read', 'create'] }],
        },
      ],
      datasets: [{ appCode: 'bench', datasetCode: code, name: code, fields: FIELDS }],
    } as CatalogConfig);
    const dataset = catalog.dataset(code) as Dataset;
    const application = catalog.application('bench') as Application;
    const grant = application.grants.get(code) as GrantConfig;
    const context: DataOperationContext = {
      requestId: `bench-${code}`,
      operation: 'batch-create',
      caller: applicationCaller(application),
      catalog,
      dataset,
      grant,
      view: grantView(grant, dataset),
      ports,
      telemetry: { capacity: new CapacityMeter(), metric: () => {}, detail: () => {} },
      now: () => clock,
    };
    for (let first = 0; first < size; first += BATCH) {
      clock += 10;
      const paramList = Array.from({ length: Math.min(BATCH, size - first) }, (_, k) => order(first + k));
      await batchCreateOperation.run(context, { paramList });
    }
    clock += SETTLE_MS + CHECK_SLACK_MS + 1_000;
    const slots = [...indexLayout(dataset).values()].map(countSlotKey);
    const meter = new CapacityMeter();
    const started = performance.now();
    const outcome = await foldDatasetTotals(ports.bookkeeping, {
      datasetCode: code,
      slots,
      now: clock,
      meter,
      until: Number.POSITIVE_INFINITY,
      rounds: limits,
    });
    const seconds = (performance.now() - started) / 1000;
    const status = indexLayout(dataset).get('status');
    if (!status) throw new Error('no index slot for status');
    const paid = await countSlotValues(ports.bookkeeping, {
      datasetCode: code,
      slot: countSlotKey(status),
      intervals: [equalityInterval('paid').interval],
      now: clock,
      meter: new CapacityMeter(),
    });
    if (outcome.left || outcome.folded !== size || paid !== size / 4) {
      throw new Error(`${code}: folded ${outcome.folded} of ${size}, left ${outcome.left}, paid ${paid}`);
    }
    return { writeUnits: meter.writeUnits, readUnits: meter.readUnits, seconds };
  };

  const rows: string[] = [];
  for (const size of sizes) {
    const sized = await loadAndFold(`rounds${size}`, size, FOLD_ROUND_LIMITS);
    const fixed = await loadAndFold(`fixed${size}`, size, FIXED_ROUNDS);
    const cell = (f: Fold) =>
      `${Math.round(f.writeUnits).toLocaleString('en-US')} WU (${(f.writeUnits / size).toFixed(3)} per record), ${Math.round(f.readUnits).toLocaleString('en-US')} RU, ${f.seconds.toFixed(1)} s`;
    rows.push(
      `| ${size.toLocaleString('en-US')} | ${cell(sized)} | ${cell(fixed)} | ${(fixed.writeUnits / sized.writeUnits).toFixed(1)}× |`,
    );
    console.log(rows.at(-1));
  }
  await dynamo.close();
  const section = [
    '## Folding a bulk load',
    '',
    `Measured by \`npm run bench -- folds\` on ${cpus().length} cores (load average ${load.toFixed(1)} when it began,`,
    `${(loadavg()[0] as number).toFixed(1)} when it ended: the machine is shared, so seconds vary with what else runs).`,
    'The `orders` dataset of the scale benchmark (`customer` 5,000 values, `amount` nearly one per record, `status`',
    'four), loaded through batch-create in batches of 1,000, then folded once settled by one fold over its three',
    "indexed fields, on the embedded store. Units are the fold's calls' consumed capacity; each total was checked.",
    '',
    '| records | rounds sized by what they add to a page | rounds of 5,000 records | write units, ratio |',
    '|---:|---|---|---:|',
    ...rows,
  ].join('\n');
  console.log(section);
  writeSection('folds', section);
}

/** Record i, as the scale benchmark writes it. */
function order(i: number): Record<string, unknown> {
  return {
    customer: `cust-${String(i % 5000).padStart(5, '0')}`,
    amount: ((i * 7919) % 1_000_000) / 100,
    status: STATUSES[i % 4],
    note: `order ${i} placed through the partner portal`,
  };
}
