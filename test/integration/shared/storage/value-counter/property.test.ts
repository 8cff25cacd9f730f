/**
 * Per-value totals against an in-memory oracle, over dynalite: random histories of creates, updates and batch
 * creates, some of which die between their claim and their record write (the process stops: nothing after the
 * claim happens, not even the failure path) or part-way through a batch's writes, with totals asked at random
 * moments for equalities, `_in`, ranges, null and not-null on three indexed fields (one of four hot values, a
 * few hundred text values some longer than a count key keeps, numbers with nulls). Every total equals the number
 * of written records the oracle holds in the intervals, once the claims of dead writes are older than the settle
 * window and its check's slack; a total is refused (undefined) only when a bound cuts a group of long values.
 * Folds beside the writes (as the fold queue runs them, some cut short, some dying at their n-th write: after a
 * round's pages, after its page list's parts, before its head moves, in the middle of a split) come at random
 * moments too, over pages small enough that ranges cover many of them whole (counted from their sums), each followed
 * by the pass that deletes the change items behind the folds' heads (change-compaction.ts), which may die part-way too.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { applicationCaller } from '../../../../../shared/access/caller';
import { grantView } from '../../../../../shared/access/permissions';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { type Application, Catalog, type Dataset } from '../../../../../shared/catalog/catalog';
import type { CatalogConfig, FieldConfig, GrantConfig } from '../../../../../shared/catalog/schema';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import type { DataOperationContext } from '../../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../../shared/operations/batch-create';
import { createOperation } from '../../../../../shared/operations/create';
import { updateOperation } from '../../../../../shared/operations/update';
import type { StoredValue } from '../../../../../shared/records/field-values';
import {
  compareStoredValues,
  equalityInterval,
  type KeyInterval,
  MAX_COUNTED_CODE_POINTS,
  nonNullInterval,
  nullInterval,
  rangeInterval,
} from '../../../../../shared/records/value-encoding';
import { compactChanges } from '../../../../../shared/storage/change-compaction';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { CHECK_SLACK_MS, FOLD_LEASE_MS } from '../../../../../shared/storage/fold-limits';
import { IdempotencyStore } from '../../../../../shared/storage/idempotency-store';
import { countSlotKey, indexLayout } from '../../../../../shared/storage/index-attributes';
import { IndexBuildStore } from '../../../../../shared/storage/index-build-store';
import { datasetPartitionKey } from '../../../../../shared/storage/item-keys';
import { ListReader } from '../../../../../shared/storage/list-reader';
import { RecordBatchStore } from '../../../../../shared/storage/record-batch-store';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { RecordStore } from '../../../../../shared/storage/record-store';
import { RecordAttr } from '../../../../../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend } from '../../../../support/intercept-send';

const FIELDS: FieldConfig[] = [
  { name: 'status', type: 'enum', options: ['new', 'paid', 'shipped', 'void'], indexed: true },
  { name: 'customer', type: 'string', indexed: true },
  { name: 'amount', type: 'number', indexed: true },
];
type Field = 'status' | 'customer' | 'amount';
type Values = { status: string; customer: string | null; amount: number | null };

/**
 * Which writes fail, and how: the process dies at the first record write (or after `after` batch chunks), or, for a
 * fold, at its `after`-th write of any item (a count page, a part of the page list, the head, the checked position).
 */
interface Fault {
  after?: number;
  fold?: boolean;
}

let dynamo: EmbeddedDynamo;
let table: string;
let catalogTable: string;
let datasetNumber = 0;
/** The histories' clock (ms). */
let clock = Date.UTC(2026, 0, 1);
/** The fault the next write runs under, if any; once it strikes, every store call fails until it is cleared. */
let fault: (Fault & { struck?: boolean; sent: number }) | undefined;

/** The document client with the fault injected: a dead process sends nothing more. */
function faultyClient(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    if (fault && !fault.struck && (fault.fold ? isWrite(command.input) : isRecordWrite(command.input))) {
      if (fault.sent >= (fault.after ?? 0)) fault.struck = true;
      fault.sent += 1;
    }
    if (fault?.struck) return Promise.reject(new Error('the process stopped'));
    return send();
  });
}

/** Any write of one item: a put, an update or a delete (a get says how consistent it reads). */
function isWrite(input: Record<string, unknown>): boolean {
  if (input.Item !== undefined || input.UpdateExpression !== undefined) return true;
  return input.Key !== undefined && !('ConsistentRead' in input);
}

