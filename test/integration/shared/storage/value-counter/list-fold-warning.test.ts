/**
 * A get-list folds claims the fold beside the writes left too long; when that fold fails (here the store refuses
 * every count page write), the list still answers its exact total, and the failure is one structured warning line
 * naming the request, the dataset and the slot, not silence. The next fold, the store working again, catches up.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { setLogSink } from '../../../../../shared/observability/request-log';
import { equalityInterval } from '../../../../../shared/records/value-encoding';
import { CHECK_SLACK_MS, FOLD_LEASE_MS, LIST_FOLD_GRACE_MS } from '../../../../../shared/storage/fold-limits';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { interceptSend } from '../../../../support/intercept-send';
import { ORDERS_FIELDS, ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/** The client, refusing count page writes while `refusing.on`. */
function refusingPageWrites(client: DynamoDBDocumentClient, refusing: { on: boolean }): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    const item = command.input.Item as Record<string, unknown> | undefined;
    if (refusing.on && 'counts' in (item ?? {})) {
      return Promise.reject(Object.assign(new Error('the store is unavailable'), { name: 'ServiceUnavailable' }));
    }
    return send();
  });
}

it("a list's own fold that fails leaves the list's total and logs a warning with the dataset and slot", async () => {
  const names = localTableNames('list-fold-warning');
  await ensureTables(dynamo.client, names);
  const refusing = { on: false };
  const orders = ordersDataset(
    refusingPageWrites(createDocumentClient(dynamo.client), refusing),
    names,
    'list-fold-warning',
  );
  await orders.load(
    Array.from({ length: 100 }, (_, i) => ({
      customer: `c${i % 10}`,
      amount: i,
      status: ['new', 'paid', 'shipped', 'void'][i % 4] as string,
    })),
  );
  // Nothing folded them: the claims are past their check and the list's grace, so the list folds.
  orders.clock.now += SETTLE_MS + CHECK_SLACK_MS + LIST_FOLD_GRACE_MS + 1_000;
  const status = orders.slotOf('status');
  const paid = (requestId: string) =>
    countSlotValues(orders.ports.bookkeeping, {
      datasetCode: 'orders',
      slot: status,
      otherSlots: ORDERS_FIELDS.map(orders.slotOf).filter((slot) => slot !== status),
      intervals: [equalityInterval('paid').interval],
      now: orders.clock.now,
      meter: new CapacityMeter(),
      requestId,
    });

  const lines: Record<string, unknown>[] = [];
  const previous = setLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  try {
    refusing.on = true;
    expect(await paid('req-failing')).toBe(25);
    expect(lines).toEqual([
      {
        level: 'WARN',
        operation: 'value-fold',
        foldBy: 'get-list',
        requestId: 'req-failing',
        datasetCode: 'orders',
        slot: status,
        error: 'ServiceUnavailable: the store is unavailable',
      },
    ]);

    // Once the failed fold's lease has run out, the next list folds, and says nothing.
    refusing.on = false;
    orders.clock.now += FOLD_LEASE_MS + 1_000;
    lines.length = 0;
    expect(await paid('req-after')).toBe(25);
    expect(lines).toEqual([]);
  } finally {
    setLogSink(previous);
  }
  const head = await orders.ports.bookkeeping.values.readHeadConsistently('orders', status, new CapacityMeter());
  expect(head?.through).not.toBe('');
  expect(head?.foldUntil).toBeUndefined();
});
