/**
 * The parts of dynalite the embedded stream (bin/local/embedded-stream.ts) reaches into, checked to be there, so a
 * dynalite upgrade that moves them fails here, loudly, rather than leaving `npm start` without a change log: the
 * `dynalite/db` module's `create`, called by the server; the store's LevelDB (`get`, `batch`, `iterator`, `clear`),
 * `getItemDb` (`put`, `del`) and `getTable`. Then what they give: one stream record per successful item change,
 * with the item before and after, and none for a write whose condition failed; and trims that forget exactly the
 * records up to the one named, one after the other.
 */
import { ConditionalCheckFailedException, PutItemCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import type { DynaliteStore } from '../../../../bin/local/embedded-stream';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

const dynaliteDb = require('dynalite/db') as { create?: (options: object) => DynaliteStore };

it("dynalite's server builds its store with dynalite/db's create, and the store has what the stream uses", async () => {
  expect(typeof dynaliteDb.create).toBe('function');
  const create = dynaliteDb.create as (options: object) => DynaliteStore;
  let built: DynaliteStore | undefined;
  dynaliteDb.create = (options: object) => {
    built = create(options);
    return built;
  };
  let server: ReturnType<typeof dynalite>;
  try {
    server = dynalite({ createTableMs: 0 });
  } finally {
    dynaliteDb.create = create;
  }
  expect(built).toBeDefined();
  const store = built as DynaliteStore;
  expect([typeof store.db.get, typeof store.db.batch, typeof store.db.iterator, typeof store.db.clear]).toEqual([
    'function',
    'function',
    'function',
    'function',
  ]);
  expect(typeof store.getItemDb).toBe('function');
  expect(typeof store.getTable).toBe('function');
  const itemDb = store.getItemDb('any-table');
  expect([typeof itemDb.put, typeof itemDb.del]).toEqual(['function', 'function']);
  expect(typeof store.db.iterator({ limit: 1 }).all).toBe('function');
  await new Promise((resolve) => server.close(resolve));
});

describe('the stream it gives', () => {
  let dynamo: EmbeddedDynamo;
  const names = localTableNames('embedded-stream');

  beforeAll(async () => {
    dynamo = await startEmbeddedDynamo(undefined, [names.Records as string]);
    await ensureTables(dynamo.client, names);
  });
  afterAll(() => dynamo.close());

  it('one record per successful item change, with the item before and after; none for a failed condition', async () => {
    expect(dynamo.stream).toBeDefined();
    const put = (customer: string, mustBeNew = false) =>
      dynamo.client.send(
        new PutItemCommand({
          TableName: names.Records,
          Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: 'r1' }, customer: { S: customer } },
          ...(mustBeNew
            ? { ConditionExpression: 'attribute_not_exists(#sk)', ExpressionAttributeNames: { '#sk': '@sk' } }
            : {}),
        }),
      );
    await put('Ann');
    await put('Bob');
    await expect(put('Cy', true)).rejects.toBeInstanceOf(ConditionalCheckFailedException);

    const source = dynamo.stream?.source(names.Records as string);
    const [shard] = (await source?.shards()) ?? [];
    const records = (await source?.read(shard as string, undefined, 10)) ?? [];
    expect(
      records.map((r) => [
        r.eventName,
        (r.dynamodb?.OldImage as { customer?: { S: string } } | undefined)?.customer?.S ?? null,
        (r.dynamodb?.NewImage as { customer?: { S: string } } | undefined)?.customer?.S ?? null,
      ]),
    ).toEqual([
      ['INSERT', null, 'Ann'],
      ['MODIFY', 'Ann', 'Bob'],
    ]);
  });

  it('a trim forgets the records up to the one it names and keeps the later ones; the next trim goes on from there', async () => {
    const source = dynamo.stream?.source(names.Records as string);
    const [shard] = (await source?.shards()) ?? [];
    for (const customer of ['Dee', 'Eve', 'Fay', 'Gus']) {
      await dynamo.client.send(
        new PutItemCommand({
          TableName: names.Records,
          Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: 'r2' }, customer: { S: customer } },
        }),
      );
    }
    const customers = async () =>
      ((await source?.read(shard as string, undefined, 100)) ?? []).map(
        (r) => (r.dynamodb?.NewImage as { customer: { S: string } }).customer.S,
      );
    const sequences = ((await source?.read(shard as string, undefined, 100)) ?? []).map(
      (r) => r.dynamodb?.SequenceNumber as string,
    );
    expect(await customers()).toEqual(['Ann', 'Bob', 'Dee', 'Eve', 'Fay', 'Gus']);
    await source?.trim?.(shard as string, sequences[1] as string);
    expect(await customers()).toEqual(['Dee', 'Eve', 'Fay', 'Gus']);
    await source?.trim?.(shard as string, sequences[4] as string);
    expect(await customers()).toEqual(['Gus']);
  });
});
