/**
 * Batch writes and reads with their bounded resend of what DynamoDB leaves unprocessed, at the SDK client: the
 * embedded store never answers with unprocessed items, so here a table is played by a map behind a mocked client
 * that takes only part of each call, as a throttled partition does. Waits go to a recorded sleep, never real time.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { ErrorCode, ServiceError } from '../../../../shared/contract/errors';
import { CapacityMeter } from '../../../../shared/observability/capacity-meter';
import {
  BatchIncomplete,
  type BatchPacing,
  type BatchWriteRequest,
  backoffMs,
  getBatch,
  getInBatches,
  MAX_BATCH_ATTEMPTS,
  writeBatch,
  writeInBatches,
} from '../../../../shared/storage/batch-items';

const TABLE = 'records';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'local' }));
const dynamo = mockClient(DynamoDBDocumentClient);

/** The table: items by id; `sent` counts how often each id was sent, `calls` the batch calls. */
let stored: Map<string, Record<string, unknown>>;
let sent: Map<string, number>;
let calls: number;
/** How many of a call's requests (or keys) the table takes, by call number (1 for the first). */
let takes: (call: number) => number;

/** A sleep that only records how long it was asked to wait. */
let waits: number[];
const pacing: BatchPacing = {
  sleep: async (ms) => {
    waits.push(ms);
  },
  random: () => 0.5,
};

beforeEach(() => {
  stored = new Map();
  sent = new Map();
  calls = 0;
  waits = [];
  takes = () => Number.POSITIVE_INFINITY;
  dynamo.reset();
  dynamo.on(BatchWriteCommand).callsFake((input: { RequestItems: Record<string, BatchWriteRequest[]> }) => {
    calls += 1;
    const requests = input.RequestItems[TABLE] ?? [];
    const taken = requests.slice(0, takes(calls));
    for (const request of taken) {
      if ('PutRequest' in request) {
        const id = request.PutRequest.Item.id as string;
        sent.set(id, (sent.get(id) ?? 0) + 1);
        stored.set(id, request.PutRequest.Item);
      } else {
        stored.delete(request.DeleteRequest.Key.id as string);
      }
    }
    const left = requests.slice(taken.length);
    return {
      ConsumedCapacity: [{ TableName: TABLE, CapacityUnits: taken.length }],
      ...(left.length > 0 ? { UnprocessedItems: { [TABLE]: left } } : {}),
    };
  });
  dynamo.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { id: string }[] }> }) => {
    calls += 1;
    const keys = input.RequestItems[TABLE]?.Keys ?? [];
    const taken = keys.slice(0, takes(calls));
    const left = keys.slice(taken.length);
    return {
      Responses: { [TABLE]: taken.flatMap((key) => stored.get(key.id) ?? []) },
      ConsumedCapacity: [{ TableName: TABLE, CapacityUnits: taken.length / 2 }],
      ...(left.length > 0 ? { UnprocessedKeys: { [TABLE]: { Keys: left } } } : {}),
    };
  });
});

afterAll(() => dynamo.restore());

function puts(count: number, from = 0): BatchWriteRequest[] {
  return Array.from({ length: count }, (_, i) => ({ PutRequest: { Item: { id: `r${from + i}`, n: from + i } } }));
}

