/**
 * Receivers are isolated in a deployment (contract §22; docs/interface.md §18): the change log's writer and the
 * delivery function as the deployment runs them (changes/change-stream.ts with the SQS delivery queues of
 * changes/delivery-routes.ts, changes/sqs-deliveries.ts), over a real store (dynalite) and real receivers, with
 * SQS and Lambda's event source mappings mocked at the SDK client (test/support/sqs-fifo-twin.ts: FIFO groups,
 * visibility, each mapping's maximum concurrency). Three subscriptions of one dataset: one receiver never answers
 * (each attempt held for the transport's timeout), one answers 500, one is healthy.
 *
 * With a queue per subscription, the healthy receiver gets every event, each record's in revision order, before the
 * first of the hanging receiver's attempts has even timed out; the hanging one never has more attempts open than its
 * own mapping's share. The same changes through one shared queue (what subscriptions without a queue of their own
 * get) leave most of the healthy receiver's events waiting behind the hanging attempts.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { monotonicFactory } from 'ulid';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { DEFAULT_SUBSCRIPTION_CONCURRENCY } from '../../../../lib/change-log-functions';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { Catalog } from '../../../../shared/catalog/catalog';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { type ItemChangeRecord, logItemChanges } from '../../../../shared/changes/change-stream';
import { DeliveryRoutes } from '../../../../shared/changes/delivery-routes';
import { retrySchedule } from '../../../../shared/changes/retry-schedule';
import { deliverSqsBatch, SqsDeliveryQueue } from '../../../../shared/changes/sqs-deliveries';
import { ConfigWebhookSecrets } from '../../../../shared/changes/webhook-secrets';
import { httpWebhookTransport } from '../../../../shared/changes/webhook-transport';
import { CapacityMeter } from '../../../../shared/observability/capacity-meter';
import { setLogSink } from '../../../../shared/observability/request-log';
import { EventStore } from '../../../../shared/storage/event-store';
import { recordKey } from '../../../../shared/storage/item-keys';
import { originAttribute } from '../../../../shared/storage/record-revisions';
import { RecordAttr } from '../../../../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';
import { WebhookStateStore } from '../../../../shared/storage/webhook-state';
import { SqsFifoTwin } from '../../../support/sqs-fifo-twin';

const STAGE = 'test';
const ACCOUNT = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
const OVERFLOW = `${ACCOUNT}/data-access-service-test-deliveries.fifo`;
const PARKED = `${ACCOUNT}/data-access-service-test-parked.fifo`;
const SUBSCRIPTIONS = ['stuck', 'broken', 'crm'] as const;
const queueOf = (id: string) => `${ACCOUNT}/data-access-service-test-deliveries-${id}.fifo`;
/** The receivers' timeout in this test (15 s in a deployment): how long each hanging attempt is held. */
const TIMEOUT_MS = 5_000;
/** Records created, and updates of the first one. */
const RECORDS = 30;
const UPDATES = 4;

interface Seen {
  id: string;
  revision: number;
}

const seen = {
  healthy: [] as Seen[],
  failing: [] as Seen[],
  hanging: [] as Seen[],
  hangingOpen: 0,
  hangingMostOpen: 0,
  /** How many events the healthy receiver had when the first hanging attempt was given up on. */
  healthyAtFirstTimeout: undefined as number | undefined,
};
const open = new Set<ServerResponse>();

let receiver: Server;
let dynamo: EmbeddedDynamo;
let events: EventStore;
let state: WebhookStateStore;
let catalog: Catalog;
let config: CatalogConfig;
let table = 0;

beforeAll(async () => {
  setLogSink(() => undefined);
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Seen;
      const at = { id: event.id, revision: event.revision };
      if (request.url === '/hanging') {
        seen.hanging.push(at);
        seen.hangingOpen += 1;
        seen.hangingMostOpen = Math.max(seen.hangingMostOpen, seen.hangingOpen);
        open.add(response);
        response.on('close', () => {
          seen.hangingOpen -= 1;
          open.delete(response);
          seen.healthyAtFirstTimeout ??= seen.healthy.length;
        });
        return; // never answers
      }
      if (request.url === '/failing') {
        seen.failing.push(at);
        response.writeHead(500).end('not now');
        return;
      }
      seen.healthy.push(at);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const paths = { stuck: '/hanging', broken: '/failing', crm: '/healthy' };
  config = {
    applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read'] }] }],
    datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
    webhooks: SUBSCRIPTIONS.map((id, index) => ({
      id,
      appCode: 'app-a',
      url: `${base}${paths[id]}`,
      datasets: ['orders'],
      secret: `whsec_${Buffer.alloc(32, index + 1).toString('base64')}`,
    })),
  };
  catalog = new Catalog(config);
  dynamo = await startEmbeddedDynamo();
});

afterAll(async () => {
  for (const response of open) response.destroy();
  await new Promise((resolve) => receiver.close(resolve));
  await dynamo.close();
});

