/**
 * A list folds claims the folds beside the writes left too long only when those folds have stopped: while one began
 * within `LIST_FOLD_GRACE_MS` (a bulk load they run behind), the list counts the claims and leaves them, however old,
 * so that it pays for none of the load's folding; once the last fold beside the writes is older than that (their
 * queue stuck), the list folds them itself. The total is the same exact number either way.
 */
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { equalityInterval } from '../../../../../shared/records/value-encoding';
import { CHECK_SLACK_MS, LIST_FOLD_GRACE_MS } from '../../../../../shared/storage/fold-limits';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { ORDERS_FIELDS, ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

it('a list leaves overdue claims to folds beside the writes that are running, and folds them once those stopped', async () => {
  const names = localTableNames('list-fold-alive');
  await ensureTables(dynamo.client, names);
  const orders = ordersDataset(createDocumentClient(dynamo.client), names, 'list-fold-alive');
  const values = orders.ports.bookkeeping.values;
  await orders.load(
    Array.from({ length: 200 }, (_, i) => ({
      customer: `c${i % 10}`,
      amount: i,
      status: ['new', 'paid', 'shipped', 'void'][i % 4] as string,
    })),
  );
  const status = orders.slotOf('status');
  const paid = async () => {
    const meter = new CapacityMeter();
    const total = await countSlotValues(orders.ports.bookkeeping, {
      datasetCode: 'orders',
      slot: status,
      otherSlots: ORDERS_FIELDS.map(orders.slotOf).filter((slot) => slot !== status),
      intervals: [equalityInterval('paid').interval],
      now: orders.clock.now,
      meter,
    });
    const head = await values.readHeadConsistently('orders', status, new CapacityMeter());
    return { total, through: head?.through, writeUnits: meter.writeUnits };
  };

  // The claims are past their check and the list's grace, but a fold beside the writes began a moment ago.
  orders.clock.now += SETTLE_MS + CHECK_SLACK_MS + LIST_FOLD_GRACE_MS + 1_000;
  await values.markFoldSeen('orders', orders.clock.now - 1_000, new CapacityMeter());
  const left = await paid();
  expect(left.total).toBe(50);
  expect(left.through).toBe('');
  // The list started the slot's head and its check of the settled claims moved the checked position: nothing folded.
  expect(left.writeUnits).toBe(2);

  // That fold is now older than the grace: the folds have stopped, and the list folds.
  orders.clock.now += LIST_FOLD_GRACE_MS;
  const folded = await paid();
  expect(folded.total).toBe(50);
  expect(folded.through).not.toBe('');
  expect(folded.writeUnits).toBeGreaterThan(2);
  // The mark of a fold that began earlier does not replace a later one's.
  await values.markFoldSeen('orders', orders.clock.now - 5 * LIST_FOLD_GRACE_MS, new CapacityMeter());
  expect((await values.readHead('orders', status, new CapacityMeter())).foldSeen).toBe(
    orders.clock.now - LIST_FOLD_GRACE_MS - 1_000,
  );
});
