/**
 * Page sums, over dynalite: a total over a range reads whole only the count pages at its edges and takes the sums
 * the page list keeps for the pages inside it. With pages made small through the fold's limits, 600 distinct
 * amounts make some 200 pages; a range over two thirds of them reads 8 of its 134. Then folds of more amounts,
 * between those there are (the pages they fall in split), die right after one write or another (a split's mark,
 * each of the first parts of the page list a fold writes, a page, a head), the next fold finishes their work, and
 * every total stays exact throughout; the range, now over 174 pages, still reads 8.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import {
  equalityInterval,
  type KeyInterval,
  nonNullInterval,
  rangeInterval,
} from '../../../../../shared/records/value-encoding';
import { CHECK_SLACK_MS, FOLD_LEASE_MS } from '../../../../../shared/storage/fold-limits';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend } from '../../../../support/intercept-send';
import { type OrdersDataset, type OrdersField, ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/**
 * What the client saw: count pages read, and the kinds of the writes since `writes` was cleared. A process that
 * dies when `dies` says so of the writes so far sends nothing after that write.
 */
interface Watch {
  pagesRead: number;
  writes: string[];
  dies?: (writes: readonly string[]) => boolean;
  dead?: boolean;
  /** The write the process died after (writes sent beside it may still land). */
  diedAfter?: string;
}

/** The kind of item a write writes: a count page, a split's mark, a part of the page list, a head, something else. */
function writeKind(input: Record<string, unknown>): string | undefined {
  const item = input.Item as Record<string, unknown> | undefined;
  if (item) return 'splitAt' in item ? 'mark' : 'counts' in item ? 'page' : 'lowests' in item ? 'list part' : 'other';
  const update = input.UpdateExpression as string | undefined;
  if (update) return update.startsWith('SET #through') ? 'head' : update.includes('#until') ? 'lease' : 'other';
  return undefined;
}

function watching(client: DynamoDBDocumentClient, watch: Watch): DynamoDBDocumentClient {
  return interceptSend(client, async (command, send) => {
    if (watch.dead) throw new Error('the process stopped');
    const result = (await send()) as {
      Items?: Record<string, unknown>[];
      Responses?: Record<string, Record<string, unknown>[]>;
    };
    const kind = writeKind(command.input);
    if (kind) {
      watch.writes.push(kind);
      if (!watch.dead && watch.dies?.(watch.writes)) {
        watch.dead = true;
        watch.diedAfter = kind;
      }
    }
    const items = [...(result.Items ?? []), ...Object.values(result.Responses ?? {}).flat()];
    watch.pagesRead += items.filter((item) => 'counts' in item).length;
    return result;
  });
}

const LIMITS = { pageLimits: { page: 160, listPart: 1_024 }, rounds: { records: 40, pageBytes: 120, pages: 256 } };

function fold(orders: OrdersDataset) {
  return foldDatasetTotals(orders.ports.bookkeeping, {
    datasetCode: 'orders',
    // `amount` first: the writes a fold dies at are its own.
    slots: (['amount', 'customer', 'status'] as const).map(orders.slotOf),
    now: orders.clock.now,
    meter: new CapacityMeter(),
    until: Number.POSITIVE_INFINITY,
    ...LIMITS,
  });
}

/** Totals are asked at `askedAt` (a list asked long after claims settled would fold them itself). */
const asked = { at: 0 };

async function total(orders: OrdersDataset, watch: Watch, field: OrdersField, interval: KeyInterval) {
  const meter = new CapacityMeter();
  watch.pagesRead = 0;
  const count = await countSlotValues(orders.ports.bookkeeping, {
    datasetCode: 'orders',
    slot: orders.slotOf(field),
    intervals: [interval],
    now: asked.at,
    meter,
  });
  return { count, readUnits: meter.readUnits, pagesRead: watch.pagesRead };
}

const amounts = (from: number, to: number) =>
  rangeInterval({ value: from, inclusive: true }, { value: to, inclusive: true }).interval;
const STATUSES = ['new', 'paid', 'shipped', 'void'];