/** A write of a record (not of bookkeeping): its item or key is in a dataset's record partition. */
function isRecordWrite(input: Record<string, unknown>): boolean {
  const inRecords = (key: unknown) => String((key as Record<string, unknown> | undefined)?.['@pk']).startsWith('ds#');
  if (input.Item) return inRecords(input.Item);
  if (input.UpdateExpression) return inRecords(input.Key);
  if (input.RequestItems) return JSON.stringify(input.RequestItems).includes('"PutRequest"');
  return false;
}

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('values');
  await ensureTables(dynamo.client, names);
  table = names.Records as string;
  catalogTable = names.Catalog as string;
});
afterAll(() => dynamo.close());

const LONG = 'L'.repeat(MAX_COUNTED_CODE_POINTS);
const customer = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 300 }).map((n) => `c${n}`) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }).map((n) => `${LONG}${n}`) },
  { weight: 1, arbitrary: fc.constant(null) },
);
const amount = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -50, max: 250 }) },
  { weight: 2, arbitrary: fc.integer({ min: -1000, max: 1000 }).map((n) => n / 100) },
  { weight: 1, arbitrary: fc.constant(null) },
);
// A quarter of all writes carry `new`: the hot value.
const status = fc.oneof(
  { weight: 1, arbitrary: fc.constant('new') },
  { weight: 3, arbitrary: fc.constantFrom('paid', 'shipped', 'void') },
);
const values: fc.Arbitrary<Values> = fc.record({ status, customer, amount });

type Step =
  | { kind: 'create'; values: Values; dies: boolean }
  | { kind: 'update'; pick: number; field: Field; values: Values; dies: boolean }
  | { kind: 'batch'; rows: Values[]; diesAfterChunks?: number }
  | { kind: 'wait'; ms: number }
  | { kind: 'count'; field: Field; query: Query }
  | { kind: 'fold'; cutShort: boolean; smallRounds: boolean; diesAfterWrites?: number };

type Query =
  | { op: 'eq'; value: StoredValue | null }
  | { op: 'in'; values: (StoredValue | null)[] }
  | { op: 'range'; lower?: StoredValue; upper?: StoredValue }
  | { op: 'notNull' };

const query: fc.Arbitrary<{ field: Field; query: Query }> = fc.oneof(
  fc.record({
    field: fc.constant('status' as const),
    query: fc.record({ op: fc.constant('eq' as const), value: status }),
  }),
  fc.record({
    field: fc.constant('status' as const),
    query: fc.record({
      op: fc.constant('in' as const),
      values: fc.uniqueArray(status, { minLength: 1, maxLength: 3 }),
    }),
  }),
  fc.record({
    field: fc.constant('customer' as const),
    query: fc.record({ op: fc.constant('eq' as const), value: customer }),
  }),
  fc.record({
    field: fc.constant('customer' as const),
    query: fc.record({
      op: fc.constant('range' as const),
      lower: fc.option(
        fc.integer({ min: 0, max: 300 }).map((n) => `c${n}`),
        { nil: undefined },
      ),
      upper: fc.option(
        fc.integer({ min: 0, max: 300 }).map((n) => `c${n}`),
        { nil: undefined },
      ),
    }),
  }),
  fc.record({
    field: fc.constant('amount' as const),
    query: fc.record({ op: fc.constant('eq' as const), value: amount }),
  }),
  fc.record({
    field: fc.constant('amount' as const),
    query: fc.record({
      op: fc.constant('range' as const),
      lower: fc.option(fc.integer({ min: -60, max: 260 }), { nil: undefined }),
      upper: fc.option(fc.integer({ min: -60, max: 260 }), { nil: undefined }),
    }),
  }),
  fc.record({
    field: fc.constantFrom('customer' as const, 'amount' as const),
    query: fc.constant({ op: 'notNull' as const }),
  }),
);

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      values,
      dies: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      pick: fc.nat(),
      field: fc.constantFrom('status' as const, 'customer' as const, 'amount' as const),
      values,
      dies: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        kind: fc.constant('batch' as const),
        // Sizes spread evenly up to five chunks of 25: enough records to fold and to split pages.
        rows: fc.integer({ min: 1, max: 120 }).chain((n) => fc.array(values, { minLength: n, maxLength: n })),
        diesAfterChunks: fc.integer({ min: 0, max: 4 }),
      },
      { requiredKeys: ['kind', 'rows'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 3 * SETTLE_MS }) }),
  },
  { weight: 5, arbitrary: query.map((q) => ({ kind: 'count' as const, ...q })) },
  {
    // The fold beside the writes, as the fold queue runs it: sometimes cut short (a turn of no time at all), sometimes
    // in rounds small enough that a batch's claims are cut into several and pages split within a round.
    weight: 2,
    // Some die at their n-th write: after pages, after the page list's parts (sums given or taken away, keys added),
    // before the head moves, in the middle of a split.
    arbitrary: fc.record(
      {
        kind: fc.constant('fold' as const),
        cutShort: fc.boolean(),
        smallRounds: fc.boolean(),
        diesAfterWrites: fc.integer({ min: 0, max: 40 }),
      },
      { requiredKeys: ['kind', 'cutShort', 'smallRounds'] },
    ),
  },
);

