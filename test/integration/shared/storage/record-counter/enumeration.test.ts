/**
 * The record counter against enumeration, over dynalite: random histories of single creates, bulk groups
 * (completed, or left open by a failed invocation with only part of their records written), records written
 * before the count index existed, and counts at moments that only move forward. Every write lands within
 * MAX_INVOCATION_MS of the time its key was taken, as the functions' timeouts guarantee. After every count, the
 * total equals the number of records in the partition, read one by one.
 */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { ulid } from 'ulid';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import type { CountStore } from '../../../../../shared/storage/count-store';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { datasetPartitionKey } from '../../../../../shared/storage/item-keys';
import {
  beginBulkCreate,
  CHECKPOINT_MIN_ADVANCE,
  countRecords,
  estimateRecordCount,
  MAX_INVOCATION_MS,
  SETTLE_MS,
} from '../../../../../shared/storage/record-counter';
import { RecordStore } from '../../../../../shared/storage/record-store';
import { RecordAttr } from '../../../../../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';

let dynamo: EmbeddedDynamo;
let store: RecordStore;
let counts: CountStore;
let doc: ReturnType<typeof createDocumentClient>;
let table: string;
let datasetNumber = 0;

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('counter');
  await ensureTables(dynamo.client, names);
  table = names.Records as string;
  doc = createDocumentClient(dynamo.client);
  store = new RecordStore(doc, table);
  counts = new DatasetBookkeeping(doc, table);
});
afterAll(() => dynamo.close());

/** Every record of the dataset, read one by one from its partition. */
async function enumerate(datasetCode: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey },
        ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode) },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    count += page.Items?.length ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

/** A create's claim, at a clock standing at `ms` (the dataset has no indexed field). */
function claimAt(ms: number) {
  return { values: {}, now: () => ms };
}

/** A record put directly, as a bulk writer or an earlier version of the service writes it. */
async function putRaw(datasetCode: string, id: string, extra: Record<string, unknown> = {}): Promise<void> {
  await doc.send(
    new PutCommand({
      TableName: table,
      Item: { [RecordAttr.partitionKey]: datasetPartitionKey(datasetCode), [RecordAttr.sortKey]: id, v: 1, ...extra },
    }),
  );
}

type Step =
  | { kind: 'create'; lagMs: number }
  | { kind: 'bulk'; size: number; written: number; complete: boolean; lagMs: number }
  | { kind: 'count' }
  | { kind: 'wait'; ms: number };

const lag = fc.integer({ min: 0, max: MAX_INVOCATION_MS });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('create' as const), lagMs: lag }) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        kind: fc.constant('bulk' as const),
        size: fc.integer({ min: 1, max: 30 }),
        written: fc.integer({ min: 0, max: 30 }),
        complete: fc.boolean(),
        lagMs: lag,
      })
      // A completed group wrote every record; a failed one wrote some (its writer stopped part-way).
      .map((s) => ({ ...s, written: s.complete ? s.size : Math.min(s.written, s.size) })),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'count' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 3 * SETTLE_MS }) }),
  },
);

it('a total always equals the records enumerated, whatever the history of writes and counts', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 5 }),
      fc.array(step, { minLength: 1, maxLength: 40 }),
      async (old, steps) => {
        const datasetCode = `prop${datasetNumber++}`;
        let now = Date.UTC(2026, 0, 1);
        // Records of an earlier version (no count entry), long settled.
        for (let i = 0; i < old; i++) await putRaw(datasetCode, ulid(now - 3_600_000 + i));
        // Groups left open by a failed writer: until they settle, a total counts the records they claimed.
        const open: { keyTime: number; missing: number }[] = [];
        const claimedButMissing = () =>
          open.filter((g) => g.keyTime > now - SETTLE_MS).reduce((sum, g) => sum + g.missing, 0);
        for (const s of steps) {
          if (s.kind === 'wait') {
            now += s.ms;
          } else if (s.kind === 'create') {
            // The id is taken at `now - lag` and the write lands now: within one invocation.
            await store.create(datasetCode, ulid(now - s.lagMs), { v: 1 }, new CapacityMeter(), claimAt(now));
          } else if (s.kind === 'bulk') {
            const ids = Array.from({ length: s.size }, () => ulid(now - s.lagMs)).sort();
            const group = await beginBulkCreate(
              counts,
              datasetCode,
              { count: s.size, firstId: ids[0] as string, lastId: ids[ids.length - 1] as string, now: now - s.lagMs },
              new CapacityMeter(),
            );
            for (const id of ids.slice(0, s.written)) await putRaw(datasetCode, id, group.recordAttributes);
            if (s.complete) await group.complete(new CapacityMeter());
            else open.push({ keyTime: now - s.lagMs, missing: s.size - s.written });
          } else {
            const total = await countRecords(counts, datasetCode, now, new CapacityMeter());
            expect(total).toBe((await enumerate(datasetCode)) + claimedButMissing());
          }
        }
        now += SETTLE_MS + 1;
        expect(await countRecords(counts, datasetCode, now, new CapacityMeter())).toBe(await enumerate(datasetCode));
      },
    ),
    { numRuns: 60 },
  );
}, 120_000);

it('counts completed writes exactly at once, before they settle', async () => {
  const datasetCode = 'at-once';
  const now = Date.UTC(2026, 0, 1);
  for (let i = 0; i < 5; i++) {
    await store.create(datasetCode, ulid(now - 1000 + i), { v: 1 }, new CapacityMeter(), claimAt(now));
  }
  const ids = Array.from({ length: 40 }, () => ulid(now)).sort();
  const group = await beginBulkCreate(
    counts,
    datasetCode,
    { count: 40, firstId: ids[0] as string, lastId: ids[39] as string, now },
    new CapacityMeter(),
  );
  for (const id of ids) await putRaw(datasetCode, id, group.recordAttributes);
  await group.complete(new CapacityMeter());
  expect(await countRecords(counts, datasetCode, now + 10, new CapacityMeter())).toBe(45);
  expect(await enumerate(datasetCode)).toBe(45);
});