it('a range reads only its edge pages, and folds dying at every write leave every total exact', async () => {
  const names = localTableNames('page-sums');
  await ensureTables(dynamo.client, names);
  const watch: Watch = { pagesRead: 0, writes: [] };
  const orders = ordersDataset(watching(createDocumentClient(dynamo.client), watch), names, 'page-sums');
  await orders.load(
    Array.from({ length: 600 }, (_, n) => ({
      customer: `p${String(n).padStart(4, '0')}`,
      amount: n,
      status: STATUSES[n % 4] as string,
    })),
  );
  orders.clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
  asked.at = orders.clock.now;
  expect(await fold(orders)).toMatchObject({ folded: 600, left: false });

  // The count pages the range covers, read whole: what a total without page sums reads.
  const covered = async (interval: KeyInterval) => {
    const meter = new CapacityMeter();
    const { lower, upper } = interval;
    const pages = await orders.ports.bookkeeping.values.pagesCovering(
      'orders',
      orders.slotOf('amount'),
      lower,
      upper,
      meter,
    );
    return { pages: pages.length, readUnits: meter.readUnits };
  };
  expect(await covered(amounts(100, 499))).toEqual({ pages: 134, readUnits: 10 });
  // The highest 4 pages (one Query from the upper bound), the page list's parts, the 4 pages at the lower edge, and the
  // head and the claims since it: 8 pages read of 134.
  expect(await total(orders, watch, 'amount', amounts(100, 499))).toEqual({ count: 400, readUnits: 6, pagesRead: 8 });
  expect(await total(orders, watch, 'amount', nonNullInterval())).toEqual({ count: 600, readUnits: 7, pagesRead: 6 });
  // An equality reads its page as before (in the Query's first few), not the list.
  expect(await total(orders, watch, 'amount', equalityInterval(250).interval)).toEqual({
    count: 1,
    readUnits: 2,
    pagesRead: 4,
  });

  // Amounts between those there are, 60 at a time: every page they fall in takes new keys and splits. Each time a
  // fold dies right after a given write of a given kind (`nth` of them since it began), the next fold finishes its
  // work, and a fold that dies after a sweep of ever more writes ends the test's loads.
  const loaded = Array.from({ length: 600 }, (_, n) => n);
  const deaths: string[] = [];
  const dyingFold = async (dies: (writes: readonly string[]) => boolean) => {
    watch.writes = [];
    watch.dies = dies;
    const outcome = await fold(orders).catch((error: Error) => error);
    watch.dies = undefined;
    const died = watch.dead === true;
    watch.dead = false;
    if (died) {
      expect(outcome).toEqual(new Error('the process stopped'));
      deaths.push(watch.diedAfter as string);
      // The dead folder's lease runs out before another fold can take the slot.
      orders.clock.now += FOLD_LEASE_MS + 1;
    }
    // Every total exact, whatever the fold left.
    const inside = (from: number, to: number) => loaded.filter((amount) => amount >= from && amount <= to).length;
    expect((await total(orders, watch, 'amount', amounts(100, 499))).count).toBe(inside(100, 499));
    expect((await total(orders, watch, 'amount', amounts(0, 99.75))).count).toBe(inside(0, 99.75));
    expect((await total(orders, watch, 'amount', amounts(250.5, 250.5))).count).toBe(inside(250.5, 250.5));
    expect((await total(orders, watch, 'amount', nonNullInterval())).count).toBe(loaded.length);
    expect((await total(orders, watch, 'customer', nonNullInterval())).count).toBe(loaded.length);
    return died;
  };
  const nth = (kind: string, n: number) => (writes: readonly string[]) =>
    writes.at(-1) === kind && writes.filter((written) => written === kind).length === n;
  const deathsAt = [
    ...[1, 2].map((n) => nth('mark', n)),
    ...[1, 2, 3, 4, 5, 6].map((n) => nth('list part', n)),
    ...[1, 3].map((n) => nth('page', n)),
    nth('head', 1),
  ];
  for (const [i, dies] of deathsAt.entries()) {
    const rows = Array.from({ length: 60 }, (_, k) => ({
      customer: `p${String((k * 5 + i) % 300).padStart(4, '0')}-${i}`,
      // Half of them close together, so that their pages split.
      amount: (k % 2 === 0 ? (k * 3 + i) % 60 : (k * 5 + i) % 300) + (i + 1) / 16,
      status: 'new',
    }));
    // In three claims, so that a round (of two, 40 records) ends at a claim, where a fold that stopped in it ended it too.
    await orders.load(rows, 20);
    loaded.push(...rows.map((row) => row.amount));
    orders.clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
    asked.at = orders.clock.now;
    await dyingFold(dies);
    expect(await dyingFold(() => false)).toBe(false);
  }
  // The folds died after a split's mark, after each of the first parts of the page list a fold writes (a sum taken
  // away, new pages' keys, the round's sums: pages and list written, the head not moved), after pages, after a head.
  expect(new Set(deaths)).toEqual(new Set(['mark', 'list part', 'page', 'head']));
  expect(await covered(amounts(100, 499))).toEqual({ pages: 174, readUnits: 12 });
  expect(await total(orders, watch, 'amount', amounts(100, 499))).toEqual({ count: 620, readUnits: 6, pagesRead: 8 });
}, 300_000);
