/**
 * get-list cost benchmark (`npm run bench -- list`): datasets of 1k, 10k and 100k records in dynalite,
 * loaded directly (BatchWriteItem) with exactly the item layout the create operation writes, then
 * representative queries run through the real parser, planner and executor, next to a naive baseline that
 * reads the whole partition and filters and sorts in memory, in the same process. Reports read units,
 * DynamoDB round trips and latency, and writes the table to docs/performance.md.
 *
 * Sizes can be narrowed for a quick look: `BENCH_SIZES=1000,10000 npm run bench -- list`.
 */
import { ulid } from 'ulid';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { type Dataset, toDataset } from '../shared/catalog/catalog';
import type { FieldConfig } from '../shared/catalog/schema';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { executeListPlan } from '../shared/query/list-executor';
import { parseListParams } from '../shared/query/list-params';
import { PageStartCache } from '../shared/query/page-start-cache';
import { planListQuery } from '../shared/query/query-planner';
import { matchesFilter, sortItems } from '../shared/records/filter-matcher';
import { validateChanges } from '../shared/records/record-codec';
import { formatTimestamp } from '../shared/records/timestamps';
import { DatasetBookkeeping } from '../shared/storage/dataset-bookkeeping';
import { indexLayout, withDerivedAttributes } from '../shared/storage/index-attributes';
import { datasetPartitionKey } from '../shared/storage/item-keys';
import { ListReader } from '../shared/storage/list-reader';
import { countRecords } from '../shared/storage/record-counter';
import { RecordAttr } from '../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../shared/storage/table-setup';
import { writeSection } from './report';
import { putAll } from './seed';

const FIELDS: FieldConfig[] = [
  { name: 'customer', type: 'string', required: true, indexed: true },
  { name: 'amount', type: 'number', indexed: true },
  { name: 'status', type: 'enum', options: ['new', 'paid', 'shipped', 'cancelled'], indexed: true },
  { name: 'qty', type: 'integer', indexed: true },
  { name: 'placed_at', type: 'datetime', indexed: true },
  { name: 'region', type: 'string' },
  { name: 'note', type: 'text' },
];
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo'];
const REGIONS = ['EU', 'US', 'APAC', 'LATAM', 'MEA'];

interface Measure {
  units: number;
  trips: number;
  ms: number;
  rows: number;
  total: number;
}

