/**
 * A slot with more count pages than one item could list, over dynalite (which refuses items over DynamoDB's 400 KB,
 * as DynamoDB does). With pages and list parts made small through the fold's limits, 3,600 distinct customers of
 * 32 four-byte characters give one page each, whose lowest keys take some 480 KB together: past what the former
 * single list item could hold. Every item written stays under the limit, each part of the list under its own, the
 * list names exactly the pages there are, and the totals are exact. And a slot that still has the former single
 * list is read, then moved into parts by its next split, its totals exact throughout. Folds that die part-way
 * through writing the list (its first parts, a part's split) leave totals exact and a list the next fold completes.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import {
  equalityInterval,
  type KeyInterval,
  nonNullInterval,
  rangeInterval,
} from '../../../../../shared/records/value-encoding';
import { CHECK_SLACK_MS, type CountPageLimits, FOLD_LEASE_MS } from '../../../../../shared/storage/fold-limits';
import {
  datasetMetaPartition,
  valuePageListKey,
  valuePageListPartPrefix,
  valuePagePrefix,
} from '../../../../../shared/storage/item-keys';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { RecordAttr } from '../../../../../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend } from '../../../../support/intercept-send';
import { ORDERS_FIELDS, type OrdersDataset, type OrdersField, ordersDataset } from './orders-dataset';

const ITEM_LIMIT_BYTES = 400 * 1024;

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/** The client, keeping the largest item it was asked to put (as JSON, a little more than DynamoDB counts). */
function measuringItems(client: DynamoDBDocumentClient, largest: { bytes: number }): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    const { Item, RequestItems } = command.input as {
      Item?: unknown;
      RequestItems?: Record<string, { PutRequest?: { Item: unknown } }[]>;
    };
    const items = [
      ...(Item ? [Item] : []),
      ...Object.values(RequestItems ?? {}).flatMap((requests) =>
        Array.isArray(requests) ? requests.flatMap((request) => request.PutRequest?.Item ?? []) : [],
      ),
    ];
    for (const item of items) largest.bytes = Math.max(largest.bytes, Buffer.byteLength(JSON.stringify(item)));
    return send();
  });
}

