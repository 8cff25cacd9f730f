/**
 * The deployment's stream function (functions/change-stream.ts) as Lambda calls it, over a real store (dynalite)
 * with SQS mocked at the SDK client: each record change of the batch becomes one event in the change log and one
 * delivery per subscription, on the subscription's own queue (the overflow queue for one without); when one cannot be finished (here SQS refuses its delivery), the batch response names
 * that first change, so it and everything after it are handed out again, and what was logged stays logged once.
 * A batch holding change items of writes asks the fold queue for a fold of their dataset once they have settled.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { decodeTime, ulid } from 'ulid';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../shared/aws/dynamodb';
import type { CatalogConfig } from '../../../shared/catalog/schema';
import { applyConfiguration } from '../../../shared/catalog-store/catalog-store';
import { FOLD_MARGIN_MS } from '../../../shared/changes/value-folds';
import { CapacityMeter } from '../../../shared/observability/capacity-meter';
import { setLogSink } from '../../../shared/observability/request-log';
import { EventStore } from '../../../shared/storage/event-store';
import { datasetChangeKey, recordKey } from '../../../shared/storage/item-keys';
import { SETTLE_MS } from '../../../shared/storage/record-counter';
import { firstRevisionAttributes } from '../../../shared/storage/record-revisions';
import { ensureTables, localTableNames } from '../../../shared/storage/table-setup';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-test-deliveries.fifo';
/** The queue of its own `crm` has (WEBHOOK_QUEUES); `audit` has none and goes to the overflow queue. */
const CRM_QUEUE = 'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-test-deliveries-crm.fifo';
const FOLD_QUEUE = 'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-test-folds';
const IDS = ['01JD5Y0RZ6W8Q4N3V2M1K0AAAA', '01JD5Y0RZ6W8Q4N3V2M1K0BBBB', '01JD5Y0RZ6W8Q4N3V2M1K0CCCC'];
const config: CatalogConfig = {
  applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read', 'create'] }] }],
  datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
  webhooks: [
    { id: 'crm', appCode: 'app-a', url: 'https://crm.example.com/hooks', datasets: ['orders'] },
    { id: 'audit', appCode: 'app-a', url: 'https://audit.example.com/hooks', datasets: ['orders'] },
  ],
};

const sqs = mockClient(SQSClient);
const lines: Record<string, unknown>[] = [];
let dynamo: EmbeddedDynamo;
let events: EventStore;
let handler: (event: DynamoDBStreamEvent) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

beforeAll(async () => {
  setLogSink((line) => lines.push(JSON.parse(line)));
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('stream-function');
  await ensureTables(dynamo.client, names);
  const documents = createDocumentClient(dynamo.client);
  await applyConfiguration(documents, { catalog: names.Catalog as string, records: names.Records as string }, config, {
    settleMs: 0,
  });
  events = new EventStore(documents, names.Events as string);
  const keyFile = path.join(mkdtempSync(path.join(tmpdir(), 'stream-function-')), 'config.json');
  writeFileSync(keyFile, JSON.stringify(config));
  Object.assign(process.env, {
    RECORDS_TABLE: names.Records,
    CATALOG_TABLE: names.Catalog,
    QUOTA_TABLE: names.Quota,
    EVENTS_TABLE: names.Events,
    KEY_STORE: 'file',
    KEY_FILE: keyFile,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    DELIVERY_QUEUE_URL: QUEUE,
    WEBHOOK_QUEUES: 'crm',
    STAGE: 'test',
    FOLD_QUEUE_URL: FOLD_QUEUE,
    AWS_REGION: 'eu-west-1',
  });
  handler = (await import('../../../functions/change-stream')).handler;
});

afterAll(() => dynamo.close());

/** The stream record of a record's creation, as Lambda hands it out. */
function created(id: string, sequence: string) {
  const item = {
    ...recordKey('orders', id),
    ...firstRevisionAttributes({ appCode: 'app-a', userId: null, requestId: `req-${id}`, occurredAt: Date.now() }),
    customer: `customer ${id.slice(-4)}`,
    gmt_create: Date.now(),
    gmt_modified: Date.now(),
  };
  return {
    eventName: 'INSERT',
    dynamodb: {
      Keys: marshall(recordKey('orders', id)),
      NewImage: marshall(item),
      SequenceNumber: sequence,
    },
  };
}

