/**
 * `das webhooks status|replay --stage <stage>`: against a deployment, with DynamoDB and SQS mocked at the SDK
 * client (there is no AWS here). Status reads the stage's catalog table and each subscription's partition of its
 * events table; a replay reads the change log's feed index, queues the deliveries on the subscription's delivery
 * queue (found by its name; the stage's overflow queue for a subscription without one) with deduplication ids of
 * their own, and forgets the parked events it queued again.
 */
import { gzipSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { ulid } from 'ulid';
import { deploymentQueueUrl, runWebhooks } from '../../../../bin/cli/webhooks-command';
import { CommandFailure } from '../../../../packages/client/src/cli/cli-io';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { eventIdOf } from '../../../../shared/changes/change-events';
import { deliveryGroupOf } from '../../../../shared/changes/delivery-queue';
import { CapacityMeter } from '../../../../shared/observability/capacity-meter';
import { EventStore } from '../../../../shared/storage/event-store';

const config: CatalogConfig = {
  applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read'] }] }],
  datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
  webhooks: [{ id: 'crm', appCode: 'app-a', url: 'https://crm.example.com/hooks', datasets: ['orders'] }],
};

const dynamo = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const now = Date.now();

async function das(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = {
    out: (text: string) => {
      out += text;
    },
    err: (text: string) => {
      err += text;
    },
    env: {},
  };
  await runWebhooks(args.slice(1), io);
  return { code: 0, out, err };
}

beforeAll(() => {
  process.env.AWS_REGION = 'eu-west-1';
});

beforeEach(() => {
  dynamo.reset();
  sqs.reset();
  dynamo.on(GetCommand, { TableName: 'data-access-service-prod-catalog' }).resolves({
    Item: { config: gzipSync(JSON.stringify(config)), functionVersions: {}, writtenAt: '2026-11-01T00:00:00.000Z' },
  });
});

it('status: each subscription of the deployed configuration, from its partition of the events table', async () => {
  const retrying = ulid(now - 90_000);
  const parked = ulid(now - 2 * 3_600_000);
  dynamo.on(QueryCommand).resolves({
    Items: [
      { '@pk': 'hook#crm', '@sk': `parked#${parked}#evt_1`, position: parked },
      { '@pk': 'hook#crm', '@sk': `parked#${ulid(now - 60_000)}#evt_2`, position: ulid(now - 60_000) },
      {
        '@pk': 'hook#crm',
        '@sk': 'state',
        deliveries: 41,
        failures: 12,
        failedAt: now - 5_000,
        failure: 'the receiver answered 503',
        failedStatus: 503,
      },
      { '@pk': 'hook#crm', '@sk': 'try#evt_3', failures: 2, nextAt: now + 60_000, position: retrying },
    ],
  });

  const run = await das(['webhooks', 'status', '--stage', 'prod', '--json']);

  expect([run.code, run.err]).toEqual([0, '']);
  const [crm] = JSON.parse(run.out);
  expect(crm).toEqual({
    id: 'crm',
    appCode: 'app-a',
    url: 'https://crm.example.com/hooks',
    datasets: ['orders'],
    state: 'active',
    deliveries: 41,
    failures: 12,
    retrying: 1,
    parked: 2,
    oldestUndeliveredAgeMs: expect.any(Number),
    lastFailure: { at: now - 5_000, status: 503, error: 'the receiver answered 503' },
  });
  // The oldest of the retrying and parked events: the one parked two hours ago.
  expect(Math.round(crm.oldestUndeliveredAgeMs / 60_000)).toBe(120);
  const query = dynamo.commandCalls(QueryCommand)[0]?.args[0].input;
  expect([query?.TableName, query?.ExpressionAttributeValues]).toEqual([
    'data-access-service-prod-events',
    { ':pk': 'hook#crm' },
  ]);
});

it('replay: the window’s events go on the stage’s delivery queue, and what was parked of them is forgotten', async () => {
  // The event as the change log writes it (captured from the real writer, then served back by the feed index).
  const position = ulid(now - 30 * 60_000);
  dynamo.on(PutCommand).resolves({});
  await new EventStore(createDocumentClient(new DynamoDBClient({})), 'data-access-service-prod-events', 3_600_000).log(
    {
      datasetCode: 'orders',
      id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8',
      revision: 1,
      kind: 'created',
      occurredAt: now - 30 * 60_000,
      actor: { appCode: 'app-a', userId: null },
      requestId: 'req-1',
      item: { customer: 'Ann' },
    },
    position,
    now + 86_400_000,
    new CapacityMeter(),
  );
  const eventItem = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item;
  const message = {
    subscriptionId: 'crm',
    datasetCode: 'orders',
    id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8',
    revision: 1,
    eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
    position,
  };
  dynamo.on(QueryCommand, { IndexName: 'feed' }).resolves({ Items: [eventItem as Record<string, unknown>] });
  const eventId = eventIdOf('orders', '01JD5Y0RZ6W8Q4N3V2M1K0H9G8', 1);
  const parked = {
    eventId,
    position,
    datasetCode: 'orders',
    id: message.id,
    revision: 1,
    parkedAt: now - 60_000,
    reason: 'the receiver answered 500 on the last of 10 attempts',
  };
  dynamo.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'hook#crm' } }, false).resolves({
    Items: [{ '@pk': 'hook#crm', '@sk': `parked#${position}#${eventId}`, ...parked }],
  });
  dynamo.on(DeleteCommand).resolves({});
  sqs
    .on(GetQueueUrlCommand, { QueueName: 'data-access-service-prod-deliveries-crm.fifo' })
    .resolves({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-prod-deliveries-crm.fifo' });
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });

  const run = await das(['webhooks', 'replay', '--id', 'crm', '--since', '1h', '--stage', 'prod', '--json']);

  expect([run.code, run.err]).toEqual([0, '']);
  expect(JSON.parse(run.out)).toEqual({ id: 'crm', since: expect.any(String), queued: 1, unparked: 1 });
  // The subscription's own queue, the one the stream function puts its deliveries on.
  expect(sqs.commandCalls(GetQueueUrlCommand).map((call) => call.args[0].input)).toEqual([
    { QueueName: 'data-access-service-prod-deliveries-crm.fifo' },
  ]);
  const sent = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input;
  expect(sent?.QueueUrl).toBe('https://sqs.eu-west-1.amazonaws.com/1/data-access-service-prod-deliveries-crm.fifo');
  expect(sent?.Entries).toHaveLength(1);
  const entry = sent?.Entries?.[0];
  expect(JSON.parse(entry?.MessageBody ?? '')).toEqual(message);
  expect(entry?.MessageGroupId).toBe(deliveryGroupOf({ subscriptionId: 'crm', datasetCode: 'orders', id: message.id }));
  // Not the change log's deduplication id: SQS would drop a replay within five minutes of the first queueing.
  expect(entry?.MessageDeduplicationId).toMatch(/^replay-\d+:crm:evt_[0-9a-f]{32}$/);
  // The parked copy of the event, queued again, is no longer parked.
  expect(dynamo.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key)).toEqual([
    { '@pk': 'hook#crm', '@sk': `parked#${position}#${eventId}` },
  ]);
});

it('replay: a subscription deployed without a queue of its own is replayed on the overflow queue', async () => {
  const missing = () => Object.assign(new Error('The specified queue does not exist.'), { name: 'QueueDoesNotExist' });
  sqs.on(GetQueueUrlCommand, { QueueName: 'data-access-service-prod-deliveries-late.fifo' }).rejects(missing());
  sqs
    .on(GetQueueUrlCommand, { QueueName: 'data-access-service-prod-deliveries.fifo' })
    .resolves({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-prod-deliveries.fifo' });
  await expect(deploymentQueueUrl(new SQSClient({}), 'prod', 'late')).resolves.toBe(
    'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-prod-deliveries.fifo',
  );

  sqs.reset();
  sqs.on(GetQueueUrlCommand).rejects(missing());
  await expect(deploymentQueueUrl(new SQSClient({}), 'gone', 'late')).rejects.toThrow(
    new CommandFailure("das webhooks: no delivery queue in stage 'gone'"),
  );
});