/** Every item of the dataset's meta partition under a sort key prefix. */
async function itemsUnder(client: DynamoDBDocumentClient, table: string, prefix: string) {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
        ExpressionAttributeValues: { ':pk': datasetMetaPartition('orders'), ':prefix': prefix },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** The slot's count pages and its page list as stored: the lowest keys each names, and each part's keys. */
async function storedList(client: DynamoDBDocumentClient, table: string, slot: string) {
  const pagePrefix = valuePagePrefix(slot);
  const pages = await itemsUnder(client, table, pagePrefix);
  const parts = (await itemsUnder(client, table, valuePageListPartPrefix(slot))).map(
    (item) => JSON.parse(item.lowests as string) as string[],
  );
  return {
    pageLowests: pages.map((item) => (item[RecordAttr.sortKey] as string).slice(pagePrefix.length)),
    marked: pages.filter((item) => item.splitAt !== undefined).length,
    parts,
  };
}

async function fold(orders: OrdersDataset, pageLimits: CountPageLimits) {
  orders.clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
  return foldDatasetTotals(orders.ports.bookkeeping, {
    datasetCode: 'orders',
    slots: ORDERS_FIELDS.map(orders.slotOf),
    now: orders.clock.now,
    meter: new CapacityMeter(),
    until: Number.POSITIVE_INFINITY,
    // A round adds at most this much to a page, so that a page's split mark stays small with pages this small.
    rounds: { records: 100_000, pageBytes: 20_000, pages: 256 },
    pageLimits,
  });
}

function total(orders: OrdersDataset, field: OrdersField, interval: KeyInterval) {
  return countSlotValues(orders.ports.bookkeeping, {
    datasetCode: 'orders',
    slot: orders.slotOf(field),
    intervals: [interval],
    now: orders.clock.now,
    meter: new CapacityMeter(),
  });
}

/** Customer `n` (below 64^4): four characters that sort as `n` does, then 28 more: 32 characters of 4 bytes. */
function customer(n: number): string {
  const digits = [3, 2, 1, 0].map((place) => String.fromCodePoint(0x1f300 + (Math.floor(n / 64 ** place) % 64)));
  return `${digits.join('')}${'\u{1f600}'.repeat(28)}`;
}

const STATUSES = ['new', 'paid', 'shipped', 'void'];

it('a slot whose pages one item could not list keeps every item under 400 KB, and its totals exact', async () => {
  const names = localTableNames('page-list');
  await ensureTables(dynamo.client, names);
  const largest = { bytes: 0 };
  const client = measuringItems(createDocumentClient(dynamo.client), largest);
  const orders = ordersDataset(client, names, 'page-list');
  const count = 3_600;
  // In an order unlike the customers' own (7,919 is prime), so that every round touches pages all over the slot.
  const rows = Array.from({ length: count }, (_, k) => {
    const n = (k * 7_919) % count;
    return { customer: customer(n), amount: n, status: STATUSES[n % 4] as string };
  });
  await orders.load(rows, 400);
  const limits = { page: 300, listPart: 8_192 };
  expect(await fold(orders, limits)).toMatchObject({ folded: count, left: false });

  const table = names.Records as string;
  const list = await storedList(client, table, orders.slotOf('customer'));
  const listed = list.parts.flat();
  // One page per customer (the first, '', holds the lowest), each listed once; no split left half done.
  expect(list.pageLowests.length).toBe(count);
  expect(new Set(listed)).toEqual(new Set(list.pageLowests));
  expect(listed.length).toBe(count);
  expect(list.marked).toBe(0);
  // What the former single list item would have held passes the limit; no part passes its own, no item the limit.
  expect(Buffer.byteLength(JSON.stringify(listed))).toBeGreaterThan(ITEM_LIMIT_BYTES);
  expect(Math.max(...list.parts.map((part) => Buffer.byteLength(JSON.stringify(part))))).toBeLessThanOrEqual(8_192);
  expect(list.parts.length).toBeGreaterThan(60);
  expect(largest.bytes).toBeLessThan(ITEM_LIMIT_BYTES);

  expect(await total(orders, 'customer', equalityInterval(customer(1234)).interval)).toBe(1);
  expect(await total(orders, 'customer', equalityInterval(customer(3_599)).interval)).toBe(1);
  expect(await total(orders, 'customer', equalityInterval(customer(3_600)).interval)).toBe(0);
  const firstHalf = rangeInterval({ value: customer(0), inclusive: true }, { value: customer(1_799), inclusive: true });
  expect(await total(orders, 'customer', firstHalf.interval)).toBe(1_800);
  expect(await total(orders, 'customer', nonNullInterval())).toBe(3_600);
  expect(await total(orders, 'status', equalityInterval('paid').interval)).toBe(900);
  expect(
    await total(
      orders,
      'amount',
      rangeInterval({ value: 100, inclusive: true }, { value: 199, inclusive: true }).interval,
    ),
  ).toBe(100);

  // More customers, in the same pages' ranges and past them: the parts they fall in take them.
  await orders.load(
    Array.from({ length: 400 }, (_, k) => ({ customer: customer(count + k), amount: count + k, status: 'new' })),
  );
  expect(await fold(orders, limits)).toMatchObject({ folded: 400, left: false });
  const grown = await storedList(client, table, orders.slotOf('customer'));
  expect(grown.pageLowests.length).toBe(count + 400);
  expect(new Set(grown.parts.flat())).toEqual(new Set(grown.pageLowests));
  expect(Math.max(...grown.parts.map((part) => Buffer.byteLength(JSON.stringify(part))))).toBeLessThanOrEqual(8_192);
  expect(largest.bytes).toBeLessThan(ITEM_LIMIT_BYTES);
  expect(await total(orders, 'customer', nonNullInterval())).toBe(4_000);
  expect(await total(orders, 'status', equalityInterval('new').interval)).toBe(1_300);
}, 240_000);

it('a slot that still has the former single list is read, moved into parts at its next split, and stays exact', async () => {
  const names = localTableNames('page-list-former');
  await ensureTables(dynamo.client, names);
  const client = createDocumentClient(dynamo.client);
  const table = names.Records as string;
  const orders = ordersDataset(client, names, 'page-list-former');
  const limits = { page: 120, listPart: 200 };
  const row = (n: number) => ({
    customer: `m${String(n).padStart(4, '0')}`,
    amount: n,
    status: STATUSES[n % 4] as string,
  });
  await orders.load(Array.from({ length: 300 }, (_, n) => row(n)));
  expect(await fold(orders, limits)).toMatchObject({ folded: 300, left: false });

  // As a slot folded before the list had parts: one item listing every page, and no parts.
  // (The enum's four values fit one page: it has no list.)
  const split = ['customer', 'amount'] as const;
  for (const field of split) {
    const slot = orders.slotOf(field);
    const parts = await itemsUnder(client, table, valuePageListPartPrefix(slot));
    const lowests = parts.flatMap((item) => JSON.parse(item.lowests as string) as string[]);
    await client.send(
      new PutCommand({ TableName: table, Item: { ...valuePageListKey('orders', slot), pages: lowests } }),
    );
    for (const part of parts) {
      const key = {
        [RecordAttr.partitionKey]: part[RecordAttr.partitionKey],
        [RecordAttr.sortKey]: part[RecordAttr.sortKey],
      };
      await client.send(new DeleteCommand({ TableName: table, Key: key }));
    }
  }
  const former = await storedList(client, table, orders.slotOf('customer'));
  expect(former.parts).toEqual([]);
  expect(former.pageLowests.length).toBeGreaterThan(30);

  // Below, among and above the counted customers: every page the new ones fall in is found through the former list.
  await orders.load([...Array.from({ length: 300 }, (_, k) => row(300 + k)), row(0), row(150)]);
  expect(await fold(orders, limits)).toMatchObject({ folded: 302, left: false });
  for (const field of split) {
    const slot = orders.slotOf(field);
    const moved = await storedList(client, table, slot);
    expect(moved.parts.length).toBeGreaterThan(1);
    expect(new Set(moved.parts.flat())).toEqual(new Set(moved.pageLowests));
    expect(moved.marked).toBe(0);
    const formerItem = await client.send(new GetCommand({ TableName: table, Key: valuePageListKey('orders', slot) }));
    expect(formerItem.Item).toBeUndefined();
  }
  expect(await total(orders, 'customer', equalityInterval('m0000').interval)).toBe(2);
  expect(await total(orders, 'customer', equalityInterval('m0150').interval)).toBe(2);
  expect(await total(orders, 'customer', equalityInterval('m0450').interval)).toBe(1);
  expect(
    await total(
      orders,
      'customer',
      rangeInterval({ value: 'm0100', inclusive: true }, { value: 'm0399', inclusive: false }).interval,
    ),
  ).toBe(300);
  expect(await total(orders, 'customer', nonNullInterval())).toBe(602);
  expect(await total(orders, 'amount', equalityInterval(150).interval)).toBe(2);
  expect(await total(orders, 'status', equalityInterval('new').interval)).toBe(151);
}, 120_000);

/** The client, failing every call from the `after`-th write of a page list part on (a fold that dies there). */
function dyingAtListWrite(client: DynamoDBDocumentClient, fault: { after?: number; sent: number }) {
  return interceptSend(client, (command, send) => {
    const item = command.input.Item as Record<string, unknown> | undefined;
    if (fault.after !== undefined && 'lowests' in (item ?? {})) fault.sent += 1;
    if (fault.after !== undefined && fault.sent > fault.after) return Promise.reject(new Error('the process stopped'));
    return send();
  });
}

it('folds that die part-way through writing the page list leave it naming every page once the next fold ran', async () => {
  const names = localTableNames('page-list-dying');
  await ensureTables(dynamo.client, names);
  const fault: { after?: number; sent: number } = { sent: 0 };
  const client = dyingAtListWrite(createDocumentClient(dynamo.client), fault);
  const table = names.Records as string;
  const orders = ordersDataset(client, names, 'page-list-dying');
  const limits = { page: 120, listPart: 48 };
  const row = (n: number) => ({
    customer: `d${String(n).padStart(4, '0')}`,
    amount: n,
    status: STATUSES[n % 4] as string,
  });
  const dyingFold = async (after: number) => {
    fault.after = after;
    fault.sent = 0;
    await expect(fold(orders, limits)).rejects.toThrow('the process stopped');
    fault.after = undefined;
    orders.clock.now += FOLD_LEASE_MS;
  };
  const spread = (k: number) => ((k * 7) % 150) * 3;
  // The first split's list (the parts' start, part '' last) stops after its two highest parts.
  await orders.load(Array.from({ length: 150 }, (_, k) => row(spread(k))));
  await dyingFold(2);
  expect(await total(orders, 'customer', nonNullInterval())).toBe(150);
  // A fold that succeeds (the first customers again, and 30 above every part) starts the parts over.
  await orders.load(Array.from({ length: 30 }, (_, k) => row(1_000 + k)));
  expect(await fold(orders, limits)).toMatchObject({ folded: 180, left: false });
  // Then splits between the pages there are, whose list parts split too, stop after one part's write.
  await orders.load(Array.from({ length: 300 }, (_, k) => row(spread(k >> 1) + 1 + (k & 1))));
  await dyingFold(1);
  expect(await total(orders, 'customer', nonNullInterval())).toBe(480);
  expect(await fold(orders, limits)).toMatchObject({ folded: 300, left: false });
  for (const field of ['customer', 'amount'] as const) {
    const list = await storedList(client, table, orders.slotOf(field));
    expect(list.marked).toBe(0);
    expect(new Set(list.parts.flat())).toEqual(new Set(list.pageLowests));
  }
  expect(await total(orders, 'customer', nonNullInterval())).toBe(480);
  expect(await total(orders, 'customer', equalityInterval('d0007').interval)).toBe(1);
  expect(await total(orders, 'customer', equalityInterval('d1017').interval)).toBe(1);
  expect(
    await total(
      orders,
      'amount',
      rangeInterval({ value: 100, inclusive: true }, { value: 199, inclusive: true }).interval,
    ),
  ).toBe(100);
}, 120_000);
