/**
 * A year of a small dataset's life over HTTP, on a driven clock: 20 records of `items` (five indexed fields), ten
 * updates a week for 52 weeks (some with an Idempotency-Key), the change log and the folds beside the writes running
 * as `npm start` runs them, and the twin of DynamoDB's TTL passing over the tables. What the store holds at the end
 * is what it held after the first weeks: the records, their indexes' bookkeeping (counts, heads, the checked and
 * compacted positions), the events of the last 30 days (the retention), nothing of the history before; and the totals
 * are still exact.
 */
import path from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createHandler } from '../../../../../shared/composition/pipeline';
import type { Operation } from '../../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../../shared/operations/batch-create';
import { createOperation } from '../../../../../shared/operations/create';
import { getListOperation } from '../../../../../shared/operations/get-list-operation';
import { updateOperation } from '../../../../../shared/operations/update';
import { environment } from '../../../../../shared/runtime/environment';
import { COMPACTION_LAG_MS } from '../../../../../shared/storage/change-compaction';
import { removeExpired, ScannedExpiry } from '../../../../../shared/storage/expired-items';
import { TABLES } from '../../../../../shared/storage/table-definitions';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

const OPERATIONS: Record<string, Operation> = {
  'batch-create': batchCreateOperation,
  create: createOperation,
  update: updateOperation,
  'get-list': getListOperation,
};
const DAY = 86_400_000;
const WEEK = 7 * DAY;
const RETENTION_DAYS = 30;
const start = Date.now();
let ticks = 0;
let offset = 0;
const clock = () => start + offset + ++ticks;
const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'), {
  clock,
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation, { now: clock }) : undefined;
  },
});
const STATUSES = ['new', 'paid', 'shipped'];

interface Row {
  id: string;
  status: string;
  price: number;
}
const rows: Row[] = [];
/** When each update was made (the events the change log keeps are those of the last 30 days). */
const updatedAt: number[] = [];

/** Items of the store by kind: records, each kind of bookkeeping item, events, idempotency items. */
async function inventory(): Promise<Record<string, number>> {
  const { client } = harness.dynamo();
  const env = environment();
  const kinds: Record<string, number> = {};
  const count = (kind: string) => {
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  };
  for (const table of [env.recordsTable, env.eventsTable as string]) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey }));
      for (const item of page.Items ?? []) {
        const pk = item['@pk'] as string;
        const sk = item['@sk'] as string;
        if (pk.startsWith('ds#')) count('record');
        else if (pk.startsWith('meta#')) count(`meta:${sk.startsWith('01') ? 'bulk-group' : sk.split('#')[0]}`);
        else if (pk.startsWith('ev#')) count('event');
        else count(pk.split('#')[0] as string);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  return kinds;
}

async function sweepExpired(): Promise<number> {
  const env = environment();
  const names: Record<string, string> = {
    Records: env.recordsTable,
    Catalog: env.catalogTable,
    Quota: env.quotaTable,
    Events: env.eventsTable as string,
  };
  const expiry = new ScannedExpiry(
    harness.dynamo().client,
    TABLES.map((definition) => ({ name: names[definition.logicalName] as string, definition })),
  );
  return removeExpired(expiry, clock());
}

/** A week: ten updates, some sent with an Idempotency-Key, then the week passes and the work beside settles. */
async function week(n: number): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const row = rows[(n * 10 + i) % rows.length] as Row;
    row.status = STATUSES[(n + i) % 3] as string;
    row.price = (n * 3 + i) % 40;
    const res = await harness.update(
      'items',
      { id: row.id, status: row.status, price: row.price },
      { timeStamp: clock(), ...(i % 5 === 0 ? { headers: { 'Idempotency-Key': `week-${n}-${i}` } } : {}) },
    );
    expect([res.status, res.body.errorMsg]).toEqual([200, undefined]);
    updatedAt.push(clock());
    offset += 1_000;
  }
  offset += WEEK;
  await harness.changesSettled();
  // The pass that deletes what the last one proposed comes at the next write's fold, or when it asked to come.
  offset += COMPACTION_LAG_MS;
  await harness.changesSettled();
}

async function total(paramMap: Record<string, unknown>): Promise<number> {
  const res = await harness.getList('items', { ...paramMap, pageSize: 1 }, { timeStamp: clock() });
  expect(res.status).toBe(200);
  return res.body.data.paging.totalCount as number;
}

beforeAll(async () => {
  await harness.start();
  const paramList = Array.from({ length: 10 }, (_, i) => ({ name: `bulk-${i}`, qty: i, price: i, status: 'new' }));
  const batch = await harness.batchCreate('items', paramList, { timeStamp: clock() });
  expect(batch.body.success).toBe(true);
  for (const id of batch.body.data as string[]) rows.push({ id, status: 'new', price: rows.length });
  for (let i = 10; i < 20; i++) {
    const res = await harness.create(
      'items',
      { name: `one-${i}`, qty: i, price: i, status: 'new' },
      { timeStamp: clock() },
    );
    expect(res.body.success).toBe(true);
    rows.push({ id: res.body.data.id as string, status: 'new', price: i });
  }
}, 60_000);
afterAll(() => harness.stop());

it('after a year of updates the store holds the records, their bookkeeping and the last 30 days of events', async () => {
  for (let n = 0; n < 8; n++) await week(n);
  await sweepExpired();
  const early = await inventory();
  // Eight weeks in: no change item older than the last week's, no idempotency item older than a day.
  expect(early.record).toBe(20);
  expect(early['meta:change'] ?? 0).toBeLessThanOrEqual(10);
  expect(early.idem).toBeUndefined();

  for (let n = 8; n < 52; n++) await week(n);
  // A quiet hour after the last week: every claim is past the lag, and the pass it asked for deletes them.
  for (let i = 0; i < 3; i++) {
    offset += COMPACTION_LAG_MS;
    await harness.changesSettled();
  }
  await sweepExpired();
  const end = await inventory();

  const now = clock();
  const kept = updatedAt.filter((at) => at + RETENTION_DAYS * DAY > now).length;
  expect(kept).toBeGreaterThan(0);
  const { event, ...rest } = end;
  expect(event).toBe(kept);
  const { event: _early, 'meta:change': _claims, 'meta:change-slot': _values, ...earlyRest } = early;
  // Records and bookkeeping as after eight weeks, with no change item left and no idempotency item kept.
  expect(rest).toEqual(earlyRest);
  expect(rest['meta:change']).toBeUndefined();
  expect(rest['meta:change-slot']).toBeUndefined();

  // The totals are exact after a year of folds and deletions.
  for (const status of STATUSES) {
    expect(await total({ status })).toBe(rows.filter((row) => row.status === status).length);
  }
  expect(await total({ price_start: 10, price_end: 29 })).toBe(
    rows.filter((row) => row.price >= 10 && row.price <= 29).length,
  );
  expect(await total({})).toBe(20);
}, 600_000);
