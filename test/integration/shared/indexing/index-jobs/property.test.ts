/**
 * Property (docs/interface.md §17): whatever accepted configuration changes are made under stored records (an index
 * added or removed, a slot reused, a field removed and added back, a field added, integer widened to number),
 * interleaved with creates, batch creates and updates and with the index jobs' work (a turn of it sometimes dying
 * before it saves where it stands), every answer equals what the
 * configuration then applied gives over all stored records: lists (each present field sorted, an equality and a
 * range on one), totals, get-one and a registered query. Checked after every step against an oracle that keeps
 * every stored value in memory and filters and sorts them itself. The real pipeline over HTTP, on the embedded store.
 * Every complete index, those its job built over stored records included, answers lists from per-value totals:
 * the registry says so, and its count pages and change items give the oracle's counts (a value, null, not null).
 */
import fc from 'fast-check';
import { datasetIndexes, parseIndexRegistry } from '../../../../../shared/catalog/index-registry';
import type { CatalogConfig, FieldConfig } from '../../../../../shared/catalog/schema';
import { parseConfig } from '../../../../../shared/catalog-store/load-config';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import type { StoredValue } from '../../../../../shared/records/field-values';
import {
  equalityInterval,
  type KeyInterval,
  nonNullInterval,
  nullInterval,
} from '../../../../../shared/records/value-encoding';
import { readCatalogItem } from '../../../../../shared/storage/catalog-item';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { countSlotKey, indexSlot } from '../../../../../shared/storage/index-attributes';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';
import { MAIN_APP } from '../../../../support/service-harness';

const live = new LiveConfiguration(`${FIXTURES_DIR}/live-configuration-config.json`);
beforeAll(() => live.start());
afterAll(() => live.stop());

type Value = string | number | boolean | null;

const POOL: readonly FieldConfig[] = [
  { name: 'name', type: 'string' },
  { name: 'qty', type: 'integer' },
  { name: 'kind', type: 'enum', options: ['a', 'b', 'c'] },
  { name: 'price', type: 'number' },
  { name: 'day', type: 'date' },
  { name: 'flag', type: 'boolean' },
];
const ORDERED = new Set(['name', 'qty', 'price', 'day']);

const VALUES: Record<string, fc.Arbitrary<Value>> = {
  name: fc.constantFrom('alpha', 'Beta', 'alpha beta', 'zz', 'a\u00e9'),
  qty: fc.integer({ min: -2, max: 3 }),
  kind: fc.constantFrom('a', 'b', 'c'),
  price: fc.constantFrom(-1.5, 0, 2, 2.5, 10),
  day: fc.constantFrom('2023-12-31', '2024-01-01', '2024-02-29'),
  flag: fc.boolean(),
};

/** Which fields the dataset has and which are indexed; `qty` may have been widened to number. */
interface Shape {
  present: Set<string>;
  indexed: Set<string>;
  qtyNumber: boolean;
}

/** A change of the shape; `pick` chooses among the fields it can apply to. */
type Change = { kind: 'index' | 'unindex' | 'remove' | 'add'; pick: number } | { kind: 'widen' };

type Step =
  | { kind: 'configure'; change: Change }
  | { kind: 'create'; values: Record<string, Value> }
  | { kind: 'batch'; records: Record<string, Value>[] }
  | { kind: 'update'; pick: number; values: Record<string, Value> }
  | { kind: 'work'; units: number; crash: boolean }
  | { kind: 'probe'; field: number; value: number };

