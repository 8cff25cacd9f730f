/**
 * The cost of folding a bulk load into count pages, over dynalite: 10,000 records through batch-create (a text
 * field of 2,500 values, a number field with one value per record, an enum of four), folded once settled. Each
 * count page is written at most twice (a round's write, a split's mark then its part), not once per round of
 * 5,000 records, and the totals are exact.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { equalityInterval, rangeInterval } from '../../../../../shared/records/value-encoding';
import { CHECK_SLACK_MS } from '../../../../../shared/storage/fold-limits';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend } from '../../../../support/intercept-send';
import { ORDERS_FIELDS, ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/** The client, counting the writes of each count page (by its sort key). */
function countingPageWrites(client: DynamoDBDocumentClient, writes: Map<string, number>): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    const item = command.input.Item as Record<string, unknown> | undefined;
    const key = item?.['@sk'];
    if (typeof key === 'string' && 'counts' in (item ?? {})) {
      writes.set(key, (writes.get(key) ?? 0) + 1);
    }
    return send();
  });
}

it('a fold of 10,000 records writes each count page at most twice, and its totals are exact', async () => {
  const names = localTableNames('fold-rounds');
  await ensureTables(dynamo.client, names);
  const writes = new Map<string, number>();
  const orders = ordersDataset(countingPageWrites(createDocumentClient(dynamo.client), writes), names, 'fold-rounds');
  const { ports, clock, slotOf } = orders;
  await orders.load(
    Array.from({ length: 10_000 }, (_, i) => ({
      customer: `c${String(i % 2500).padStart(4, '0')}`,
      amount: i,
      status: ['new', 'paid', 'shipped', 'void'][i % 4] as string,
    })),
  );
  clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
  const meter = new CapacityMeter();
  writes.clear();
  const outcome = await foldDatasetTotals(ports.bookkeeping, {
    datasetCode: 'orders',
    slots: ORDERS_FIELDS.map(slotOf),
    now: clock.now,
    meter,
    until: Number.POSITIVE_INFINITY,
  });
  expect(outcome).toMatchObject({ folded: 10_000, left: false });
  // 286 pages over the three fields; with rounds of a fixed 5,000 records some are written 3 times, and a page
  // once more per 5,000 records of a larger load.
  expect(writes.size).toBe(286);
  expect(Math.max(...writes.values())).toBeLessThanOrEqual(2);
  // 10,000 records over three fields: 608 write units, 0.06 per record, the page list's sums included (595 without
  // them; 0.068 per record with rounds of 5,000 records).
  expect(meter.writeUnits).toBeLessThanOrEqual(620);

  const { total } = orders;
  expect(await total('status', equalityInterval('paid').interval)).toBe(2500);
  expect(await total('customer', equalityInterval('c0042').interval)).toBe(4);
  expect(
    await total('amount', rangeInterval({ value: 1000, inclusive: true }, { value: 1999, inclusive: true }).interval),
  ).toBe(1000);
}, 120_000);
