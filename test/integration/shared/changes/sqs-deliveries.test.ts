/**
 * The deployment's delivery path (changes/sqs-deliveries.ts) over a real store (dynalite) and a real receiver, with
 * SQS mocked at the SDK client (no local twin here): a failed attempt stays on the queue with its visibility set to
 * the schedule's next wait (at most SQS's 12 hours a step), the group's later messages stay behind it in the partial
 * batch response while other groups are delivered, and the last attempt's failure parks the event (the parked
 * queue, and the subscription's state that status reads).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { Catalog } from '../../../../shared/catalog/catalog';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { eventIdOf } from '../../../../shared/changes/change-events';
import { type DeliveryMessage, deliveryGroupOf } from '../../../../shared/changes/delivery-queue';
import { retrySchedule } from '../../../../shared/changes/retry-schedule';
import { deliverSqsBatch } from '../../../../shared/changes/sqs-deliveries';
import { ConfigWebhookSecrets } from '../../../../shared/changes/webhook-secrets';
import { httpWebhookTransport } from '../../../../shared/changes/webhook-transport';
import { CapacityMeter } from '../../../../shared/observability/capacity-meter';
import { setLogSink } from '../../../../shared/observability/request-log';
import { EventStore } from '../../../../shared/storage/event-store';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';
import { WebhookStateStore } from '../../../../shared/storage/webhook-state';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/1/deliveries.fifo';
const PARKED = 'https://sqs.eu-west-1.amazonaws.com/1/parked.fifo';
const FAILING = '01JD5Y0RZ6W8Q4N3V2M1K0FAIL';
const HEALTHY = '01JD5Y0RZ6W8Q4N3V2M1K0GOOD';

const sqs = mockClient(SQSClient);
let dynamo: EmbeddedDynamo;
let receiver: Server;
let events: EventStore;
let state: WebhookStateStore;
let catalog: Catalog;
let config: CatalogConfig;
const posted: string[] = [];

beforeAll(async () => {
  setLogSink(() => undefined);
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; revision: number };
      posted.push(`${body.id}#${body.revision}`);
      response.writeHead(body.id === FAILING ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  config = {
    applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read'] }] }],
    datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
    webhooks: [
      {
        id: 'crm',
        appCode: 'app-a',
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        datasets: ['orders'],
        secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
      },
    ],
  };
  catalog = new Catalog(config);
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('sqs-deliveries');
  await ensureTables(dynamo.client, names);
  const documents = createDocumentClient(dynamo.client);
  events = new EventStore(documents, names.Events as string, 3_600_000);
  state = new WebhookStateStore(documents, names.Events as string);
  const now = Date.now();
  for (const [id, revision] of [
    [FAILING, 1],
    [FAILING, 2],
    [HEALTHY, 1],
  ] as const) {
    await events.log(
      {
        datasetCode: 'orders',
        id,
        revision,
        kind: revision === 1 ? 'created' : 'updated',
        occurredAt: now,
        actor: { appCode: 'app-a', userId: null },
        requestId: 'req',
        item: { customer: `c-${revision}` },
        ...(revision === 2 ? { changed: ['customer'], before: { customer: 'c-1' } } : {}),
      },
      `01JD5Y0RZ6W8Q4N3V2M1K0H9G${revision}`,
      now + 86_400_000,
      new CapacityMeter(),
    );
  }
});

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  await dynamo.close();
});

beforeEach(() => {
  sqs.reset();
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({});
  posted.length = 0;
});

function message(id: string, revision: number): DeliveryMessage {
  return {
    subscriptionId: 'crm',
    datasetCode: 'orders',
    id,
    revision,
    eventId: eventIdOf('orders', id, revision),
    position: `01JD5Y0RZ6W8Q4N3V2M1K0H9G${revision}`,
  };
}

function record(m: DeliveryMessage, receiveCount: number): SQSRecord {
  return {
    messageId: `msg-${m.id}-${m.revision}`,
    receiptHandle: `rh-${m.id}-${m.revision}`,
    body: JSON.stringify(m),
    attributes: { MessageGroupId: deliveryGroupOf(m), ApproximateReceiveCount: String(receiveCount) },
  } as unknown as SQSRecord;
}

function deliver(records: SQSRecord[], remainingMs?: () => number) {
  return deliverSqsBatch({ Records: records } as SQSEvent, {
    client: new SQSClient({ region: 'eu-west-1' }),
    queueUrl: QUEUE,
    ...(remainingMs ? { remainingMs } : {}),
    parkedQueueUrl: PARKED,
    ports: {
      catalog: async () => catalog,
      events,
      state,
      secrets: new ConfigWebhookSecrets(config),
      transport: httpWebhookTransport({ allowNonPublic: true }),
      // Jitter at its middle: the waits are exactly the schedule's.
      schedule: retrySchedule(1, () => 0.5),
      now: Date.now,
    },
    metricNamespace: 'Test',
    meter: new CapacityMeter(),
  });
}

it('a failed attempt waits on the queue for the next one, its group behind it; other groups are delivered', async () => {
  const answer = await deliver([
    record(message(FAILING, 1), 1),
    record(message(FAILING, 2), 1),
    record(message(HEALTHY, 1), 1),
  ]);

  expect(answer).toEqual({
    batchItemFailures: [{ itemIdentifier: `msg-${FAILING}-1` }, { itemIdentifier: `msg-${FAILING}-2` }],
  });
  // The failing record's second event was not sent: it waits behind the first.
  expect(posted.sort()).toEqual([`${FAILING}#1`, `${HEALTHY}#1`]);
  expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
    { QueueUrl: QUEUE, ReceiptHandle: `rh-${FAILING}-1`, VisibilityTimeout: 5 },
  ]);
  const summary = await state.summary('crm', new CapacityMeter());
  expect(summary).toMatchObject({ deliveries: 1, failures: 1, retrying: 1, parked: 0 });
});

it('a wait longer than SQS allows is taken in steps of 12 hours', async () => {
  // Eight attempts failed; the ninth fails too: the next wait is 24 h.
  await state.saveAttempt(
    'crm',
    eventIdOf('orders', FAILING, 1),
    { failures: 8, nextAt: Date.now() - 1 },
    '01JD5Y0RZ6W8Q4N3V2M1K0H9G1',
    Date.now() + 86_400_000,
    new CapacityMeter(),
  );
  const answer = await deliver([record(message(FAILING, 1), 9)]);
  expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: `msg-${FAILING}-1` }] });
  expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input.VisibilityTimeout).toBe(43_200);
});

it('the last attempt failing parks the event: the parked queue and the subscription state have it', async () => {
  await state.saveAttempt(
    'crm',
    eventIdOf('orders', FAILING, 1),
    { failures: 9, nextAt: Date.now() - 1 },
    '01JD5Y0RZ6W8Q4N3V2M1K0H9G1',
    Date.now() + 86_400_000,
    new CapacityMeter(),
  );
  const answer = await deliver([record(message(FAILING, 1), 10)]);

  // Done with, as far as the delivery queue goes.
  expect(answer).toEqual({ batchItemFailures: [] });
  expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
  const parked = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
  expect(parked).toEqual([
    {
      QueueUrl: PARKED,
      MessageBody: JSON.stringify({
        ...message(FAILING, 1),
        reason: 'the receiver answered 500 on the last of 10 attempts',
      }),
      MessageGroupId: deliveryGroupOf(message(FAILING, 1)),
      MessageDeduplicationId: `crm:${eventIdOf('orders', FAILING, 1)}`,
    },
  ]);
  const kept = await state.parked('crm', '0', new CapacityMeter());
  expect(kept.map((p) => [p.id, p.revision, p.reason])).toEqual([
    [FAILING, 1, 'the receiver answered 500 on the last of 10 attempts'],
  ]);
  expect(await state.attempt('crm', eventIdOf('orders', FAILING, 1), new CapacityMeter())).toBeUndefined();
});

it("sets a failed attempt's wait on the queue the message came from (a subscription's own)", async () => {
  const own = { ...record(message(FAILING, 1), 1), eventSourceARN: 'arn:aws:sqs:eu-west-1:1:deliveries-crm.fifo' };
  const answer = await deliver([own]);
  expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: `msg-${FAILING}-1` }] });
  expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
    {
      QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/deliveries-crm.fifo',
      ReceiptHandle: `rh-${FAILING}-1`,
      VisibilityTimeout: 5,
    },
  ]);
});

it('starts no delivery that could outlast the function: too little time left leaves the batch on the queue', async () => {
  // 24 s left: less than a receiver's 15 s and the calls around it.
  const answer = await deliver([record(message(HEALTHY, 1), 1), record(message(FAILING, 1), 1)], () => 24_000);
  expect(answer).toEqual({
    batchItemFailures: [{ itemIdentifier: `msg-${HEALTHY}-1` }, { itemIdentifier: `msg-${FAILING}-1` }],
  });
  expect(posted).toEqual([]);
  // With the time a delivery needs, the same batch is delivered.
  const later = await deliver([record(message(HEALTHY, 1), 1)], () => 26_000);
  expect(later).toEqual({ batchItemFailures: [] });
  expect(posted).toEqual([`${HEALTHY}#1`]);
});