const valuesArb = fc.record(
  Object.fromEntries(POOL.map((f) => [f.name, fc.option(VALUES[f.name] as fc.Arbitrary<Value>, { nil: null })])),
  { requiredKeys: [] },
) as fc.Arbitrary<Record<string, Value>>;

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('configure' as const),
      change: fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({ kind: fc.constantFrom('index' as const, 'unindex' as const), pick: fc.nat() }),
        },
        {
          weight: 3,
          arbitrary: fc.record({ kind: fc.constantFrom('remove' as const, 'add' as const), pick: fc.nat() }),
        },
        { weight: 1, arbitrary: fc.constant({ kind: 'widen' as const }) },
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('create' as const), values: valuesArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      records: fc.array(valuesArb, { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), values: valuesArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('work' as const),
      units: fc.integer({ min: 1, max: 6 }),
      crash: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('probe' as const), field: fc.nat(), value: fc.nat() }) },
);

/** The shape after a change, or `undefined` when no field can take it. */
function changed(shape: Shape, change: Change): Shape | undefined {
  const next: Shape = { present: new Set(shape.present), indexed: new Set(shape.indexed), qtyNumber: shape.qtyNumber };
  if (change.kind === 'widen') {
    if (shape.qtyNumber) return undefined;
    next.qtyNumber = true;
    return next;
  }
  const names = POOL.map((f) => f.name);
  const candidates = {
    index: shape.indexed.size >= 5 ? [] : names.filter((n) => shape.present.has(n) && !shape.indexed.has(n)),
    unindex: [...shape.indexed],
    remove: shape.present.size === 1 ? [] : [...shape.present],
    add: names.filter((n) => !shape.present.has(n)),
  }[change.kind];
  const field = candidates[change.pick % Math.max(1, candidates.length)];
  if (field === undefined) return undefined;
  if (change.kind === 'index') next.indexed.add(field);
  if (change.kind === 'unindex') next.indexed.delete(field);
  if (change.kind === 'remove') {
    next.present.delete(field);
    next.indexed.delete(field);
  }
  if (change.kind === 'add') next.present.add(field);
  return next;
}

function typeOf(shape: Shape, field: FieldConfig): FieldConfig['type'] {
  return field.name === 'qty' && shape.qtyNumber ? 'number' : field.type;
}

function configFor(code: string, shape: Shape): CatalogConfig {
  const fields = POOL.filter((f) => shape.present.has(f.name)).map((f) => ({
    ...f,
    type: typeOf(shape, f),
    ...(shape.indexed.has(f.name) ? { indexed: true } : {}),
  }));
  return parseConfig({
    applications: [
      {
        appCode: MAIN_APP.appCode,
        accessKey: MAIN_APP.accessKey,
        signingSecret: MAIN_APP.secret,
        quota: { perMinute: 100000, perHour: 1000000, perDay: 10000000, concurrent: 25 },
        grants: [{ datasetCode: code, operations: ['read', 'create', 'update'] }],
      },
    ],
    datasets: [{ appCode: MAIN_APP.appCode, datasetCode: code, fields }],
    queries: [
      { appCode: MAIN_APP.appCode, sqlCode: 'all', sql: `SELECT * FROM ${code} ORDER BY id`, datasets: [code] },
    ],
  });
}

/** Every stored value of a record, removed fields' too (they come back when the field does). */
type Stored = Record<string, Value>;

function compareValues(a: Value, b: Value): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = [...String(a)].map((c) => c.codePointAt(0) as number);
  const y = [...String(b)].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

let run = 0;

/** Fields whose stored value is the value sent (a date is stored encoded): their equalities are asked of counts. */
const STORED_AS_SENT = new Set(['name', 'qty', 'kind', 'price', 'flag']);

/**
 * Every complete index of the dataset answers from per-value totals (exactTotals), and those totals, read from
 * its count pages and the change items, equal the oracle's: not null, null, and `value` when it is the field's.
 */
