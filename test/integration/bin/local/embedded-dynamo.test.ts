/**
 * The embedded store closes what dynalite opens to read a range (bin/local/embedded-dynamo.ts): every Query and
 * Scan reads through a LevelDB iterator, and an iterator left open holds a snapshot that keeps every later write in
 * memory. Counted where the LevelDB layer (abstract-level) registers and releases an open iterator, for both
 * stores `npm start` runs on: in memory and in a data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
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
