/**
 * What a fold round holds of count pages, over dynalite: 1,000 records with an amount each (folded into pages made
 * small through the fold's limits), then 2,000 more whose amounts fall between them all over the slot, so that one
 * round's claims touch every page. Folded with rounds that hold 8 pages at once, no read of pages asks for more
 * than 8, and the pages written are those a round that reads every page it touches at once writes (each page once,
 * or twice when it splits: its mark, then its part); only the page list's parts are written a few times more. The
 * totals are exact.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { equalityInterval, rangeInterval } from '../../../../../shared/records/value-encoding';
import { CHECK_SLACK_MS, type CountPageLimits, type FoldRoundLimits } from '../../../../../shared/storage/fold-limits';
import { VALUE_PAGE_PREFIX } from '../../../../../shared/storage/item-keys';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend } from '../../../../support/intercept-send';
import { ORDERS_FIELDS, type OrdersDataset, ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/**
 * What the client saw: the count pages each read of pages asked for, each page's writes (by sort key), and the
 * writes of the page list's parts.
 */
interface Watch {
  pageReads: number[];
  pageWrites: Map<string, number>;
  listWrites: number;
}

function watching(client: DynamoDBDocumentClient, watch: Watch): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    const requests = command.input.RequestItems as Record<string, { Keys?: Record<string, unknown>[] }> | undefined;
    const keys = Object.values(requests ?? {}).flatMap((request) => request.Keys ?? []);
    const pages = keys.filter((key) => String(key['@sk']).startsWith(VALUE_PAGE_PREFIX));
    if (pages.length > 0) watch.pageReads.push(pages.length);
    const item = command.input.Item as Record<string, unknown> | undefined;
    if (item && 'counts' in item) {
      const key = item['@sk'] as string;
      watch.pageWrites.set(key, (watch.pageWrites.get(key) ?? 0) + 1);
    }
    if (item && 'lowests' in item) watch.listWrites += 1;
    return send();
  });
}

const PAGE_LIMITS: CountPageLimits = { page: 512, listPart: 2_048 };
const STATUSES = ['new', 'paid', 'shipped', 'void'];
const row = (amount: number, n: number) => ({
  customer: `c${n % 50}`,
  amount,
  status: STATUSES[n % 4] as string,
});

async function fold(orders: OrdersDataset, rounds: FoldRoundLimits) {
  orders.clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
  const meter = new CapacityMeter();
  const outcome = await foldDatasetTotals(orders.ports.bookkeeping, {
    datasetCode: 'orders',
    slots: ORDERS_FIELDS.map(orders.slotOf),
    now: orders.clock.now,
    meter,
    until: Number.POSITIVE_INFINITY,
    rounds,
    pageLimits: PAGE_LIMITS,
  });
  return { outcome, writeUnits: meter.writeUnits };
}

/** The dataset folded with rounds holding `pages` pages at once: 1,000 amounts 3 apart, then the 2,000 between. */
async function spreadLoad(label: string, pages: number) {
  const names = localTableNames(label);
  await ensureTables(dynamo.client, names);
  const watch: Watch = { pageReads: [], pageWrites: new Map(), listWrites: 0 };
  const orders = ordersDataset(watching(createDocumentClient(dynamo.client), watch), names, label);
  const rounds: FoldRoundLimits = { records: 100_000, pageBytes: 262_144, pages };
  await orders.load(Array.from({ length: 1_000 }, (_, n) => row(3 * n, n)));
  const first = await fold(orders, rounds);
  expect(first.outcome).toMatchObject({ folded: 1_000, left: false });
  const pagesBefore = [...watch.pageWrites.keys()].filter((key) => key.includes(orders.slotOf('amount'))).length;
  // Amounts 1, 22, 43, ... then 2, 23, 44, ... (21 apart, wrapping): between those there are, all over the slot.
  await orders.load(Array.from({ length: 2_000 }, (_, n) => row(3 * ((7 * n) % 1_000) + 1 + Math.floor(n / 1_000), n)));
  watch.pageReads.length = 0;
  watch.pageWrites.clear();
  watch.listWrites = 0;
  const second = await fold(orders, rounds);
  expect(second.outcome).toMatchObject({ folded: 2_000, left: false });
  return { orders, watch, pagesBefore, writeUnits: second.writeUnits };
}

it('a round over spread keys holds at most its bound of pages at once, writes what an unbounded one writes, and its totals are exact', async () => {
  const bounded = await spreadLoad('fold-pages-8', 8);
  const unbounded = await spreadLoad('fold-pages-all', 10_000);
  // 100 pages of `amount` after the first fold (and 3 of `customer`, 1 of `status`). The second's claims touch them
  // all: read 8 at a time with the bound, all at once without it.
  expect(bounded.pagesBefore).toBe(100);
  expect(bounded.watch.pageReads).toEqual([3, ...Array.from({ length: 12 }, () => 8), 4, 1]);
  expect(unbounded.watch.pageReads).toEqual([3, 100, 1]);
  // The same pages written the same number of times: 304 (every page of `amount` tripled its keys and split), none
  // more than twice (a split's mark, then its part).
  expect(bounded.watch.pageWrites).toEqual(unbounded.watch.pageWrites);
  expect(bounded.watch.pageWrites.size).toBe(304);
  expect(Math.max(...bounded.watch.pageWrites.values())).toBe(2);
  // What the bound costs: each group's splits list their new pages (and take their pages' sums away) in the parts
  // the group's keys fall in, so a part two groups share is written by both: 58 part writes against 36, 483 write
  // units against 455. A round whose pages do not split writes the list once, as before.
  expect([bounded.watch.listWrites, unbounded.watch.listWrites]).toEqual([58, 36]);
  expect([bounded.writeUnits, unbounded.writeUnits]).toEqual([483, 455]);

  const { total } = bounded.orders;
  expect(await total('amount', rangeInterval({ value: 0, inclusive: true }, undefined).interval)).toBe(3_000);
  expect(
    await total('amount', rangeInterval({ value: 1_000, inclusive: true }, { value: 1_999, inclusive: true }).interval),
  ).toBe(1_000);
  expect(await total('amount', equalityInterval(15).interval)).toBe(1);
  expect(await total('amount', equalityInterval(16).interval)).toBe(1);
  expect(await total('amount', equalityInterval(17).interval)).toBe(1);
  expect(await total('amount', equalityInterval(3_000).interval)).toBe(0);
  expect(await total('status', equalityInterval('paid').interval)).toBe(750);
  expect(await total('customer', equalityInterval('c7').interval)).toBe(60);
}, 120_000);