it('reads one small entry for a bulk group of 1,000, not 1,000 records', async () => {
  const datasetCode = 'bulk-thousand';
  const start = Date.UTC(2026, 0, 1);
  // A settled checkpoint first, so the next counts read only the tail.
  await countRecords(counts, datasetCode, start, new CapacityMeter());
  const ids = Array.from({ length: 1000 }, () => ulid(start + 1000)).sort();
  const group = await beginBulkCreate(
    counts,
    datasetCode,
    { count: 1000, firstId: ids[0] as string, lastId: ids[999] as string, now: start + 1000 },
    new CapacityMeter(),
  );
  for (let i = 0; i < ids.length; i += 25) {
    await Promise.all(ids.slice(i, i + 25).map((id) => putRaw(datasetCode, id, group.recordAttributes)));
  }
  await group.complete(new CapacityMeter());
  const meter = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, start + 2000, meter)).toBe(1000);
  // The checkpoint (0.5) and one entry of the count index (0.5): no record is read.
  expect(meter.readUnits).toBe(1);
  expect(meter.writeUnits).toBe(0);
});

it('checks a group its writer never completed once it settles, and records what it found', async () => {
  const datasetCode = 'bulk-failed';
  const start = Date.UTC(2026, 0, 1);
  await countRecords(counts, datasetCode, start, new CapacityMeter());
  const ids = Array.from({ length: 10 }, () => ulid(start + 1000)).sort();
  const group = await beginBulkCreate(
    counts,
    datasetCode,
    { count: 10, firstId: ids[0] as string, lastId: ids[9] as string, now: start + 1000 },
    new CapacityMeter(),
  );
  // The invocation stopped after 4 of its 10 records.
  for (const id of ids.slice(0, 4)) await putRaw(datasetCode, id, group.recordAttributes);
  // While the group may still be writing, it counts what it claims.
  expect(await countRecords(counts, datasetCode, start + 2000, new CapacityMeter())).toBe(10);
  const settling = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, start + 1000 + SETTLE_MS + 1, settling)).toBe(4);
  // The check wrote the group's true size and a checkpoint past it; later counts read neither again.
  expect(settling.writeUnits).toBe(2);
  const later = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, start + 1000 + 2 * SETTLE_MS, later)).toBe(4);
  expect(later.writeUnits).toBe(0);
  expect(later.readUnits).toBe(0.5);
});

it('moves the checkpoint only past settled entries, and only every CHECKPOINT_MIN_ADVANCE of them', async () => {
  const datasetCode = 'advance';
  const start = Date.UTC(2026, 0, 1);
  await countRecords(counts, datasetCode, start, new CapacityMeter());
  for (let i = 0; i < CHECKPOINT_MIN_ADVANCE - 1; i++) {
    await store.create(datasetCode, ulid(start + 10 + i), { v: 1 }, new CapacityMeter(), claimAt(start + 10 + i));
  }
  const notYet = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, start + 10 + SETTLE_MS + 100, notYet)).toBe(
    CHECKPOINT_MIN_ADVANCE - 1,
  );
  expect(notYet.writeUnits).toBe(0);
  await store.create(datasetCode, ulid(start + 200), { v: 1 }, new CapacityMeter(), claimAt(start + 200));
  const unsettled = new CapacityMeter();
  // The last record is not settled yet at this moment: still fewer settled entries than the minimum.
  expect(await countRecords(counts, datasetCode, start + 150 + SETTLE_MS, unsettled)).toBe(CHECKPOINT_MIN_ADVANCE);
  expect(unsettled.writeUnits).toBe(0);
  const advancing = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, start + 201 + SETTLE_MS, advancing)).toBe(CHECKPOINT_MIN_ADVANCE);
  expect(advancing.writeUnits).toBe(1);
});

it('counts records written before the count index, once, and waits while such a record is recent', async () => {
  const datasetCode = 'earlier';
  const now = Date.UTC(2026, 0, 1);
  for (let i = 0; i < 7; i++) await putRaw(datasetCode, ulid(now - 3_600_000 + i));
  // One written by the earlier version a few seconds ago: others like it may still be in flight.
  await putRaw(datasetCode, ulid(now - 5_000));
  const waiting = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, now, waiting)).toBe(8);
  expect(waiting.writeUnits).toBe(0);
  const first = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, now + SETTLE_MS, first)).toBe(8);
  expect(first.writeUnits).toBe(1);
  await store.create(datasetCode, ulid(now + SETTLE_MS), { v: 1 }, new CapacityMeter(), claimAt(now + SETTLE_MS));
  const next = new CapacityMeter();
  expect(await countRecords(counts, datasetCode, now + SETTLE_MS + 1, next)).toBe(9);
  // Checkpoint and one index entry: the partition is not read again.
  expect(next.readUnits).toBe(1);
});

it('gives a reader that may not write the count a list starts from, writing nothing', async () => {
  const datasetCode = 'estimate';
  const start = Date.UTC(2026, 0, 1);
  await countRecords(counts, datasetCode, start, new CapacityMeter());
  for (let i = 0; i < 40; i++)
    await store.create(datasetCode, ulid(start + 10 + i), { v: 1 }, new CapacityMeter(), claimAt(start + 10 + i));
  const meter = new CapacityMeter();
  expect(await estimateRecordCount(counts, datasetCode, meter)).toBe(40);
  expect(meter.writeUnits).toBe(0);
  expect(meter.readUnits).toBe(1);
});