it('reports the first change it could not finish; a second delivery of the batch logs nothing twice', async () => {
  const batch = { Records: IDS.map((id, i) => created(id, `10${i}`)) } as unknown as DynamoDBStreamEvent;
  // SQS refuses the second record's delivery once.
  let refused = false;
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { MessageBody: string }[] }) => {
    if (!refused && input.Entries.some((e) => e.MessageBody.includes(IDS[1] as string))) {
      refused = true;
      throw new Error('ServiceUnavailable');
    }
    return { Successful: input.Entries.map((e, i) => ({ Id: String(i), MessageId: `m-${e.MessageBody.length}` })) };
  });

  expect(await handler(batch)).toEqual({ batchItemFailures: [{ itemIdentifier: '101' }] });
  const logged = async () =>
    (await events.read('orders', { from: '0', through: 'Z' }, 10, new CapacityMeter())).changes.map((c) => c.id);
  // The refused record's event is logged (its delivery was not): the retry queues it without logging it again.
  expect((await logged()).sort()).toEqual([...IDS].sort());

  expect(await handler(batch)).toEqual({ batchItemFailures: [] });
  expect((await logged()).sort()).toEqual([...IDS].sort());
  const queued = sqs
    .commandCalls(SendMessageBatchCommand)
    .flatMap((c) => (c.args[0].input.Entries ?? []).map((e) => JSON.parse(e.MessageBody as string).id as string));
  // Each record's delivery went out at least once; the deduplication id makes SQS keep one of each.
  expect(new Set(queued)).toEqual(new Set(IDS));
  // Each subscription's on its queue: crm's own, audit's the overflow queue.
  const queues = new Set(
    sqs
      .commandCalls(SendMessageBatchCommand)
      .flatMap((c) =>
        (c.args[0].input.Entries ?? []).map(
          (e) => `${JSON.parse(e.MessageBody as string).subscriptionId} ${c.args[0].input.QueueUrl}`,
        ),
      ),
  );
  expect(queues).toEqual(new Set([`crm ${CRM_QUEUE}`, `audit ${QUEUE}`]));
  const batchLines = lines.filter((l) => l.operation === 'change-log');
  // Logged, duplicates, changes handed out again: the three records' changes start together, so all three are
  // logged the first time; the refused one and the one after it come again.
  expect(batchLines.map((l) => [l.changeEventsLogged, l.duplicates, l.changeBatchFailures])).toEqual([
    [3, 0, 2],
    [0, 3, 0],
  ]);
});

it('asks the fold queue for a fold of the datasets whose change items the batch holds, once they have settled', async () => {
  sqs.reset();
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  const position = ulid();
  const claim = {
    eventName: 'INSERT',
    dynamodb: {
      Keys: marshall(datasetChangeKey('orders', position)),
      NewImage: marshall({ ...datasetChangeKey('orders', position), kind: 'create' }),
      SequenceNumber: '200',
    },
  };
  const started = Date.now();
  expect(await handler({ Records: [claim] } as unknown as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
  const sent = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input);
  expect(sent.map((input) => input.QueueUrl)).toEqual([FOLD_QUEUE]);
  const entry = sent[0]?.Entries?.[0];
  expect(JSON.parse(entry?.MessageBody as string)).toEqual({
    datasetCode: 'orders',
    dueAt: decodeTime(position) + SETTLE_MS + FOLD_MARGIN_MS,
  });
  // Due 31 s after the claim's position: the delay counts from when the stream function saw it.
  expect(entry?.DelaySeconds).toBeGreaterThanOrEqual(30);
  expect(entry?.DelaySeconds).toBeLessThanOrEqual(Math.ceil((decodeTime(position) + 31_000 - started) / 1000));
});
