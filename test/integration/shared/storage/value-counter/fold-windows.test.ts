/**
 * A fold whose backlog is larger than a round reads it a round's worth at a time, over dynalite: 200 records (100
 * batch-creates of one record, then four of 25) folded with rounds of 40 records. No read of the claims asks for more
 * claims than a round holds records, each window is read once for the three slots, and the totals are exact.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { equalityInterval, rangeInterval } from '../../../../../shared/records/value-encoding';
import { checkClaims } from '../../../../../shared/storage/claim-check';
import { CHECK_SLACK_MS } from '../../../../../shared/storage/fold-limits';
import { lastIdAt, SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend } from '../../../../support/intercept-send';
import { ORDERS_FIELDS, ordersDataset } from './orders-dataset';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/** Each read of claims (a Query over `change#` keys): the claims it asked for at most, and the records it returned. */
interface ClaimRead {
  limit: number | undefined;
  claims: number;
  records: number;
}

function watchingClaimReads(client: DynamoDBDocumentClient, reads: ClaimRead[]): DynamoDBDocumentClient {
  return interceptSend(client, async (command, send) => {
    const result = await send();
    const from = (command.input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':from'];
    if (command.input.KeyConditionExpression !== undefined && String(from).startsWith('change#')) {
      const items = (result as { Items?: Record<string, unknown>[] }).Items ?? [];
      reads.push({
        limit: command.input.Limit as number | undefined,
        claims: items.length,
        records: items.reduce((sum, item) => sum + (item.k === 'b' ? (item.n as number) : 1), 0),
      });
    }
    return result;
  });
}

const STATUSES = ['new', 'paid', 'shipped', 'void'];

it('a fold of a backlog of 200 records with rounds of 40 reads its claims a round at a time, and its totals are exact', async () => {
  const names = localTableNames('fold-windows');
  await ensureTables(dynamo.client, names);
  const reads: ClaimRead[] = [];
  const orders = ordersDataset(watchingClaimReads(createDocumentClient(dynamo.client), reads), names, 'fold-windows');
  const { ports, clock, slotOf } = orders;
  const rows = Array.from({ length: 200 }, (_, n) => ({
    customer: `c${n % 7}`,
    amount: n,
    status: STATUSES[n % 4] as string,
  }));
  await orders.load(rows.slice(0, 100), 1);
  await orders.load(rows.slice(100), 25);
  clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
  // Checked first (a check reads every claim since the last one), so that the reads below are the fold's own.
  await checkClaims(ports.bookkeeping, 'orders', '', lastIdAt(clock.now - SETTLE_MS), new CapacityMeter());
  reads.length = 0;

  const outcome = await foldDatasetTotals(ports.bookkeeping, {
    datasetCode: 'orders',
    slots: ORDERS_FIELDS.map(slotOf),
    now: clock.now,
    meter: new CapacityMeter(),
    until: Number.POSITIVE_INFINITY,
    rounds: { records: 40, pageBytes: 262_144, pages: 256 },
  });
  expect(outcome).toMatchObject({ folded: 200, left: false });
  // Read a window at a time, never asking for more claims than a round's records (the 104 claims were read at once
  // before, in one read): the one-record claims 40 at a time, exactly a round. The first batch of 25 is heavier
  // than any claim before, so that read takes the rest (dropped past the 20 one-record claims that fit, and read
  // again); from then on a read asks for as many claims as 25 records each leave room for: one batch a window
  // (two would make 50), and an empty read says the backlog is done.
  const window = (limit: number, claims: number, records: number): ClaimRead => ({ limit, claims, records });
  expect(reads).toEqual([
    window(40, 40, 40),
    window(40, 40, 40),
    window(40, 24, 120),
    ...Array.from({ length: 4 }, () => window(1, 1, 25)),
    window(1, 0, 0),
  ]);

  const { total } = orders;
  expect(await total('status', equalityInterval('paid').interval)).toBe(50);
  expect(await total('customer', equalityInterval('c3').interval)).toBe(29);
  const amounts = rangeInterval({ value: 100, inclusive: true }, { value: 199, inclusive: true }).interval;
  expect(await total('amount', amounts)).toBe(100);
  expect(await total('amount', rangeInterval({ value: 140, inclusive: true }, undefined).interval)).toBe(60);
}, 120_000);