/** A small deterministic generator, so every run builds the same data. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function datasetOf(code: string): Dataset {
  return toDataset({ datasetCode: code, appCode: 'bench', name: code, fields: FIELDS });
}

export async function run(): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
  const dynamo = await startEmbeddedDynamo();
  let trips = 0;
  dynamo.client.middlewareStack.add((next) => async (args) => {
    trips += 1;
    return next(args);
  });
  const names = localTableNames('bench');
  await ensureTables(dynamo.client, names);
  const table = names.Records as string;
  const doc = createDocumentClient(dynamo.client);
  const store = new ListReader(doc, table, { listReadBudget: 1e9 });
  const bookkeeping = new DatasetBookkeeping(doc, table);
  const sections: string[] = [];
  const started = Date.now();

  for (const size of sizes) {
    const dataset = datasetOf(`orders_${size}`);
    const loadStart = Date.now();
    await load(doc, table, dataset, size);
    const loadMs = Date.now() - loadStart;
    const customers = Math.max(1, Math.floor(size / 10));

    const measure = async (run: (meter: CapacityMeter) => Promise<{ rows: number; total: number }>) => {
      const meter = new CapacityMeter();
      const tripsBefore = trips;
      const t0 = performance.now();
      const { rows, total } = await run(meter);
      return { units: meter.readUnits, trips: trips - tripsBefore, ms: performance.now() - t0, rows, total } as Measure;
    };
    const pageStarts = new PageStartCache();
    const list = (params: Record<string, unknown>) => (meter: CapacityMeter) =>
      runList(store, bookkeeping, dataset, params, meter, pageStarts);
    const baseline = (params: Record<string, unknown>) => (meter: CapacityMeter) =>
      runBaseline(store, dataset, params, meter);

    // One-time: the first count after a bulk load reads the partition once and writes the checkpoint.
    const firstCount = await measure(async (meter) => {
      const total = await countRecords(bookkeeping, dataset.datasetCode, Date.now(), meter);
      return { rows: 0, total };
    });

    const queries: [string, Record<string, unknown>][] = [
      ['indexed equality `customer`', { customer: `cust-${Math.floor(customers / 2)}` }],
      ['indexed range `amount` 1%', { amount_start: 5000, amount_end: 5099.99 }],
      ['`customer_in` 3 values', { customer_in: ['cust-1', 'cust-2', 'cust-3'] }],
      ['sort on indexed `amount` desc', { ytSortList: [{ amount: 'desc' }] }],
      ['equality + sort on another field', { status: 'cancelled', qty: 7, ytSortList: [{ amount: 'asc' }] }],
      ['`status` equality, sorted by indexed `amount` desc', { status: 'new', ytSortList: [{ amount: 'desc' }] }],
      [
        '`status` equality, sorted by indexed `amount` desc, page 20',
        { status: 'new', ytSortList: [{ amount: 'desc' }], currentPage: 20 },
      ],
      [
        '`$or` of two `status` values, sorted by `amount` desc',
        { where: { $or: [{ status: { $eq: 'new' } }, { status: { $eq: 'paid' } }] }, ytSortList: [{ amount: 'desc' }] },
      ],
      ['unindexed `note_like`', { note_like: 'zebra' }],
      ['default order, page 1', {}],
      ['deep page 50, cold', { currentPage: 50 }],
    ];
    const rows: string[] = [];
    for (const [label, params] of queries) {
      const ours = await measure(list(params));
      const base = await measure(baseline(params));
      if (ours.total !== base.total || ours.rows !== base.rows) {
        throw new Error(`${label}: results differ (${ours.total}/${ours.rows} vs ${base.total}/${base.rows})`);
      }
      rows.push(row(label, ours, base, await keysUnits(store, dataset, params)));
      if (label.endsWith('sorted by indexed `amount` desc')) {
        // The same query the way it was planned before: every match read to be sorted in memory.
        const before = await measure((meter) =>
          runList(store, bookkeeping, dataset, params, meter, pageStarts, { withoutSortIndex: true }),
        );
        rows.push(row(`${label}, every match read (the plan before)`, before, base, '–'));
      }
    }
    // Deep page 50 after page 49 was read: the page-start cache serves it.
    await measure(list({ currentPage: 49 }));
    const warm = await measure(list({ currentPage: 50 }));
    const warmBase = await measure(baseline({ currentPage: 50 }));
    rows.push(row('deep page 50, after page 49', warm, warmBase, '–'));

    sections.push(
      [
        `### ${size.toLocaleString('en-US')} records`,
        '',
        `Loaded in ${(loadMs / 1000).toFixed(1)} s. First count after the bulk load (one-time, writes the count checkpoint): ${firstCount.units} units, ${firstCount.trips} round trips.`,
        '',
        '| query | matches | units | keys units | round trips | ms | baseline units | baseline round trips | baseline ms | units ratio |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        ...rows,
        '',
      ].join('\n'),
    );
    console.log(sections[sections.length - 1]);
  }
  await dynamo.close();
  const report = [
    '## get-list',
    '',
    'Measured by `npm run bench -- list` against dynalite in one process (dynalite computes consumed capacity the',
    'way DynamoDB does: 0.5 read units per 4 KB for eventually consistent reads, per item for BatchGetItem).',
    'Each query runs once through the real parser, planner and executor, page size 20; the baseline reads the',
    "dataset's whole partition and filters, sorts and pages in memory. Ratio = baseline units / our units.",
    'Latency is dynalite on the development machine and only meaningful relative to the baseline.',
    'Records average about 300 bytes (7 fields, 5 of them indexed).',
    '',
    ...sections,
    `"keys units": what reading the matching keys alone from the keys-only index costs, measured on its own: a`,
    'filtered total costs exactly that read (the rest of a filtered list is the page and, with a residual or an',
    'in-memory sort, the candidates).',
    '',
    "A filter on one indexed field sorted by another (`status` equality by `amount`): the filter's keys give the",
    "total and the matches' ids, the sort field's index read in order (keys only, until the page is complete) gives",
    'the page\'s ids, and only the page\'s records are read. "every match read (the plan before)" is the same query',
    'with every match read to be sorted in memory (0.5 units each), as it was planned before: past about 2,000',
    'matches that is more than the default read budget of 1,000 units, so those lists answered 2001. The `$or` of',
    'two values has no index path and reads the partition, under the budget (2001 past it).',
    '',
    `Total benchmark time: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  ].join('\n');
  writeSection('list', report);
}

/** What reading the matching keys alone costs, when an index path serves the filter ('–' otherwise). */
async function keysUnits(store: ListReader, dataset: Dataset, params: Record<string, unknown>): Promise<string> {
  const parsed = parseListParams(params, dataset);
  const plan = planListQuery({ filter: parsed.filter, sort: parsed.sort, offset: 0, limit: 20 }, indexLayout(dataset));
  if (plan.unfiltered || plan.path.kind !== 'index') return '–';
  const meter = new CapacityMeter();
  for (const interval of plan.path.intervals) {
    await store.queryIndexKeys(dataset.datasetCode, plan.path, interval, plan.path.direction, {}, meter);
  }
  return String(meter.readUnits);
}

