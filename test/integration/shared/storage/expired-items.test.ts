/**
 * The twin of DynamoDB's TTL for the embedded store (`expired-items.ts`), over dynalite: a pass deletes the items of
 * every table whose expiry attribute (epoch seconds) is before the clock, keeps those not yet expired, those without
 * one, and an item written again with a later expiry between the scan and the delete; tables without an expiry
 * attribute are not read.
 */
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { removeExpired, ScannedExpiry } from '../../../../shared/storage/expired-items';
import { idempotencyItemKey, nonceKey } from '../../../../shared/storage/item-keys';
import { TABLES } from '../../../../shared/storage/table-definitions';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

let dynamo: EmbeddedDynamo;
const names = localTableNames('expiry');
const now = Date.UTC(2026, 5, 1);
const seconds = now / 1000;

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  await ensureTables(dynamo.client, names);
});
afterAll(() => dynamo.close());

function expiry(client: ReturnType<typeof createDocumentClient>) {
  return new ScannedExpiry(
    client,
    TABLES.map((definition) => ({ name: names[definition.logicalName] as string, definition })),
  );
}

async function keysOf(client: ReturnType<typeof createDocumentClient>, table: string): Promise<string[]> {
  const page = await client.send(new ScanCommand({ TableName: table }));
  return (page.Items ?? []).map((item) => String(item['@pk'] ?? item.pk)).sort();
}

it('deletes what has expired in every table with an expiry, and nothing else', async () => {
  const client = createDocumentClient(dynamo.client);
  const records = names.Records as string;
  const quota = names.Quota as string;
  await client.send(
    new PutCommand({ TableName: records, Item: { ...idempotencyItemKey('app', 'old'), '@expires': seconds - 1 } }),
  );
  await client.send(
    new PutCommand({ TableName: records, Item: { ...idempotencyItemKey('app', 'new'), '@expires': seconds + 60 } }),
  );
  await client.send(
    new PutCommand({ TableName: records, Item: { '@pk': 'ds#items', '@sk': '01RECORD', name: 'kept' } }),
  );
  await client.send(
    new PutCommand({ TableName: quota, Item: { ...nonceKey('app', 'n-old'), expiresAt: seconds - 5 } }),
  );
  await client.send(
    new PutCommand({ TableName: quota, Item: { ...nonceKey('app', 'n-new'), expiresAt: seconds + 5 } }),
  );
  await client.send(
    new PutCommand({ TableName: names.Catalog as string, Item: { pk: 'catalog#current', expiresAt: 1 } }),
  );

  expect(await removeExpired(expiry(client), now)).toBe(2);
  expect(await keysOf(client, records)).toEqual(['ds#items', 'idem#app#new']);
  expect(await keysOf(client, quota)).toEqual(['nonce#app#n-new']);
  // The catalog table has no expiry attribute: its items are never the twin's.
  expect(await keysOf(client, names.Catalog as string)).toEqual(['catalog#current']);
});

it('keeps an item written again with a later expiry after the scan read it', async () => {
  const client = createDocumentClient(dynamo.client);
  const records = names.Records as string;
  const key = idempotencyItemKey('app', 'rewritten');
  await client.send(new PutCommand({ TableName: records, Item: { ...key, '@expires': seconds - 1 } }));
  // The write lands between the scan and the delete: intercept the first delete and rewrite the item just before it.
  const original = client.send.bind(client);
  let rewritten = false;
  const racing = Object.assign(Object.create(client), {
    send: async (command: { constructor: { name: string } }) => {
      if (!rewritten && command.constructor.name === 'DeleteCommand') {
        rewritten = true;
        await original(new PutCommand({ TableName: records, Item: { ...key, '@expires': seconds + 3600 } }));
      }
      return original(command as never);
    },
  });
  await removeExpired(expiry(racing), now);
  expect(rewritten).toBe(true);
  const item = await client.send(new GetCommand({ TableName: records, Key: key }));
  expect(item.Item?.['@expires']).toBe(seconds + 3600);
});
