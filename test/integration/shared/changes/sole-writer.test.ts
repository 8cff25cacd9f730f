/**
 * The change log's writer as the sole writer of its events (`npm start` over the embedded store, whose stream is
 * read in the store's own process: changes/change-stream.ts, ChangeLogWriting), over a real store (dynalite) with
 * SQS mocked at the SDK client for the deliveries: a batch's events are logged with one consistent read and batch
 * writes, so the requests a batch costs do not grow with the changes it holds one by one; each change is logged
 * once however often its batch is read, at the position it was first given; a record's changes in one batch get
 * positions in their order; and each event's delivery is queued at the event's position.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { monotonicFactory } from 'ulid';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { CachedCatalogProvider } from '../../../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { applyConfiguration, readDeployedCatalog } from '../../../../shared/catalog-store/catalog-store';
import { type ChangeLogPorts, type ItemChangeRecord, logItemChanges } from '../../../../shared/changes/change-stream';
import { SqsDeliveryQueue } from '../../../../shared/changes/sqs-deliveries';
import { CapacityMeter } from '../../../../shared/observability/capacity-meter';
import { EventStore } from '../../../../shared/storage/event-store';
import { recordKey } from '../../../../shared/storage/item-keys';
import { originAttribute } from '../../../../shared/storage/record-revisions';
import { RecordAttr } from '../../../../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/1/data-access-service-test-deliveries.fifo';
const config: CatalogConfig = {
  applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read', 'create'] }] }],
  datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
  webhooks: [{ id: 'crm', appCode: 'app-a', url: 'https://crm.example.com/hooks', datasets: ['orders'] }],
};

const sqs = mockClient(SQSClient);
let dynamo: EmbeddedDynamo;
let events: EventStore;
let ports: ChangeLogPorts;
/** The requests the writer sent to the store, by operation. */
const requests: string[] = [];

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  const names = localTableNames('sole-writer');
  await ensureTables(dynamo.client, names);
  const documents = createDocumentClient(dynamo.client);
  await applyConfiguration(documents, { catalog: names.Catalog as string, records: names.Records as string }, config, {
    settleMs: 0,
  });
  documents.middlewareStack.add(
    (next, context) => (args) => {
      requests.push(context.commandName as string);
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  events = new EventStore(documents, names.Events as string);
  const catalog = new CachedCatalogProvider({ load: () => readDeployedCatalog(documents, names.Catalog as string) });
  const nextPosition = monotonicFactory();
  ports = {
    catalog: () => catalog.current(),
    events,
    deliveries: new SqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), () => QUEUE),
    folds: { schedule: async () => undefined },
    nextPosition: () => nextPosition(),
    now: Date.now,
  };
  await catalog.current();
});

afterAll(() => dynamo.close());

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
    Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}` })),
  }));
});

/** The stream record of revision `revision` of record `id` (the one before it as the old image). */
function change(id: string, revision: number, sequence: number): ItemChangeRecord {
  const image = (rev: number) => ({
    ...recordKey('orders', id),
    [RecordAttr.revision]: rev,
    [RecordAttr.origin]: originAttribute({
      appCode: 'app-a',
      userId: null,
      requestId: `req-${id}-${rev}`,
      occurredAt: Date.now(),
    }),
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

const ids = Array.from({ length: 99 }, (_, i) => `01JD5Y0RZ6W8Q4N3V2M1K0${String(i).padStart(4, '0')}`);

function queuedPositions(): Map<string, string> {
  return new Map(
    sqs.commandCalls(SendMessageBatchCommand).flatMap((call) =>
      (call.args[0].input.Entries ?? []).map((entry) => {
        const body = JSON.parse(entry.MessageBody as string) as { id: string; revision: number; position: string };
        return [`${body.id}/${body.revision}`, body.position] as const;
      }),
    ),
  );
}

it('a batch of 100 changes (99 records, one of them changed twice) costs 1 read and 4 batch writes, and a second read of it 1 read and no write', async () => {
  const batch = [...ids.map((id, i) => change(id, 1, 100 + i)), change(ids[0] as string, 2, 200)];
  requests.length = 0;
  const first = await logItemChanges(batch, ports, new CapacityMeter(), { soleWriter: true });
  expect([first.logged, first.duplicates, first.queued, first.failedAt]).toEqual([100, 0, 100, undefined]);
  // 100 events (a full batch of the poller): one read of which are logged, then 25 per batch write; the catalog
  // is cached.
  expect(requests).toEqual(['BatchGetItemCommand', ...Array(4).fill('BatchWriteItemCommand')]);

  const stored = async (id: string, revision: number) =>
    (await events.get('orders', id, revision, new CapacityMeter()))?.position as string;
  const positions = new Map<string, string>();
  for (const id of ids) positions.set(`${id}/1`, await stored(id, 1));
  positions.set(`${ids[0]}/2`, await stored(ids[0] as string, 2));
  // The record's second change is after its first in the feed.
  expect((positions.get(`${ids[0]}/1`) as string) < (positions.get(`${ids[0]}/2`) as string)).toBe(true);
  // Each delivery carries its event's position.
  expect(queuedPositions()).toEqual(positions);

  sqs.resetHistory();
  requests.length = 0;
  const again = await logItemChanges(batch, ports, new CapacityMeter(), { soleWriter: true });
  expect([again.logged, again.duplicates, again.queued, again.failedAt]).toEqual([0, 100, 100, undefined]);
  expect(requests).toEqual(['BatchGetItemCommand']);
  // Logged once: the events kept their first positions, and the deliveries queued again carry them.
  for (const [key, position] of positions) {
    const [id, revision] = key.split('/') as [string, string];
    expect(await stored(id, Number(revision))).toBe(position);
  }
  expect(queuedPositions()).toEqual(positions);
});

it('a batch whose deliveries cannot be queued is read again from its first change, and what it logged stays logged once', async () => {
  const fresh = Array.from({ length: 3 }, (_, i) => `01JD5Y0RZ6W8Q4N3V2M1K1${String(i).padStart(4, '0')}`);
  const batch = fresh.map((id, i) => change(id, 1, 300 + i));
  let refused = false;
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => {
    if (!refused) {
      refused = true;
      throw new Error('ServiceUnavailable');
    }
    return { Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}` })) };
  });
  const failed = await logItemChanges(batch, ports, new CapacityMeter(), { soleWriter: true });
  expect([failed.logged, failed.failedAt, failed.error?.message]).toEqual([
    3,
    '00000000000000000300',
    'ServiceUnavailable',
  ]);
  const retried = await logItemChanges(batch, ports, new CapacityMeter(), { soleWriter: true });
  expect([retried.logged, retried.duplicates, retried.queued, retried.failedAt]).toEqual([0, 3, 3, undefined]);
  const feed = await events.read('orders', { from: '0', through: 'Z' }, 200, new CapacityMeter());
  expect(feed.changes.filter((c) => fresh.includes(c.id)).map((c) => c.id)).toEqual(fresh);
});