function row(label: string, ours: Measure, base: Measure, keys: string): string {
  const ratio = ours.units > 0 ? (base.units / ours.units).toFixed(1) : '∞';
  return `| ${label} | ${ours.total} | ${ours.units} | ${keys} | ${ours.trips} | ${ours.ms.toFixed(0)} | ${base.units} | ${base.trips} | ${base.ms.toFixed(0)} | ${ratio}× |`;
}

async function runList(
  store: ListReader,
  bookkeeping: DatasetBookkeeping,
  dataset: Dataset,
  params: Record<string, unknown>,
  meter: CapacityMeter,
  pageStarts: PageStartCache,
  options: { withoutSortIndex?: boolean } = {},
) {
  const parsed = parseListParams(params, dataset);
  const page = Number(params.currentPage ?? 1);
  const query = { filter: parsed.filter, sort: parsed.sort, offset: (page - 1) * 20, limit: 20 };
  const { sortPath, ...rest } = planListQuery(query, indexLayout(dataset));
  const plan = options.withoutSortIndex || !sortPath ? rest : { ...rest, sortPath };
  const result = await executeListPlan(plan, query, {
    store,
    bookkeeping,
    datasetCode: dataset.datasetCode,
    meter,
    now: Date.now(),
    readBudget: store.listReadBudget,
    pageStarts,
  });
  return { rows: result.items.length, total: result.totalCount };
}

/** The naive way: read everything, filter, sort and page in memory. */
async function runBaseline(store: ListReader, dataset: Dataset, params: Record<string, unknown>, meter: CapacityMeter) {
  const parsed = parseListParams(params, dataset);
  const page = Number(params.currentPage ?? 1);
  const { items } = await store.queryPartition(dataset.datasetCode, { direction: 'asc' }, meter);
  const matching = sortItems(
    items.filter((item) => matchesFilter(item, parsed.filter)),
    parsed.sort,
  );
  return { rows: matching.slice((page - 1) * 20, page * 20).length, total: matching.length };
}

/** Write `size` records as the create operation lays them out, 25 per BatchWriteItem, several in flight. */
async function load(
  doc: ReturnType<typeof createDocumentClient>,
  table: string,
  dataset: Dataset,
  size: number,
): Promise<void> {
  const next = random(size);
  const customers = Math.max(1, Math.floor(size / 10));
  // Ids from 30 days ago onwards, one millisecond apart at least: settled for the count checkpoint.
  const startMs = Date.now() - 30 * 24 * 3600 * 1000;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < size; i++) {
    const ms = startMs + i * 10;
    const id = ulid(ms);
    const fields = {
      customer: `cust-${Math.floor(next() * customers)}`,
      amount: Math.round(next() * 1_000_000) / 100,
      status: ['new', 'paid', 'shipped', 'cancelled'][Math.floor(next() * 4)],
      qty: 1 + Math.floor(next() * 50),
      placed_at: formatTimestamp(new Date(Date.UTC(2024, 0, 1) + Math.floor(next() * 365 * 86400) * 1000), 'UTC'),
      region: REGIONS[Math.floor(next() * REGIONS.length)],
      note: Array.from({ length: 12 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' '),
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
  await putAll(doc, table, items);
}