function intervalsOf(q: Query): KeyInterval[] {
  switch (q.op) {
    case 'eq':
      return [q.value === null ? nullInterval() : equalityInterval(q.value).interval];
    case 'in':
      return [...new Set(q.values)]
        .map((v) => (v === null ? nullInterval() : equalityInterval(v).interval))
        .sort((a, b) => (a.lower < b.lower ? -1 : 1));
    case 'range':
      return [
        rangeInterval(
          q.lower === undefined ? undefined : { value: q.lower, inclusive: true },
          q.upper === undefined ? undefined : { value: q.upper, inclusive: true },
        ).interval,
      ];
    case 'notNull':
      return [nonNullInterval()];
  }
}

function oracleMatches(value: StoredValue | null, q: Query): boolean {
  switch (q.op) {
    case 'eq':
      return q.value === null ? value === null : value !== null && compareStoredValues(value, q.value) === 0;
    case 'in':
      return q.values.some((v) =>
        v === null ? value === null : value !== null && compareStoredValues(value, v) === 0,
      );
    case 'range':
      if (value === null) return false;
      if (q.lower !== undefined && compareStoredValues(value, q.lower) < 0) return false;
      return q.upper === undefined || compareStoredValues(value, q.upper) <= 0;
    case 'notNull':
      return value !== null;
  }
}

/** A query whose bound a count key cannot place: a long text value's group. */
function cutsAGroup(q: Query): boolean {
  const long = (v: unknown) => typeof v === 'string' && v.length > MAX_COUNTED_CODE_POINTS;
  return q.op === 'eq' ? long(q.value) : q.op === 'in' ? q.values.some(long) : false;
}

