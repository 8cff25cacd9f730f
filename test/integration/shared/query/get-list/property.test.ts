/**
 * Property: for random datasets and random queries, the planner and executor over dynalite return exactly
 * what a brute-force evaluation in memory returns (same total, same page, same order). The oracle here is
 * written independently of the service's matcher. Also: the record-count checkpoint stays exact.
 */
import fc from 'fast-check';
import { ulid } from 'ulid';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { type Dataset, toDataset } from '../../../../../shared/catalog/catalog';
import type { FieldConfig } from '../../../../../shared/catalog/schema';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { executeListPlan } from '../../../../../shared/query/list-executor';
import { parseListParams } from '../../../../../shared/query/list-params';
import { PageStartCache } from '../../../../../shared/query/page-start-cache';
import { planListQuery } from '../../../../../shared/query/query-planner';
import { validateChanges } from '../../../../../shared/records/record-codec';
import { formatTimestamp } from '../../../../../shared/records/timestamps';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { indexLayout, slotCountKeys, withDerivedAttributes } from '../../../../../shared/storage/index-attributes';
import { ListReader } from '../../../../../shared/storage/list-reader';
import { countRecords } from '../../../../../shared/storage/record-counter';
import { RecordStore } from '../../../../../shared/storage/record-store';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';

const FIELDS: FieldConfig[] = [
  { name: 'a', type: 'integer', indexed: true },
  { name: 'b', type: 'string', indexed: true },
  { name: 'c', type: 'number' },
  { name: 'd', type: 'boolean' },
  { name: 'e', type: 'enum', options: ['x', 'y', 'z'], indexed: true },
];
type Raw = { a?: number; b?: string; c?: number; d?: boolean; e?: string };
type Row = Raw & { id: string; gmt_create: string };

let dynamo: EmbeddedDynamo;
let store: RecordStore;
let reader: ListReader;
let bookkeeping: DatasetBookkeeping;
let datasetNumber = 0;

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('prop');
  await ensureTables(dynamo.client, names);
  const client = createDocumentClient(dynamo.client);
  store = new RecordStore(client, names.Records as string);
  reader = new ListReader(client, names.Records as string, { listReadBudget: 1e9 });
  bookkeeping = new DatasetBookkeeping(client, names.Records as string);
});
afterAll(() => dynamo.close());

function datasetFor(code: string): Dataset {
  return toDataset({ datasetCode: code, appCode: 'app', name: code, fields: FIELDS });
}

/** Write records as the create operation lays them out, with ids in the order given. */
async function load(dataset: Dataset, raws: Raw[], startMs: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [i, raw] of raws.entries()) {
    const ms = startMs + i * 1000;
    const id = ulid(ms);
    const changes = withDerivedAttributes(dataset, id, validateChanges(dataset, raw, 'create'), 'create');
    const stamp = formatTimestamp(new Date(ms), 'UTC');
    const fields = { ...changes.set, gmt_create: stamp, gmt_modified: stamp };
    await store.create(dataset.datasetCode, id, fields, new CapacityMeter(), {
      values: slotCountKeys(dataset, fields, id),
      now: () => ms,
    });
    rows.push({ ...raw, id, gmt_create: stamp });
  }
  return rows;
}

// ---- The oracle: plain JavaScript over the raw rows. ----
type Cond = [string, string, unknown];
function cmp(x: unknown, y: unknown): number {
  if (x === y) return 0;
  if (x === undefined || x === null) return -1;
  if (y === undefined || y === null) return 1;
  if (typeof x === 'boolean') return x ? 1 : -1;
  return (x as number) < (y as number) ? -1 : 1;
}
function oracleMatch(row: Row, [field, op, value]: Cond): boolean {
  const v = row[field as keyof Row];
  switch (op) {
    case '':
      return v !== undefined && v === value;
    case '_like':
      return typeof v === 'string' && v.toLowerCase().includes(String(value).toLowerCase());
    case '_start':
      return v !== undefined && cmp(v, value) >= 0;
    case '_end':
      return v !== undefined && cmp(v, value) <= 0;
    case '_in':
      return v !== undefined && (value as unknown[]).includes(v);
    case '_is_null':
      return (v === undefined) === value;
    default:
      throw new Error(op);
  }
}
function oracle(rows: Row[], conds: Cond[], sort: [string, 'asc' | 'desc'][]): string[] {
  const keys: [string, 'asc' | 'desc'][] = sort.length ? [...sort] : [['gmt_create', 'desc']];
  keys.push(['id', keys[keys.length - 1]?.[1] ?? 'desc']);
  return rows
    .filter((row) => conds.every((c) => oracleMatch(row, c)))
    .sort((p, q) => {
      for (const [f, dir] of keys) {
        const c = cmp(p[f as keyof Row], q[f as keyof Row]);
        if (c !== 0) return dir === 'asc' ? c : -c;
      }
      return 0;
    })
    .map((row) => row.id);
}