async function expectCountedTotals(
  code: string,
  valuesOf: (field: string) => Value[],
  probe?: { field: string; value: Value },
): Promise<void> {
  const { client, tables } = live.harness.dynamo();
  const registry = parseIndexRegistry((await readCatalogItem(client, tables.catalog))?.indexes) ?? {};
  const indexes = datasetIndexes(registry[code]);
  const bookkeeping = new DatasetBookkeeping(client, tables.records);
  for (const index of indexes.queryable.values()) {
    expect([index.field, indexes.exactTotals.has(index.build)]).toEqual([index.field, true]);
    const values = valuesOf(index.field);
    const count = async (interval: KeyInterval) =>
      countSlotValues(bookkeeping, {
        datasetCode: code,
        slot: countSlotKey(indexSlot(index)),
        intervals: [interval],
        now: Date.now(),
        meter: new CapacityMeter(),
      });
    const asked = [
      { what: 'not null', interval: nonNullInterval(), expected: values.filter((v) => v !== null).length },
      { what: 'null', interval: nullInterval(), expected: values.filter((v) => v === null).length },
    ];
    if (probe && probe.field === index.field && STORED_AS_SENT.has(index.field) && probe.value !== null) {
      asked.push({
        what: `= ${String(probe.value)}`,
        interval: equalityInterval(probe.value as StoredValue).interval,
        expected: values.filter((v) => v === probe.value).length,
      });
    }
    for (const { what, interval, expected } of asked) {
      expect([index.field, what, await count(interval)]).toEqual([index.field, what, expected]);
    }
  }
}