it('totals equal the written records, whatever the writes, their deaths and the moments of asking', async () => {
  const client = faultyClient(createDocumentClient(dynamo.client));
  const ports = {
    records: new RecordStore(client, table),
    lists: new ListReader(client, table),
    bookkeeping: new DatasetBookkeeping(client, table),
    recordBatches: new RecordBatchStore(client, table),
    idempotency: new IdempotencyStore(client, table),
    indexBuilds: new IndexBuildStore(client, { records: table, catalog: catalogTable }),
  };
  const reader = createDocumentClient(dynamo.client);
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 40 }), async (steps) => {
      const code = `vals${datasetNumber++}`;
      const catalog = new Catalog({
        applications: [
          {
            appCode: 'app',
            name: 'app',
            accessKey: 'ak-property-0001',
            signingSecret: 'sk-property-secret',
            grants: [{ datasetCode: code, operations: ['read', 'create', 'update'] }],
          },
        ],
        datasets: [{ appCode: 'app', datasetCode: code, name: code, fields: FIELDS }],
      } as CatalogConfig);
      const ds = catalog.dataset(code) as Dataset;
      const application = catalog.application('app') as Application;
      const grant = application.grants.get(code) as GrantConfig;
      const layout = indexLayout(ds);
      // The clock goes on from the previous run: record ids are monotonic in a process, so a clock set back
      // would make every id ahead of it (a create then claims at a fresh position instead of its id).
      clock += SETTLE_MS;
      const now = () => clock;
      let deadClaimsSettleAt = 0;
      const context = (operation: 'create' | 'update' | 'batch-create'): DataOperationContext => ({
        requestId: `r${clock}`,
        operation,
        caller: applicationCaller(application),
        catalog,
        dataset: ds,
        grant,
        view: grantView(grant, ds),
        ports,
        telemetry: { capacity: new CapacityMeter(), metric: () => {}, detail: () => {} },
        now,
      });
      const run = async (dies: boolean, after: number | undefined, write: () => Promise<unknown>): Promise<void> => {
        fault = dies ? { sent: 0, ...(after === undefined ? {} : { after }) } : undefined;
        try {
          await write();
        } catch (error) {
          if (!fault?.struck) throw error;
          deadClaimsSettleAt = clock + SETTLE_MS + CHECK_SLACK_MS + 1;
        } finally {
          fault = undefined;
        }
      };
      const given = (v: Values) => Object.fromEntries(Object.entries(v).filter(([, value]) => value !== null));

      for (const s of steps) {
        clock += 7;
        if (s.kind === 'wait') {
          clock += s.ms;
        } else if (s.kind === 'create') {
          await run(s.dies, undefined, () => createOperation.run(context('create'), { paramMap: given(s.values) }));
        } else if (s.kind === 'update') {
          const ids = [...(await stored(reader, code)).keys()];
          if (ids.length === 0) continue;
          const id = ids[s.pick % ids.length] as string;
          const paramMap = { id, [s.field]: s.values[s.field] };
          await run(s.dies, undefined, () => updateOperation.run(context('update'), { paramMap }));
        } else if (s.kind === 'batch') {
          await run(s.diesAfterChunks !== undefined, s.diesAfterChunks, () =>
            batchCreateOperation.run(context('batch-create'), { paramList: s.rows.map(given) }),
          );
        } else if (s.kind === 'fold') {
          fault = s.diesAfterWrites === undefined ? undefined : { fold: true, after: s.diesAfterWrites, sent: 0 };
          try {
            const folded = await foldDatasetTotals(ports.bookkeeping, {
              datasetCode: code,
              slots: [...layout.values()].map(countSlotKey),
              now: clock,
              meter: new CapacityMeter(),
              until: s.cutShort ? performance.now() : performance.now() + 60_000,
              // Small pages, so that a few hundred records make many and ranges cover pages whole; small rounds
              // split them, and the page list's small parts, often.
              ...(s.smallRounds
                ? { rounds: { records: 40, pageBytes: 120, pages: 2 }, pageLimits: { page: 160, listPart: 48 } }
                : { pageLimits: { page: 240, listPart: 400 } }),
            });
            // Then the pass that deletes the claims behind the heads, as the fold beside the writes runs it (with
            // a lag of the settle window only, so that it deletes within a history's minutes).
            await compactChanges(ports.bookkeeping.compaction, {
              datasetCode: code,
              totalsFrom: folded.readsFrom,
              now: clock,
              meter: new CapacityMeter(),
              lagMs: SETTLE_MS,
            });
          } catch (error) {
            if (!fault?.struck) throw error;
            // The dead folder's lease runs out before another fold can take the slot.
            clock += FOLD_LEASE_MS;
          } finally {
            fault = undefined;
          }
        } else {
          clock = Math.max(clock, deadClaimsSettleAt);
          const slot = layout.get(s.field);
          if (!slot) throw new Error(`no slot for ${s.field}`);
          const total = await countSlotValues(ports.bookkeeping, {
            datasetCode: code,
            slot: countSlotKey(slot),
            intervals: intervalsOf(s.query),
            now: clock,
            meter: new CapacityMeter(),
          });
          if (total === undefined) {
            expect(cutsAGroup(s.query)).toBe(true);
            continue;
          }
          const records = [...(await stored(reader, code)).values()];
          const expected = records.filter((record) => oracleMatches(record[s.field] ?? null, s.query)).length;
          expect({ step: s, total }).toEqual({ step: s, total: expected });
        }
      }
    }),
    { numRuns: 30 },
  );
}, 600_000);

/** The dataset's records as stored (the oracle's ground truth), read one by one from its partition. */
async function stored(client: DynamoDBDocumentClient, code: string): Promise<Map<string, Record<string, StoredValue>>> {
  const records = new Map<string, Record<string, StoredValue>>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey },
        ExpressionAttributeValues: { ':pk': datasetPartitionKey(code) },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? [])
      records.set(item[RecordAttr.sortKey] as string, item as Record<string, StoredValue>);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return records;
}
