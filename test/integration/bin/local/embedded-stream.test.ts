/**
 * The parts of dynalite the embedded stream (bin/local/embedded-stream.ts) reaches into, checked to be there, so a
 * dynalite upgrade that moves them fails here, loudly, rather than leaving `npm start` without a change log: the
 * `dynalite/db` module's `create`, called by the server; the store's LevelDB (`get`, `put`, `batch`, `iterator`,
 * `clear`), `getItemDb` (`put`, `del`) and `getTable`. Then what they give: one stream record per successful item
 * change, with the item before and after, and none for a write whose condition failed; trims that forget exactly
 * the records up to the one named, one after the other; a reader that never passes a record still landing; and a
 * store reopened after a trim of its every record numbering on after them, where the reader's checkpoint is.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
  expect([
    typeof store.db.get,
    typeof store.db.put,
    typeof store.db.batch,
    typeof store.db.iterator,
    typeof store.db.clear,
  ]).toEqual(['function', 'function', 'function', 'function', 'function']);
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

describe('a reader beside writes that land out of order', () => {
  let dynamo: EmbeddedDynamo;
  let store: DynaliteStore | undefined;
  const names = localTableNames('embedded-stream-order');

  beforeAll(async () => {
    const create = dynaliteDb.create as (options: object) => DynaliteStore;
    dynaliteDb.create = (options: object) => {
      store = create(options);
      return store;
    };
    try {
      dynamo = await startEmbeddedDynamo(undefined, [names.Records as string]);
    } finally {
      dynaliteDb.create = create;
    }
    await ensureTables(dynamo.client, names);
  });
  afterAll(() => dynamo.close());

  it('never passes a record whose write is still landing: a later one that landed first waits for it', async () => {
    const db = (store as DynaliteStore).db;
    const batch = db.batch.bind(db);
    // The write of 'Held' (and its stream record) is kept from landing until released.
    let release: () => void = () => undefined;
    let held: () => void = () => undefined;
    const isHeld = new Promise<void>((resolve) => {
      held = resolve;
    });
    db.batch = async (operations) => {
      if (JSON.stringify(operations).includes('Held')) {
        held();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      return batch(operations);
    };
    const put = (sk: string, customer: string) =>
      dynamo.client.send(
        new PutItemCommand({
          TableName: names.Records,
          Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: sk }, customer: { S: customer } },
        }),
      );
    const source = dynamo.stream?.source(names.Records as string);
    const [shard] = (await source?.shards()) ?? [];
    // A reader as the stream poller is: from its checkpoint, which moves to the last record it read.
    let checkpoint: string | undefined;
    const seen: string[] = [];
    const readOnce = async () => {
      const records = (await source?.read(shard as string, checkpoint, 100)) ?? [];
      for (const r of records) seen.push((r.dynamodb?.NewImage as { customer: { S: string } }).customer.S);
      checkpoint = records.at(-1)?.dynamodb?.SequenceNumber ?? checkpoint;
    };

    const first = put('r1', 'Held');
    await isHeld;
    await put('r2', 'Quick');
    await readOnce();
    release();
    await first;
    await readOnce();
    db.batch = batch;
    expect(seen).toEqual(['Held', 'Quick']);
  });
});

it('a store reopened after its stream was trimmed to its last record goes on numbering after it', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'das-embedded-stream-'));
  const names = localTableNames('embedded-stream-reopen');
  const open = async () => {
    let store: DynaliteStore | undefined;
    const create = dynaliteDb.create as (options: object) => DynaliteStore;
    dynaliteDb.create = (options: object) => {
      store = create(options);
      return store;
    };
    try {
      const dynamo = await startEmbeddedDynamo(dataDir, [names.Records as string]);
      return { dynamo, db: (store as DynaliteStore).db as DynaliteStore['db'] & { close(): Promise<void> } };
    } finally {
      dynaliteDb.create = create;
    }
  };
  const put = (dynamo: EmbeddedDynamo, customer: string) =>
    dynamo.client.send(
      new PutItemCommand({
        TableName: names.Records,
        Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: customer }, customer: { S: customer } },
      }),
    );
  const customersAfter = async (dynamo: EmbeddedDynamo, after: string | undefined) => {
    const source = dynamo.stream?.source(names.Records as string);
    const records = (await source?.read('shard-0', after, 100)) ?? [];
    return records.map((r) => [(r.dynamodb?.NewImage as { customer: { S: string } }).customer.S, r]) as [
      string,
      { dynamodb?: { SequenceNumber?: string } },
    ][];
  };

  const first = await open();
  await ensureTables(first.dynamo.client, names);
  for (const customer of ['Ann', 'Bob', 'Cy']) await put(first.dynamo, customer);
  const read = await customersAfter(first.dynamo, undefined);
  expect(read.map(([customer]) => customer)).toEqual(['Ann', 'Bob', 'Cy']);
  // As the stream poller does once the change log has them: the checkpoint, then a trim through it.
  const checkpoint = read.at(-1)?.[1].dynamodb?.SequenceNumber as string;
  await first.dynamo.stream?.source(names.Records as string).trim?.('shard-0', checkpoint);
  await first.dynamo.close();
  await first.db.close();

  const second = await open();
  try {
    await put(second.dynamo, 'Dee');
    expect((await customersAfter(second.dynamo, checkpoint)).map(([customer]) => customer)).toEqual(['Dee']);
  } finally {
    await second.dynamo.close();
    await second.db.close();
  }
});