it('answers every list, total, get-one and query as the applied configuration does over all stored records', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(valuesArb, { minLength: 1, maxLength: 8 }),
      fc.array(stepArb, { minLength: 3, maxLength: 10 }),
      async (initial, steps) => {
        run += 1;
        const code = `prop_${run}`;
        let shape: Shape = { present: new Set(['name', 'qty', 'kind']), indexed: new Set(['name']), qtyNumber: false };
        const records = new Map<string, Stored>();
        const ids: string[] = [];
        const h = live.harness;
        await live.apply(configFor(code, shape));
        await live.runIndexJobs();
        steps.unshift({ kind: 'batch', records: initial });

        const project = (stored: Stored) =>
          Object.fromEntries(
            POOL.filter((f) => shape.present.has(f.name)).map((f) => [f.name, stored[f.name] ?? null]),
          );
        const sent = (values: Record<string, Value>) =>
          Object.fromEntries(Object.entries(values).filter(([name]) => shape.present.has(name)));

        const list = async (paramMap: Record<string, unknown>) => {
          const answer = await h.getList(code, { pageSize: 100, ...paramMap });
          expect([paramMap, answer.body.errorMsg]).toEqual([paramMap, undefined]);
          return answer.body.data as { paging: { totalCount: number }; tableData: Record<string, unknown>[] };
        };
        const expectList = async (
          paramMap: Record<string, unknown>,
          keep: (s: Stored) => boolean,
          field?: string,
          direction: 'asc' | 'desc' = 'asc',
        ) => {
          const sign = direction === 'asc' ? 1 : -1;
          const expected = ids
            .filter((id) => keep(records.get(id) as Stored))
            .sort((a, b) => {
              const byField = field
                ? compareValues((records.get(a) as Stored)[field] ?? null, (records.get(b) as Stored)[field] ?? null)
                : 0;
              return sign * (byField || compareValues(a, b));
            });
          const data = await list(paramMap);
          expect([paramMap, data.paging.totalCount, data.tableData.map((r) => r.id)]).toEqual([
            paramMap,
            expected.length,
            expected,
          ]);
        };

        const storedValues = (field: string) => ids.map((id) => (records.get(id) as Stored)[field] ?? null);
        let checks = 0;
        const check = async (withQuery: boolean, probe?: { field: number; value: number }) => {
          // Every present field sorted, one way then the other: an index that misses, repeats or misorders a
          // record shows here.
          const direction = checks++ % 2 === 0 ? 'asc' : 'desc';
          for (const field of POOL.filter((f) => shape.present.has(f.name))) {
            await expectList({ ytSortList: [{ [field.name]: direction }] }, () => true, field.name, direction);
          }
          // Newest first and the exact total.
          await expectList({}, () => true, undefined, 'desc');
          if (probe) {
            const fields = POOL.filter((f) => shape.present.has(f.name));
            const field = fields[probe.field % fields.length] as FieldConfig;
            const domain = fc.sample(VALUES[field.name] as fc.Arbitrary<Value>, { numRuns: 8, seed: probe.value });
            const value = domain[probe.value % domain.length] as Value;
            await expectList({ [field.name]: value }, (s) => s[field.name] === value, undefined, 'desc');
            await expectList(
              { [`${field.name}_is_null`]: true },
              (s) => (s[field.name] ?? null) === null,
              undefined,
              'desc',
            );
            await expectCountedTotals(code, storedValues, { field: field.name, value });
            if (ORDERED.has(field.name)) {
              await expectList(
                { [`${field.name}_start`]: value },
                (s) =>
                  s[field.name] !== null &&
                  s[field.name] !== undefined &&
                  compareValues(s[field.name] as Value, value) >= 0,
                undefined,
                'desc',
              );
            }
          }
          const last = ids[ids.length - 1];
          if (last) {
            const one = await h.getOne(code, last);
            const { id, gmt_create: _c, gmt_modified: _m, ...fields } = one.body.data;
            expect([id, fields]).toEqual([last, project(records.get(last) as Stored)]);
          }
          if (!withQuery) return;
          const sql = await h.call('/api/custom/executeSql', { sqlCode: 'all' }, { datasetCode: null });
          expect(sql.body.data.execSuccess).toBe(true);
          const rows = (sql.body.data.execResult as Record<string, unknown>[]).map(
            ({ gmt_create: _c, gmt_modified: _m, ...row }) => row,
          );
          expect(rows).toEqual(
            [...ids].sort(compareValues).map((id) => {
              const fields = project(records.get(id) as Stored);
              // MySQL answers booleans as 1 and 0.
              if ('flag' in fields && fields.flag !== null) fields.flag = fields.flag ? 1 : 0;
              return { id, ...fields };
            }),
          );
        };

        for (const step of steps) {
          switch (step.kind) {
            case 'configure': {
              const next = changed(shape, step.change);
              if (!next) continue;
              shape = next;
              await live.apply(configFor(code, shape));
              break;
            }
            case 'create': {
              const answer = await h.create(code, sent(step.values));
              expect(answer.body.errorMsg).toBeUndefined();
              ids.push(answer.body.data.id);
              records.set(answer.body.data.id, { ...sent(step.values) });
              break;
            }
            case 'batch': {
              const answer = await h.batchCreate(code, step.records.map(sent));
              expect(answer.body.errorMsg).toBeUndefined();
              (answer.body.data as string[]).forEach((id, i) => {
                ids.push(id);
                records.set(id, { ...sent(step.records[i] as Record<string, Value>) });
              });
              break;
            }
            case 'update': {
              const id = ids[step.pick % Math.max(1, ids.length)];
              const values = sent(step.values);
              if (!id || Object.keys(values).length === 0) continue;
              const answer = await h.update(code, { id, ...values });
              expect(answer.body.errorMsg).toBeUndefined();
              Object.assign(records.get(id) as Stored, values);
              break;
            }
            case 'work':
              // A crashed turn: its page is worked on, its position and counts are not saved.
              for (let i = 0; i < step.units; i++) await live.stepIndexJobs(step.crash && i === 0);
              break;
            case 'probe':
              break;
          }
          await check(step.kind === 'configure' || step.kind === 'probe', step.kind === 'probe' ? step : undefined);
        }
        // And once every build and drop is done.
        await live.runIndexJobs();
        await check(true, { field: 0, value: 0 });
        await expectCountedTotals(code, storedValues);
      },
    ),
    { numRuns: 20, endOnFailure: true },
  );
}, 600_000);
