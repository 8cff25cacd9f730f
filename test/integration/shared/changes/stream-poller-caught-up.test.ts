/**
 * The change log's `logged()` locally is the stream poller's `caughtUp` (shared/changes/stream-poller.ts): it
 * resolves once every item change the stream held when it was called is handed to the writer and finished. Over
 * the embedded store's stream, while writes go on without a pause (a bulk load), it still resolves as soon as the
 * writer has passed them, not only once the writes stop; the MySQL mirror's rounds and every query on the `mysql`
 * engine wait on it.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import type { ItemChangeRecord } from '../../../../shared/changes/change-stream';
import { StreamPoller } from '../../../../shared/changes/stream-poller';
import { StreamCheckpoints } from '../../../../shared/storage/stream-checkpoints';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

const names = localTableNames('poller-caught-up');
let dynamo: EmbeddedDynamo;

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo(undefined, [names.Records as string]);
  await ensureTables(dynamo.client, names);
});
afterAll(() => dynamo.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const keyOf = (record: ItemChangeRecord) =>
  String((record.dynamodb?.NewImage as { '@sk'?: { S?: string } })?.['@sk']?.S);

it('resolves while writes go on, once the writer has finished every change acknowledged before the call', async () => {
  const handed = new Set<string>();
  const source = dynamo.stream?.source(names.Records as string);
  if (!source) throw new Error('the embedded store has no stream');
  const poller = new StreamPoller({
    source,
    checkpoints: new StreamCheckpoints(createDocumentClient(dynamo.client), names.Events as string),
    // A writer that takes its time over each batch, as the change log's does beside a load.
    handle: async (records) => {
      await pause(20);
      for (const record of records) handed.add(keyOf(record));
      return {};
    },
    batchSize: 50,
    idleMs: 5_000,
  });
  poller.start();
  const acknowledged: string[] = [];
  let writing = true;
  let writerEnded = false;
  const writer = (async () => {
    for (let i = 0; writing && i < 1_000_000; i++) {
      const sk = `r${String(i).padStart(6, '0')}`;
      await dynamo.client.send(
        new PutItemCommand({ TableName: names.Records, Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: sk } } }),
      );
      acknowledged.push(sk);
    }
    writerEnded = true;
  })();
  try {
    while (acknowledged.length < 300) await pause(10);
    const before = [...acknowledged];
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      poller.caughtUp().then(() => 'caught up'),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve('still waiting'), 15_000);
      }),
    ]);
    clearTimeout(timer);
    const missing = before.filter((sk) => !handed.has(sk));
    const stillWriting = !writerEnded;
    expect({ waited, missing, stillWriting }).toEqual({ waited: 'caught up', missing: [], stillWriting: true });
  } finally {
    writing = false;
    await writer;
    await poller.stop();
  }
}, 60_000);
