/**
 * The embedded store closes what dynalite opens to read a range (bin/local/embedded-dynamo.ts): every Query and
 * Scan reads through a LevelDB iterator, and an iterator left open holds a snapshot that keeps every later write in
 * memory. Counted where the LevelDB layer (abstract-level) registers and releases an open iterator, for both
 * stores `npm start` runs on: in memory and in a data directory. A store in a data directory opens LevelDB with a
 * bound on its open (so mapped) table files, seen in the options LevelDB (classic-level) is opened with, and a data
 * directory another store holds fails the start with a reason a user can act on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { STORE_OPEN_FILES, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

const { AbstractLevel } = require('abstract-level') as {
  AbstractLevel: { prototype: { attachResource(resource: object): void; detachResource(resource: object): void } };
};

const prototype = AbstractLevel.prototype;
const attach = prototype.attachResource;
const detach = prototype.detachResource;
const open = new Set<object>();
let opened = 0;

beforeAll(() => {
  prototype.attachResource = function (this: unknown, resource: object) {
    opened += 1;
    open.add(resource);
    attach.call(this, resource);
  };
  prototype.detachResource = function (this: unknown, resource: object) {
    open.delete(resource);
    detach.call(this, resource);
  };
});
afterAll(() => {
  prototype.attachResource = attach;
  prototype.detachResource = detach;
});

const stores: [string, () => string | undefined][] = [
  ['in memory', () => undefined],
  ['in a data directory', () => mkdtempSync(path.join(os.tmpdir(), 'embedded-dynamo-'))],
];

it.each(
  stores,
)('the store %s has no iterator left open after queries and scans, whole or cut short by Limit', async (_, dir) => {
  const dataDir = dir();
  const names = localTableNames('embedded-dynamo');
  const dynamo = await startEmbeddedDynamo(dataDir, [names.Records as string]);
  try {
    await ensureTables(dynamo.client, names);
    const table = names.Records as string;
    for (let i = 0; i < 30; i++) {
      await dynamo.client.send(
        new PutItemCommand({
          TableName: table,
          Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: `r${String(i).padStart(3, '0')}` } },
        }),
      );
    }
    const query = (limit?: number) =>
      dynamo.client.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': '@pk' },
          ExpressionAttributeValues: { ':pk': { S: 'ds#orders' } },
          ...(limit === undefined ? {} : { Limit: limit }),
        }),
      );
    opened = 0;
    const whole = await query();
    const cut = await query(5);
    const scanned = await dynamo.client.send(new ScanCommand({ TableName: table, Limit: 7 }));
    for (let i = 0; i < 20; i++) await query(3);
    expect([whole.Count, cut.Count, scanned.Count]).toEqual([30, 5, 7]);
    expect(opened).toBeGreaterThanOrEqual(23);
    // An iterator closes as its stream is destroyed, just after the answer is sent.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(open.size).toBe(0);
  } finally {
    await dynamo.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
});

it('a store in a data directory opens LevelDB with at most STORE_OPEN_FILES files open, so few tables are mapped', async () => {
  const { ClassicLevel } = require('classic-level') as {
    ClassicLevel: { prototype: { _open(options: { maxOpenFiles?: number }): Promise<void> } };
  };
  const openStore = ClassicLevel.prototype._open;
  const asked: (number | undefined)[] = [];
  ClassicLevel.prototype._open = function (this: unknown, options) {
    asked.push(options.maxOpenFiles);
    return openStore.call(this, options);
  };
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'embedded-dynamo-'));
  try {
    const dynamo = await startEmbeddedDynamo(dataDir);
    await dynamo.close();
    const smaller = await startEmbeddedDynamo(dataDir, [], 80);
    await smaller.close();
  } finally {
    ClassicLevel.prototype._open = openStore;
    rmSync(dataDir, { recursive: true, force: true });
  }
  expect(STORE_OPEN_FILES).toBe(200);
  expect(asked).toEqual([200, 80]);
});

it('a data directory another store holds open fails the start with the reason, and the first store keeps serving', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'embedded-dynamo-'));
  const names = localTableNames('embedded-dynamo');
  const first = await startEmbeddedDynamo(dataDir);
  try {
    await expect(startEmbeddedDynamo(dataDir)).rejects.toThrow(
      `The store in ${dataDir} is in use by another process (IO error: lock ${dataDir}/LOCK: already held by process): stop it or use another directory.`,
    );
    await ensureTables(first.client, names);
    await first.client.send(
      new PutItemCommand({
        TableName: names.Records as string,
        Item: { '@pk': { S: 'ds#orders' }, '@sk': { S: 'r1' } },
      }),
    );
    const scanned = await first.client.send(new ScanCommand({ TableName: names.Records as string }));
    expect(scanned.Count).toBe(1);
  } finally {
    await first.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
