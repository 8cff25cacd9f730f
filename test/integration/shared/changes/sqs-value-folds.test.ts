/**
 * The deployment's fold queue (changes/sqs-value-folds.ts, changes/value-folds.ts), with SQS mocked at the SDK
 * client: a stream batch asks for one fold per dataset whose change items it holds, due when the newest has
 * settled; the message waits that long (SQS's delivery delay, at most 15 minutes); the fold function folds each
 * dataset of a batch once, drops a body that is no fold request, and reports the messages of a fold that failed so
 * that SQS hands them out again.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { Catalog } from '../../../../shared/catalog/catalog';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { foldSqsBatch, SqsFoldQueue } from '../../../../shared/changes/sqs-value-folds';
import { foldsOfItemChanges } from '../../../../shared/changes/value-folds';
import { setLogSink } from '../../../../shared/observability/request-log';
import { DatasetBookkeeping } from '../../../../shared/storage/dataset-bookkeeping';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/1/folds';
const sqs = mockClient(SQSClient);
const logged: Record<string, unknown>[] = [];
let dynamo: EmbeddedDynamo;
let bookkeeping: DatasetBookkeeping;

const config = {
  applications: [
    {
      appCode: 'app',
      name: 'app',
      accessKey: 'ak-folds-0001',
      signingSecret: 'sk-folds-secret',
      grants: [{ datasetCode: 'orders', operations: ['read'] }],
    },
  ],
  datasets: [
    {
      appCode: 'app',
      datasetCode: 'orders',
      name: 'orders',
      fields: [{ name: 'status', type: 'enum', options: ['new', 'paid'], indexed: true }],
    },
  ],
} as CatalogConfig;

beforeAll(async () => {
  setLogSink((line) => logged.push(JSON.parse(line)));
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('folds');
  await ensureTables(dynamo.client, names);
  bookkeeping = new DatasetBookkeeping(createDocumentClient(dynamo.client), names.Records as string);
});
afterAll(() => dynamo.close());
beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  logged.length = 0;
});

const key = (pk: string, sk: string) => ({ '@pk': { S: pk }, '@sk': { S: sk } });
// ULIDs of 2026-11-26T16:00:00.000Z and one second later.
const AT_16 = '01M8C9BK00';
const AT_16_01 = '01M8C9BKZ8';

it('asks for one fold per dataset whose change items a stream batch holds, due when the newest has settled', () => {
  const at = Date.parse('2026-11-26T16:00:00.000Z');
  expect(
    foldsOfItemChanges(
      [
        { eventName: 'INSERT', dynamodb: { Keys: key('meta#ds#orders', `change#${AT_16}AAAAAAAAAAAAAAAA`) } },
        { eventName: 'INSERT', dynamodb: { Keys: key('meta#ds#orders', `change#${AT_16_01}AAAAAAAAAAAAAAAA`) } },
        { eventName: 'INSERT', dynamodb: { Keys: key('meta#ds#people', `change#${AT_16}BBBBBBBBBBBBBBBB`) } },
        // A withdrawn claim, a record, a count page and a checked position ask for nothing.
        { eventName: 'REMOVE', dynamodb: { Keys: key('meta#ds#items', `change#${AT_16}CCCCCCCCCCCCCCCC`) } },
        { eventName: 'INSERT', dynamodb: { Keys: key('ds#items', `${AT_16}DDDDDDDDDDDDDDDD`) } },
        { eventName: 'INSERT', dynamodb: { Keys: key('meta#ds#items', 'changes-checked') } },
      ],
      at + 2_000,
    ),
  ).toEqual([
    { datasetCode: 'orders', dueAt: at + 1_000 + 31_000 },
    { datasetCode: 'people', dueAt: at + 31_000 },
  ]);
});

it('asks for a fold a few seconds on when a batch update reaches its commit point, to finish it if its writer died', () => {
  const now = Date.parse('2026-11-26T16:00:00.000Z');
  const intent = (dataset: string, state: string) => ({
    Keys: key(`meta#ds#${dataset}`, `batch-update#${AT_16}EEEEEEEEEEEEEEEE`),
    NewImage: { state: { S: state } },
  });
  expect(
    foldsOfItemChanges(
      [
        // A batch begun (pending) asks for nothing: it changes no value before its commit point.
        { eventName: 'INSERT', dynamodb: intent('orders', 'pending') },
        { eventName: 'MODIFY', dynamodb: intent('orders', 'committed') },
        { eventName: 'MODIFY', dynamodb: intent('people', 'aborted') },
        // An intent deleted: the batch is done.
        { eventName: 'REMOVE', dynamodb: { Keys: intent('items', 'committed').Keys } },
      ],
      now,
    ),
  ).toEqual([{ datasetCode: 'orders', dueAt: now + 5_000 }]);
});

it('puts each fold on the queue with the delay until it is due, at most 15 minutes', async () => {
  const now = Date.parse('2026-11-26T16:00:00.000Z');
  await new SqsFoldQueue(new SQSClient({}), QUEUE, () => now).schedule([
    { datasetCode: 'orders', dueAt: now + 31_200 },
    { datasetCode: 'people', dueAt: now - 5_000 },
    { datasetCode: 'items', dueAt: now + 3_600_000 },
  ]);
  const sent = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
  expect(sent).toEqual([
    {
      QueueUrl: QUEUE,
      Entries: [
        { Id: '0', MessageBody: JSON.stringify({ datasetCode: 'orders', dueAt: now + 31_200 }), DelaySeconds: 32 },
        { Id: '1', MessageBody: JSON.stringify({ datasetCode: 'people', dueAt: now - 5_000 }), DelaySeconds: 0 },
        { Id: '2', MessageBody: JSON.stringify({ datasetCode: 'items', dueAt: now + 3_600_000 }), DelaySeconds: 900 },
      ],
    },
  ]);
});

function batch(bodies: string[]): SQSEvent {
  return { Records: bodies.map((body, i) => ({ messageId: `m${i}`, body }) as SQSRecord) };
}

it('folds each dataset of a batch once, and drops a body that is no fold request', async () => {
  const catalog = new Catalog(config);
  const result = await foldSqsBatch(
    batch([
      JSON.stringify({ datasetCode: 'orders', dueAt: 1 }),
      JSON.stringify({ datasetCode: 'orders', dueAt: 2 }),
      'not a fold',
      JSON.stringify({ datasetCode: 'gone', dueAt: 2 }),
    ]),
    {
      ports: { catalog: async () => catalog, bookkeeping, now: Date.now },
      queue: new SqsFoldQueue(new SQSClient({}), QUEUE),
      metricNamespace: 'Test',
    },
  );
  expect(result).toEqual({ batchItemFailures: [] });
  expect(logged.map((l) => [l.operation, l.datasetCode, l.valueFoldRecords, l.level])).toEqual([
    ['value-fold', 'orders', 0, 'INFO'],
    ['value-fold', 'gone', 0, 'INFO'],
  ]);
  expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
});

it('reports the messages of a fold that failed, so that SQS hands them out again', async () => {
  const result = await foldSqsBatch(
    batch([JSON.stringify({ datasetCode: 'orders', dueAt: 1 }), JSON.stringify({ datasetCode: 'orders', dueAt: 2 })]),
    {
      ports: {
        catalog: async () => {
          throw new Error('catalog table unreachable');
        },
        bookkeeping,
        now: Date.now,
      },
      queue: new SqsFoldQueue(new SQSClient({}), QUEUE),
      metricNamespace: 'Test',
    },
  );
  expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }] });
  expect(logged.map((l) => [l.operation, l.level, l.valueFoldFailures, l.error])).toEqual([
    ['value-fold', 'ERROR', 1, 'Error: catalog table unreachable'],
  ]);
});