// ---- Generators ----
const intValue = fc.integer({ min: -3, max: 3 });
const strValue = fc.constantFrom('', 'a', 'A', 'ab', 'Ab', 'b', 'ba', 'B');
const numValue = fc.constantFrom(-1.5, 0, 0.5, 2, 10);
const enumValue = fc.constantFrom('x', 'y', 'z');
const rawRecord: fc.Arbitrary<Raw> = fc.record(
  { a: intValue, b: strValue, c: numValue, d: fc.boolean(), e: enumValue },
  { requiredKeys: [] },
);
const condition: fc.Arbitrary<Cond> = fc.oneof(
  fc.tuple(fc.constant('a'), fc.constantFrom('', '_start', '_end'), intValue),
  fc.tuple(fc.constant('a'), fc.constant('_in'), fc.uniqueArray(intValue, { minLength: 1, maxLength: 3 })),
  fc.tuple(fc.constant('b'), fc.constantFrom('', '_start', '_end', '_like'), strValue),
  fc.tuple(fc.constant('b'), fc.constant('_in'), fc.uniqueArray(strValue, { minLength: 1, maxLength: 3 })),
  fc.tuple(fc.constant('c'), fc.constantFrom('', '_start', '_end'), numValue),
  fc.tuple(fc.constant('d'), fc.constant(''), fc.boolean()),
  fc.tuple(fc.constant('e'), fc.constantFrom('', '_like'), enumValue),
  fc.tuple(fc.constant('e'), fc.constant('_in'), fc.uniqueArray(enumValue, { minLength: 1, maxLength: 2 })),
  fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.constant('_is_null'), fc.boolean()),
);
const sortList = fc.uniqueArray(
  fc.tuple(
    fc.constantFrom('a', 'b', 'c', 'd', 'e', 'id', 'gmt_create'),
    fc.constantFrom('asc' as const, 'desc' as const),
  ),
  { maxLength: 2, selector: ([field]) => field },
);

it('planner + store results equal a brute-force evaluation (random datasets and queries)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(rawRecord, { maxLength: 18 }),
      fc.array(condition, { maxLength: 2 }),
      sortList,
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 5 }),
      async (raws, conds, sort, pageSize, currentPage) => {
        const dataset = datasetFor(`prop${datasetNumber++}`);
        const rows = await load(dataset, raws, Date.UTC(2024, 0, 1));
        // Conditions on the same key would overwrite each other in paramMap: keep the first.
        const params: Record<string, unknown> = {};
        const used: Cond[] = [];
        for (const c of conds) {
          const key = c[0] + c[1];
          if (key in params) continue;
          params[key] = c[2];
          used.push(c);
        }
        const parsed = parseListParams({ ...params, ytSortList: sort.map(([f, d]) => ({ [f]: d })) }, dataset);
        const query = {
          filter: parsed.filter,
          sort: parsed.sort,
          offset: (currentPage - 1) * pageSize,
          limit: pageSize,
        };
        const plan = planListQuery(query, indexLayout(dataset));
        const result = await executeListPlan(plan, query, {
          store: reader,
          bookkeeping,
          datasetCode: dataset.datasetCode,
          meter: new CapacityMeter(),
          now: Date.now(),
          readBudget: 1e9,
          pageStarts: new PageStartCache(),
        });
        const expected = oracle(rows, used, sort);
        expect(result.totalCount).toBe(expected.length);
        expect(result.items.map((item) => item['@sk'])).toEqual(
          expected.slice(query.offset, query.offset + query.limit),
        );
      },
    ),
    { numRuns: 100 },
  );
}, 60_000);

it('keeps the record count exact across checkpoints, reading only the tail after one', async () => {
  const dataset = datasetFor('counted');
  const hourAgo = Date.now() - 60 * 60 * 1000;
  await load(
    dataset,
    Array.from({ length: 100 }, (_, i) => ({ a: i })),
    hourAgo - 200_000,
  );
  const first = new CapacityMeter();
  expect(await countRecords(bookkeeping, 'counted', Date.now(), first)).toBe(100);
  await load(dataset, [{ a: 1 }, { a: 2 }, { a: 3 }], Date.now());
  const second = new CapacityMeter();
  expect(await countRecords(bookkeeping, 'counted', Date.now(), second)).toBe(103);
  // The checkpoint covers the first 100: the second count reads the checkpoint and a 3-record tail.
  expect(second.readUnits).toBeLessThan(first.readUnits);
  expect(first.writeUnits).toBe(1);
  expect(second.writeUnits).toBe(0);
});
