/**
 * What the total of a range reads once a bulk load is folded, and before, over dynalite: 5,000 `orders` records
 * loaded through batch-create (a distinct `amount` per record), folded as the folds beside the writes fold them,
 * then a tenth of the amounts' span counted. The first total after the fold reads what the next ones read: the
 * slot's head, the pages at the range's edges and the page list's part between, no change item. Batches the folds
 * have not reached yet are read by every total until a fold moves them into the pages: each its claim and its
 * `amount` values (one item per batch with every record's key, about 3 read units for 1,000 distinct amounts),
 * whatever part of them the range holds; the fold that follows brings the total back to what it read before. An
 * equality of `status` (four values) over the same batches reads their claims alone: each carries its counts per
 * status (storage/batch-counts.ts), and none of the batches' values items is read.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { equalityInterval, rangeInterval } from '../../../../../shared/records/value-encoding';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { interceptSend } from '../../../../support/intercept-send';
import { ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/** Read units by what was read, as the store reported them (`ReturnConsumedCapacity`). */
type Reads = Record<string, number>;

/** The kind of item a read reads, from its key or its key condition's lower bound. */
function readKind(input: Record<string, unknown>): string {
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const requests = input.RequestItems as Record<string, { Keys?: Record<string, unknown>[] }> | undefined;
  const key = String(
    (input.Key as Record<string, unknown> | undefined)?.['@sk'] ??
      values[':from'] ??
      Object.values(requests ?? {})[0]?.Keys?.[0]?.['@sk'] ??
      '',
  );
  if (key.startsWith('value-head#')) return 'head';
  if (key.startsWith('value-page#')) return 'pages';
  if (key.startsWith('value-list#')) return 'page list';
  if (key.startsWith('change-slot#')) return 'batch values';
  if (key.startsWith('change#')) return 'claims';
  return 'other';
}

function watching(client: DynamoDBDocumentClient, reads: { now?: Reads }): DynamoDBDocumentClient {
  return interceptSend(client, async (command, send) => {
    const result = (await send()) as {
      ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[];
    };
    const consumed = result.ConsumedCapacity;
    const units = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
      (sum, { CapacityUnits }) => sum + (CapacityUnits ?? 0),
      0,
    );
    const tally = reads.now;
    const isRead = /^(Get|BatchGet|Query)Command$/.test(command.constructor.name);
    if (tally && isRead) {
      const kind = readKind(command.input);
      tally[kind] = (tally[kind] ?? 0) + units;
    }
    return result;
  });
}

const STATUSES = ['new', 'paid', 'shipped', 'void'];
/** Record i of the load: amounts in cents spread over 0–9,999.99, one per record. */
const row = (i: number) => ({
  customer: `cust-${String(i % 500).padStart(3, '0')}`,
  amount: ((i * 7919) % 1_000_000) / 100,
  status: STATUSES[i % 4] as string,
});
/** A tenth of the amounts' span: wider than the few pages a total reads first, so the page list is read too. */
const tenth = rangeInterval({ value: 1_000, inclusive: true }, { value: 1_999.99, inclusive: true }).interval;

it('a total after a folded load reads what the next ones read; batches not folded yet cost their values until folded', async () => {
  const names = localTableNames('list-tail');
  await ensureTables(dynamo.client, names);
  const reads: { now?: Reads } = {};
  const orders = ordersDataset(watching(createDocumentClient(dynamo.client), reads), names, 'list-tail');
  let held = 0;
  const load = async (records: number) => {
    await orders.load(Array.from({ length: records }, (_, k) => row(held + k)));
    held += records;
  };
  /** The range's total now, its read units, and where they went. */
  const total = async () => {
    const meter = new CapacityMeter();
    reads.now = {};
    const count = await countSlotValues(orders.ports.bookkeeping, {
      datasetCode: 'orders',
      slot: orders.slotOf('amount'),
      intervals: [tenth],
      now: orders.clock.now,
      meter,
    });
    const byKind = reads.now;
    reads.now = undefined;
    return { count, readUnits: meter.readUnits, byKind };
  };
  /** The records of the load so far whose amount the range holds: what every total must say. */
  const inRange = () =>
    Array.from({ length: held }, (_, i) => row(i).amount).filter((amount) => amount >= 1_000 && amount <= 1_999.99)
      .length;

  await load(5_000);
  expect(await orders.foldSettled()).toMatchObject({ folded: 5_000, left: false });
  // The head (with the checked position), the highest pages and those at the lower edge, the list's part between.
  const pagesOnly = { head: 1, pages: 4, 'page list': 1, claims: 0 };
  expect(inRange()).toBe(506);
  expect(await total()).toEqual({ count: 506, readUnits: 6, byKind: pagesOnly });
  expect(await total()).toEqual({ count: 506, readUnits: 6, byKind: pagesOnly });

  // Batches not folded yet: each its claim (0.5 units for a few) and its `amount` values, about 3 units per batch of
  // 1,000 distinct amounts, whatever part of them the range holds; folded, the total reads what it read before.
  const unfolded = [
    { batches: 1, count: 607, readUnits: 9.5, batchValues: 3 },
    { batches: 3, count: 910, readUnits: 15, batchValues: 8.5 },
  ];
  for (const { batches, count, readUnits, batchValues } of unfolded) {
    await load(1_000 * batches);
    expect(inRange()).toBe(count);
    expect(await total()).toEqual({
      count,
      readUnits,
      byKind: { ...pagesOnly, claims: 0.5, 'batch values': batchValues },
    });
    expect(await orders.foldSettled()).toMatchObject({ folded: 1_000 * batches, left: false });
    expect(await total()).toEqual({ count, readUnits: 6, byKind: pagesOnly });
  }
}, 300_000);

it('an equality of a field of few values over batches not folded yet reads their claims, not their values', async () => {
  const names = localTableNames('list-tail-few');
  await ensureTables(dynamo.client, names);
  const reads: { now?: Reads } = {};
  const orders = ordersDataset(watching(createDocumentClient(dynamo.client), reads), names, 'list-tail-few');
  const paid = equalityInterval('paid').interval;
  const total = async () => {
    const meter = new CapacityMeter();
    reads.now = {};
    const count = await countSlotValues(orders.ports.bookkeeping, {
      datasetCode: 'orders',
      slot: orders.slotOf('status'),
      intervals: [paid],
      now: orders.clock.now,
      meter,
    });
    const byKind = reads.now;
    reads.now = undefined;
    return { count, readUnits: meter.readUnits, byKind };
  };
  await orders.load(Array.from({ length: 5_000 }, (_, i) => row(i)));
  expect(await orders.foldSettled()).toMatchObject({ folded: 5_000, left: false });
  expect(await total()).toEqual({ count: 1_250, readUnits: 2, byKind: { head: 1, pages: 1, claims: 0 } });
  await orders.load(Array.from({ length: 3_000 }, (_, i) => row(5_000 + i)));
  expect(await total()).toEqual({ count: 2_000, readUnits: 2.5, byKind: { head: 1, pages: 1, claims: 0.5 } });
}, 300_000);