describe('writeBatch', () => {
  it('sends what a call leaves unprocessed again, after a growing wait, until every item is written once', async () => {
    takes = () => 10;
    const meter = new CapacityMeter();
    await writeBatch(client, TABLE, puts(25), meter, pacing);
    expect(calls).toBe(3);
    expect([...stored.keys()].sort()).toEqual(
      puts(25)
        .map((r) => ('PutRequest' in r ? r.PutRequest.Item.id : ''))
        .sort(),
    );
    expect([...sent.values()].every((times) => times === 1)).toBe(true);
    // Half of 25 ms and 50 ms, plus half of the other half (random 0.5).
    expect(waits).toEqual([18.75, 37.5]);
    expect(meter.writeUnits).toBe(25);
  });

  it('gives up after the stated number of calls with BatchIncomplete, keeping what was written', async () => {
    takes = (call) => (call === 1 ? 5 : 0);
    const meter = new CapacityMeter();
    const error = await writeBatch(client, TABLE, puts(25), meter, pacing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatchIncomplete);
    expect(error).toMatchObject({ kind: 'write', unprocessed: 20 });
    expect(calls).toBe(MAX_BATCH_ATTEMPTS);
    expect(MAX_BATCH_ATTEMPTS).toBe(6);
    expect(waits).toEqual([18.75, 37.5, 75, 150, 300]);
    // The five the table took stay written and were sent once; the twenty it never took are the ones counted.
    expect([...stored.keys()]).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect([...sent.values()]).toEqual([1, 1, 1, 1, 1]);
    expect(meter.writeUnits).toBe(5);
  });

  it('is a 3001 whose words tell the caller to retry and name nothing internal', async () => {
    takes = () => 0;
    const error = await writeBatch(client, TABLE, puts(3), undefined, pacing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe(ErrorCode.Internal);
    expect((error as ServiceError).message).toBe(
      'the data store is busy and could not keep up with this request; retry in a few seconds',
    );
  });

  it('sends nothing for no requests', async () => {
    await writeBatch(client, TABLE, [], undefined, pacing);
    expect(calls).toBe(0);
  });
});

describe('writeInBatches', () => {
  it('writes any number of requests in calls of at most 25, puts and deletes alike', async () => {
    const sizes: number[] = [];
    takes = () => Number.POSITIVE_INFINITY;
    dynamo.on(BatchWriteCommand).callsFake((input: { RequestItems: Record<string, BatchWriteRequest[]> }) => {
      const requests = input.RequestItems[TABLE] ?? [];
      sizes.push(requests.length);
      for (const request of requests) {
        if ('PutRequest' in request) stored.set(request.PutRequest.Item.id as string, request.PutRequest.Item);
        else stored.delete(request.DeleteRequest.Key.id as string);
      }
      return {};
    });
    await writeInBatches(client, TABLE, puts(60), undefined, pacing);
    expect(sizes).toEqual([25, 25, 10]);
    expect(stored.size).toBe(60);
    await writeInBatches(
      client,
      TABLE,
      Array.from({ length: 30 }, (_, i) => ({ DeleteRequest: { Key: { id: `r${i}` } } })),
      undefined,
      pacing,
    );
    expect(sizes).toEqual([25, 25, 10, 25, 5]);
    expect(stored.size).toBe(30);
    expect(waits).toEqual([]);
  });
});

describe('getBatch and getInBatches', () => {
  beforeEach(() => {
    for (let i = 0; i < 250; i++) stored.set(`r${i}`, { id: `r${i}`, n: i });
  });

  it('reads the keys a call left unprocessed again, and finds each item once', async () => {
    takes = (call) => (call % 2 === 1 ? 60 : Number.POSITIVE_INFINITY);
    const found: Record<string, unknown>[] = [];
    const meter = new CapacityMeter();
    const keys = Array.from({ length: 250 }, (_, i) => ({ id: `r${i}` }));
    await getInBatches(client, TABLE, keys, { ConsistentRead: true }, meter, (items) => found.push(...items), pacing);
    // 100, 100 and 50 keys; the first call of each takes 60 (the third's 50 at once), the second takes the rest.
    expect(calls).toBe(5);
    expect(found.map((item) => item.n).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 250 }, (_, i) => i),
    );
    expect(waits).toEqual([18.75, 18.75]);
    expect(meter.readUnits).toBe(125);
  });

  it('leaves out keys with no item', async () => {
    const found: Record<string, unknown>[] = [];
    await getBatch(
      client,
      TABLE,
      [{ id: 'r1' }, { id: 'absent' }],
      {},
      new CapacityMeter(),
      (items) => found.push(...items),
      pacing,
    );
    expect(found).toEqual([{ id: 'r1', n: 1 }]);
  });

  it('gives up after the stated number of calls with BatchIncomplete of kind read', async () => {
    takes = () => 0;
    const error = await getBatch(
      client,
      TABLE,
      [{ id: 'r1' }, { id: 'r2' }],
      {},
      new CapacityMeter(),
      () => undefined,
      pacing,
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'read', unprocessed: 2 });
    expect(calls).toBe(MAX_BATCH_ATTEMPTS);
  });
});

describe('backoffMs', () => {
  it('waits between half and all of a ceiling that doubles from 25 ms, at most 775 ms before giving up', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_BATCH_ATTEMPTS - 1 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, r) => {
          const ceiling = 25 * 2 ** (attempt - 1);
          const wait = backoffMs(attempt, () => r);
          return wait >= ceiling / 2 && wait <= ceiling;
        },
      ),
    );
    const longest = Array.from({ length: MAX_BATCH_ATTEMPTS - 1 }, (_, i) => backoffMs(i + 1, () => 1));
    expect(longest).toEqual([25, 50, 100, 200, 400]);
    expect(longest.reduce((sum, ms) => sum + ms, 0)).toBe(775);
  });
});