/** The stream record of revision `revision` of record `id` (the one before it as the old image). */
function change(id: string, revision: number, sequence: number): ItemChangeRecord {
  const image = (rev: number) => ({
    ...recordKey('orders', id),
    [RecordAttr.revision]: rev,
    [RecordAttr.origin]: originAttribute({ appCode: 'app-a', userId: null, requestId: `req-${rev}`, occurredAt: 1 }),
    customer: `customer ${id.slice(-3)} rev ${rev}`,
    gmt_create: 1_700_000_000_000,
    gmt_modified: 1_700_000_000_000 + rev,
  });
  return {
    eventName: revision === 1 ? 'INSERT' : 'MODIFY',
    dynamodb: {
      Keys: marshall(recordKey('orders', id)),
      NewImage: marshall(image(revision)),
      ...(revision === 1 ? {} : { OldImage: marshall(image(revision - 1)) }),
      SequenceNumber: String(sequence).padStart(20, '0'),
    },
  };
}

const ids = Array.from({ length: RECORDS }, (_, i) => `01JD5Y0RZ6W8Q4N3V2M1K0${String(i).padStart(4, '0')}`);

/**
 * The writer logs and queues the changes, stream batch by stream batch, with the subscriptions in `withQueues`
 * routed to queues of their own; then the mappings deliver the backlog until the first hanging attempt is given up
 * on (the writer's own pace, on a busy machine, is kept out of what is compared).
 */
async function run(withQueues: readonly string[]): Promise<void> {
  seen.healthy.length = 0;
  seen.failing.length = 0;
  seen.hanging.length = 0;
  seen.hangingMostOpen = 0;
  seen.healthyAtFirstTimeout = undefined;
  const names = localTableNames(`sqs-isolation-${++table}`);
  await ensureTables(dynamo.client, names);
  const documents = createDocumentClient(dynamo.client);
  events = new EventStore(documents, names.Events as string, 3_600_000);
  state = new WebhookStateStore(documents, names.Events as string);
  const queues = [OVERFLOW, PARKED, ...withQueues.map(queueOf)];
  const twin = new SqsFifoTwin(queues, { visibilityTimeoutMs: 1_080_000 });
  const sqs = new SQSClient({ region: 'eu-west-1' });
  const routes = new DeliveryRoutes(OVERFLOW, STAGE, withQueues);
  const nextPosition = monotonicFactory();
  const writer = {
    catalog: async () => catalog,
    events,
    deliveries: new SqsDeliveryQueue(sqs, (subscriptionId) => routes.urlOf(subscriptionId)),
    folds: { schedule: async () => undefined },
    nextPosition: () => nextPosition(),
    now: Date.now,
  };
  const ports = {
    catalog: async () => catalog,
    events,
    state,
    secrets: new ConfigWebhookSecrets(config),
    transport: httpWebhookTransport({ allowNonPublic: true, timeoutMs: TIMEOUT_MS }),
    schedule: retrySchedule(1, () => 0.5),
    now: Date.now,
  };
  // The stream as Lambda hands it to the writer: the creates, then the first record's updates.
  const changes = [
    ...ids.map((id, i) => change(id, 1, 100 + i)),
    ...Array.from({ length: UPDATES }, (_, u) => change(ids[0] as string, u + 2, 200 + u)),
  ];
  for (let start = 0; start < changes.length; start += 10) {
    const outcome = await logItemChanges(changes.slice(start, start + 10), writer, new CapacityMeter());
    expect(outcome.failedAt).toBeUndefined();
  }
  for (const url of [OVERFLOW, ...withQueues.map(queueOf)]) {
    twin.startMapping({
      queueUrl: url,
      maxConcurrency: DEFAULT_SUBSCRIPTION_CONCURRENCY,
      batchSize: 10,
      handler: (event) =>
        deliverSqsBatch(event, {
          client: sqs,
          queueUrl: OVERFLOW,
          parkedQueueUrl: PARKED,
          ports,
          metricNamespace: 'Test',
          meter: new CapacityMeter(),
        }),
    });
  }
  const deadline = Date.now() + TIMEOUT_MS + 20_000;
  while (seen.healthyAtFirstTimeout === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await twin.stop();
  for (const response of open) response.destroy();
}

const EXPECTED_HEALTHY = RECORDS + UPDATES;

it('with a queue per subscription, the healthy receiver gets every event while the hanging one holds only its own share', async () => {
  await run(SUBSCRIPTIONS);

  // Every event reached the healthy receiver before the first hanging attempt was given up on.
  expect(seen.healthyAtFirstTimeout).toBe(EXPECTED_HEALTHY);
  const first = seen.healthy.filter((e) => e.id === ids[0]).map((e) => e.revision);
  expect(first).toEqual([1, 2, 3, 4, 5]);
  expect(new Set(seen.healthy.map((e) => `${e.id}#${e.revision}`)).size).toBe(EXPECTED_HEALTHY);
  // The hanging receiver holds its own mapping's share at most: 5 batches of up to 10 (the writer queues the
  // events as it logs them, so the mapping's batches are small; each holds its invocation until the timeout).
  expect(seen.hangingMostOpen).toBeGreaterThanOrEqual(DEFAULT_SUBSCRIPTION_CONCURRENCY);
  expect(seen.hangingMostOpen).toBeLessThanOrEqual(DEFAULT_SUBSCRIPTION_CONCURRENCY * 10);
  // The failing receiver was tried too; its events wait for their next attempt.
  expect(seen.failing.length).toBe(RECORDS);
}, 60_000);

it('through one shared queue, the same hanging receiver holds back most of the healthy receiver events', async () => {
  await run([]);

  expect(seen.healthyAtFirstTimeout).toBeLessThan(EXPECTED_HEALTHY / 2);
}, 60_000);
