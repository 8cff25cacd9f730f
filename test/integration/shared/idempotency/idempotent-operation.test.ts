/**
 * docs/interface.md §13 (and §12's retry) over HTTP: Idempotency-Key on create, batch create and update. Failures are
 * injected at the DynamoDB client of the record writes (the store stays the real embedded one), and the clock is
 * driven, to show that an interrupted batch or create is completed by a retry without writing anything twice, and
 * that what BatchWriteItem leaves unprocessed is written by the batch's own retries.
 */
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ProxyHandler } from '../../../../bin/local/lambda-http';
import { createClient } from '../../../../packages/client/src/index';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { createHandler } from '../../../../shared/composition/pipeline';
import { type RuntimePorts, runtimePorts } from '../../../../shared/composition/ports';
import type { Operation } from '../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../shared/operations/batch-create';
import { createOperation } from '../../../../shared/operations/create';
import { getListOperation } from '../../../../shared/operations/get-list-operation';
import { getOneOperation } from '../../../../shared/operations/get-one';
import { updateOperation } from '../../../../shared/operations/update';
import { environment } from '../../../../shared/runtime/environment';
import { idTime } from '../../../../shared/storage/id-blocks';
import { datasetMetaPartition, datasetPartitionKey } from '../../../../shared/storage/item-keys';
import { RecordBatchStore } from '../../../../shared/storage/record-batch-store';
import { RecordStore } from '../../../../shared/storage/record-store';
import { RecordAttr } from '../../../../shared/storage/table-definitions';
import { FIXTURES_DIR } from '../../../support/paths';
import { type AppCredentials, type CallOptions, ServiceHarness } from '../../../support/service-harness';

const LOADER: AppCredentials = { appCode: 'app-loader', accessKey: 'ak-loader-000001', secret: 'sk-loader-secret' };
const EU: AppCredentials = { appCode: 'app-eu', accessKey: 'ak-eu-0000000001', secret: 'sk-eu-secret' };

let clock = Date.now();

/**
 * Runs around every call of the record stores (PutItem, BatchWriteItem, reads too, and the change items a write
 * claims before its records); `send` performs it, with another input when one is given. `input` has plain values
 * (the document client marshals it later). What it resolves to is the call's result (`{ output }`).
 */
type Fault = (
  command: string,
  send: (input?: Record<string, unknown>) => Promise<{ output: Record<string, unknown> }>,
  input: Record<string, unknown>,
) => Promise<unknown>;
let fault: Fault | undefined;

const OPERATIONS: Record<string, Operation> = {
  'get-list': getListOperation,
  'get-one': getOneOperation,
  create: createOperation,
  'batch-create': batchCreateOperation,
  update: updateOperation,
};

let ports: RuntimePorts | undefined;
/** The container's real ports, with the record writes going through a client that can fail on purpose. */
function faultyPorts(): RuntimePorts {
  if (ports) return ports;
  const env = environment();
  const raw = new DynamoDBClient({
    endpoint: env.dynamodbEndpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  raw.middlewareStack.add(
    (next, context) => (args) => {
      const send = (input?: Record<string, unknown>) =>
        next(input ? { ...args, input } : args) as unknown as Promise<{ output: Record<string, unknown> }>;
      return (fault ? fault(context.commandName ?? '', send, args.input as Record<string, unknown>) : send()) as never;
    },
    { step: 'initialize', name: 'injectedFault' },
  );
  const client = createDocumentClient(raw);
  ports = {
    ...runtimePorts(),
    records: new RecordStore(client, env.recordsTable),
    recordBatches: new RecordBatchStore(client, env.recordsTable),
  };
  return ports;
}

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'batch-config.json'), {
  loadHandler: async (file): Promise<ProxyHandler | undefined> => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation, { now: () => clock, ports: faultyPorts }) : undefined;
  },
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());
afterEach(() => {
  fault = undefined;
});

let keys = 0;
/** A fresh key per test, so tests never see each other's requests. */
function newKey(): string {
  keys += 1;
  return `load-2026-11-23/${keys}`;
}

/** The loader application, signing with the driven clock. */
function loader(): CallOptions {
  return { app: LOADER, timeStamp: clock };
}

function withKey(key: string, options: CallOptions = {}): CallOptions {
  return { app: LOADER, timeStamp: clock, ...options, headers: { 'Idempotency-Key': key, ...options.headers } };
}

function orders(count: number, tag: string): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({ customer: `${tag}-${i}`, amount: i, status: 'new', region: 'EU' }));
}

async function total(): Promise<number> {
  const res = await harness.getList('orders', { pageSize: 1 }, loader());
  expect(res.status).toBe(200);
  return res.body.data.paging.totalCount;
}

/** Ids of the records whose customer starts with `tag-`, oldest first. */
async function idsTagged(tag: string): Promise<string[]> {
  const res = await harness.getList(
    'orders',
    { customer_start: `${tag}-`, customer_end: `${tag}-~`, pageSize: 100, select: ['customer'] },
    loader(),
  );
  expect(res.status).toBe(200);
  return res.body.data.tableData.map((r: { id: string }) => r.id).sort();
}

/** Whether a PutItem's item (plain values: the fault sees it before the document client marshals it) is a record. */
function isRecordOf(datasetCode: string, item: unknown): boolean {
  return (item as Record<string, unknown> | undefined)?.[RecordAttr.partitionKey] === datasetPartitionKey(datasetCode);
}

/** Fail every BatchWriteItem after the first `chunks` (before it is sent). */
function failBatchWritesAfter(chunks: number): void {
  let calls = 0;
  fault = (command, send) => {
    if (/BatchWrite/.test(command) && ++calls > chunks) return Promise.reject(new Error('connection reset'));
    return send();
  };
}

describe('replay', () => {
  it('answers a repeated create with the first answer, marked replayed, and writes one record', async () => {
    const key = newKey();
    const before = await total();
    const first = await harness.create('orders', { customer: 'once', amount: 1 }, withKey(key));
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await harness.create('orders', { amount: 1, customer: 'once' }, withKey(key));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await total()).toBe(before + 1);
  });

  it('answers a repeated batch create with the same ids', async () => {
    const key = newKey();
    const before = await total();
    const first = await harness.batchCreate('orders', orders(30, 'replayed-batch'), withKey(key));
    expect(first.status).toBe(200);
    const again = await harness.batchCreate('orders', orders(30, 'replayed-batch'), withKey(key));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    expect(await total()).toBe(before + 30);
  });

  it('answers a repeated update with the first answer, though the record changed since', async () => {
    const created = (await harness.create('orders', { customer: 'u', status: 'new' }, loader())).body.data;
    const key = newKey();
    const first = await harness.update('orders', { id: created.id, status: 'paid' }, withKey(key));
    expect(first.body.data.status).toBe('paid');
    await harness.update('orders', { id: created.id, status: 'shipped' }, loader());
    const again = await harness.update('orders', { id: created.id, status: 'paid' }, withKey(key));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await harness.getOne('orders', created.id, loader())).body.data.status).toBe('shipped');
  });

  it('forgets a key after 24 hours: the same request then runs again', async () => {
    const key = newKey();
    const first = await harness.create('orders', { customer: 'daily' }, withKey(key));
    clock += 24 * 60 * 60 * 1000 + 1000;
    const later = await harness.create('orders', { customer: 'daily' }, withKey(key));
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.data.id).not.toBe(first.body.data.id);
  });

  it('scopes keys to the application', async () => {
    const key = newKey();
    const mine = await harness.create('orders', { customer: 'k', region: 'EU' }, withKey(key));
    const theirs = await harness.create('orders', { customer: 'k', region: 'EU' }, withKey(key, { app: EU }));
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it('behaves as before without the header: two creates, two records', async () => {
    const before = await total();
    await harness.create('orders', { customer: 'twice' }, loader());
    await harness.create('orders', { customer: 'twice' }, loader());
    expect(await total()).toBe(before + 2);
  });
});

describe('refusals', () => {
  it('refuses the same key with another body, operation or dataset with 1001', async () => {
    const key = newKey();
    await harness.create('orders', { customer: 'first' }, withKey(key));
    const otherBody = await harness.create('orders', { customer: 'second' }, withKey(key));
    expect(otherBody.status).toBe(400);
    expect(otherBody.body.errorMsg).toBe(
      `Idempotency-Key '${key}' was used for a different request (another operation, dataset or body); send a new key for a new request`,
    );
    const otherOperation = await harness.batchCreate('orders', [{ customer: 'first' }], withKey(key));
    expect(otherOperation.body.errorCode).toBe(1001);
  });

  it('does not remember a refused request: a retry with the same key runs afresh', async () => {
    const key = newKey();
    const refused = await harness.batchCreate('orders', [{ customer: 'ok' }, { amount: 'x' }], withKey(key));
    expect(refused.body.errorMsg).toBe("paramList[1]: field 'amount' expects a number");
    const fixed = await harness.batchCreate('orders', [{ customer: 'ok' }, { customer: 'fixed' }], withKey(key));
    expect(fixed.status).toBe(200);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(fixed.body.data).toHaveLength(2);
  });

  it('does not remember a 2002 either', async () => {
    const key = newKey();
    const missing = await harness.update('orders', { id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8', status: 'paid' }, withKey(key));
    expect(missing.body.errorCode).toBe(2002);
    const created = (await harness.create('orders', { customer: 'later' }, loader())).body.data;
    const update = await harness.update('orders', { id: created.id, status: 'paid' }, withKey(key));
    expect(update.status).toBe(200);
    expect(update.body.data.status).toBe('paid');
  });

  it.each([
    ['', 'empty'],
    ['k'.repeat(256), 'too long'],
    ['naïve', 'not ASCII'],
  ])('refuses the key %j (%s) with 1001', async (key) => {
    const res = await harness.create('orders', { customer: 'c' }, withKey(key));
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe('Idempotency-Key must be 1 to 255 printable ASCII characters');
  });
});

describe('while the first request runs', () => {
  it('answers 4001 with Retry-After: 1, then the first answer once it is done', async () => {
    const key = newKey();
    let reached!: () => void;
    const holding = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    fault = async (command, send) => {
      if (/BatchWrite/.test(command)) {
        reached();
        await released;
      }
      return send();
    };
    const first = harness.batchCreate('orders', orders(3, 'slow'), withKey(key));
    await holding;
    const meanwhile = await harness.batchCreate('orders', orders(3, 'slow'), withKey(key));
    expect(meanwhile.status).toBe(429);
    expect(meanwhile.headers.get('retry-after')).toBe('1');
    expect(meanwhile.body.errorMsg).toBe(
      `a request with Idempotency-Key '${key}' is still running; retry in a second to get its answer`,
    );
    release();
    const done = await first;
    expect(done.status).toBe(200);
    const after = await harness.batchCreate('orders', orders(3, 'slow'), withKey(key));
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(after.body.data).toEqual(done.body.data);
  });
});

describe('no duplicates after a failure', () => {
  it('completes a batch interrupted after two chunks, keeping the ids already written', async () => {
    const key = newKey();
    const before = await total();
    failBatchWritesAfter(2);
    const failed = await harness.batchCreate('orders', orders(100, 'crash'), withKey(key));
    expect(failed.status).toBe(500);
    expect(failed.body.errorCode).toBe(3001);
    const written = await idsTagged('crash');
    expect(written).toHaveLength(50);
    expect(await total()).toBe(before + 50);

    fault = undefined;
    const retry = await harness.batchCreate('orders', orders(100, 'crash'), withKey(key));
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const ids: string[] = retry.body.data;
    expect(ids).toHaveLength(100);
    expect(ids.slice(0, 50)).toEqual(written);
    expect(await idsTagged('crash')).toEqual(ids);
    expect(await total()).toBe(before + 100);
    const last = (await harness.getOne('orders', ids[99], loader())).body.data;
    expect(last).toMatchObject({ id: ids[99], customer: 'crash-99', amount: 99 });

    const replay = await harness.batchCreate('orders', orders(100, 'crash'), withKey(key));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data).toEqual(ids);
  });

  it('completes a create whose record was written but whose answer was lost', async () => {
    const key = newKey();
    const before = await total();
    // The record's own write (in the dataset's record partition, not its change item's claim before it) is done,
    // and its answer is lost on the way back.
    let recordWrites = 0;
    fault = async (command, send, input) => {
      const result = await send();
      if (/^Put/.test(command) && isRecordOf('orders', input.Item)) {
        recordWrites += 1;
        throw new Error('socket hang up');
      }
      return result;
    };
    const failed = await harness.create('orders', { customer: 'lost-answer-0' }, withKey(key));
    expect(failed.body.errorCode).toBe(3001);
    expect(recordWrites).toBe(1);
    const written = await idsTagged('lost-answer');
    expect(written).toHaveLength(1);

    fault = undefined;
    const retry = await harness.create('orders', { customer: 'lost-answer-0' }, withKey(key));
    expect(retry.status).toBe(200);
    expect(retry.body.data).toMatchObject({ id: written[0], customer: 'lost-answer-0' });
    expect(await idsTagged('lost-answer')).toEqual([written[0]]);
    expect(await total()).toBe(before + 1);
  });

  it('lets a retry complete a request whose function stopped, once its lease has run out', async () => {
    const key = newKey();
    let reached!: () => void;
    const holding = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let crash!: () => void;
    const crashed = new Promise<void>((resolve) => {
      crash = resolve;
    });
    let stalled = true;
    fault = async (command, send) => {
      if (/BatchWrite/.test(command) && stalled) {
        stalled = false;
        reached();
        await crashed;
        throw new Error('function stopped');
      }
      return send();
    };
    const before = await total();
    const first = harness.batchCreate('orders', orders(10, 'stalled'), withKey(key));
    await holding;
    expect((await harness.batchCreate('orders', orders(10, 'stalled'), withKey(key))).status).toBe(429);

    // The lease covers the function's timeout (28 s locally) and a margin for clock skew.
    clock += 40_000;
    const retry = await harness.batchCreate('orders', orders(10, 'stalled'), withKey(key));
    expect(retry.status).toBe(200);
    expect(await idsTagged('stalled')).toEqual(retry.body.data);

    crash();
    expect((await first).body.errorCode).toBe(3001);
    const replay = await harness.batchCreate('orders', orders(10, 'stalled'), withKey(key));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data).toEqual(retry.body.data);
    expect(await total()).toBe(before + 10);
  });

  it('writes what is missing with new ids once the first ids are past the settle window', async () => {
    const key = newKey();
    const before = await total();
    failBatchWritesAfter(1);
    const failed = await harness.batchCreate('orders', orders(60, 'late'), withKey(key));
    expect(failed.body.errorCode).toBe(3001);
    const written = await idsTagged('late');
    expect(written).toHaveLength(25);

    fault = undefined;
    clock += 17 * 60 * 1000;
    const retry = await harness.batchCreate('orders', orders(60, 'late'), withKey(key));
    expect(retry.status).toBe(200);
    const ids: string[] = retry.body.data;
    expect(ids.slice(0, 25)).toEqual(written);
    // The records written now carry ids (and gmt_create) of now, so the record count's argument still holds.
    for (const id of ids.slice(25)) expect(idTime(id)).toBe(clock);
    expect(await idsTagged('late')).toEqual(ids);
    expect(await total()).toBe(before + 60);
  });

  it('lets the TypeScript client retry a keyed batch after a 3001 and get every id once', async () => {
    const before = await total();
    let calls = 0;
    fault = (command, send) => {
      if (/BatchWrite/.test(command) && ++calls === 3) return Promise.reject(new Error('connection reset'));
      return send();
    };
    const client = createClient({
      baseUrl: harness.url,
      appCode: LOADER.appCode,
      accessKey: LOADER.accessKey,
      signingSecret: LOADER.secret,
      now: () => clock,
      retry: { baseDelayMs: 10 },
    });
    const ids = await client.batchCreate('orders', orders(120, 'client'), { idempotencyKey: newKey() });
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);
    const tagged = await harness.getList(
      'orders',
      { customer_start: 'client-', customer_end: 'client-~', pageSize: 1 },
      loader(),
    );
    expect(tagged.body.data.paging.totalCount).toBe(120);
    expect(await total()).toBe(before + 120);
  });

  it('retries what BatchWriteItem leaves unprocessed until every record is written', async () => {
    const before = await total();
    let calls = 0;
    let throttled = 0;
    // The change items the batch claims before its records (without their position), with their write units.
    const changeItems: [string, unknown][] = [];
    fault = async (command, send, input) => {
      if (!/BatchWrite/.test(command)) {
        const result = await send();
        const item = input.Item as Record<string, unknown> | undefined;
        if (/^Put/.test(command) && item?.[RecordAttr.partitionKey] === datasetMetaPartition('orders')) {
          const consumed = result.output.ConsumedCapacity as { CapacityUnits?: number } | undefined;
          changeItems.push([String(item[RecordAttr.sortKey]).replace(/#[0-9A-Z]{26}$/, ''), consumed?.CapacityUnits]);
        }
        return result;
      }
      calls += 1;
      const requests = input.RequestItems as Record<string, unknown[]>;
      const [table, items] = Object.entries(requests)[0] as [string, unknown[]];
      // The first two calls: DynamoDB takes 10 of the chunk and hands the rest back, as under throttling.
      if (calls > 2 || items.length <= 10) return send();
      throttled += items.length - 10;
      const result = await send({ ...input, RequestItems: { [table]: items.slice(0, 10) } });
      return { ...result, output: { ...result.output, UnprocessedItems: { [table]: items.slice(10) } } };
    };
    const res = await harness.batchCreate('orders', orders(60, 'throttled'), loader());
    expect(res.status).toBe(200);
    expect(throttled).toBe(30);
    // 3 chunks, and one more call for each chunk that came back partly unprocessed.
    expect(calls).toBe(5);
    expect(await total()).toBe(before + 60);
    // One item naming the 60 ids (one run of consecutive ids), one per indexed field with the records' values:
    // 60 distinct customers and amounts take more than 1 KB each, the one status fits in one unit.
    expect(changeItems.sort(([a], [b]) => (a < b ? -1 : 1))).toEqual([
      ['change', 1],
      ['change-slot#@ix1.b1:customer', 2],
      ['change-slot#@ix2.b2:amount', 2],
      ['change-slot#@ix3.b3:status', 1],
    ]);
    const line = harness.logLines.find((l) => l.requestId === res.headers.get('x-request-id'));
    // The 60 records once each (what came back unprocessed is counted when it is written), the record count's bulk
    // group begun and marked done (2), the change items above (1 + 2 + 2 + 1), and the quota's admission: one
    // write, or none when the request's environment held a token and a live slot.
    expect([0, 1].map((quota) => 60 + 2 + (1 + 2 + 2 + 1) + quota)).toContain(line?.writeUnits);
  });

  it('answers 3001 in words when the store keeps leaving records unprocessed; the key completes the batch', async () => {
    const before = await total();
    let calls = 0;
    // A full chunk of 25: the store takes 10 and hands 15 back, and then takes nothing more, however often asked.
    fault = async (command, send, input) => {
      if (!/BatchWrite/.test(command)) return send();
      calls += 1;
      const [table, items] = Object.entries(input.RequestItems as Record<string, unknown[]>)[0] as [string, unknown[]];
      if (items.length === 25) {
        const result = await send({ ...input, RequestItems: { [table]: items.slice(0, 10) } });
        return { ...result, output: { ...result.output, UnprocessedItems: { [table]: items.slice(10) } } };
      }
      if (items.length === 15) return { output: { UnprocessedItems: { [table]: items }, ConsumedCapacity: [] } };
      return send();
    };
    const key = newKey();
    const first = await harness.batchCreate('orders', orders(60, 'busy'), withKey(key));
    expect(first.status).toBe(500);
    expect(first.body.errorCode).toBe(3001);
    expect(first.body.errorMsg).toBe(
      'the data store is busy and took only part of the batch; send it again with the same Idempotency-Key to ' +
        `complete it without creating any record twice; quote request id ${first.headers.get('x-request-id')} ` +
        'if it persists',
    );
    // Chunks of 25, 25 and 10: each full one called six times (then given up), the last one once.
    expect(calls).toBe(6 + 6 + 1);
    // What was written is counted at once: 10 of each full chunk and the last 10.
    expect(await idsTagged('busy')).toHaveLength(30);
    expect(await total()).toBe(before + 30);

    fault = undefined;
    const retried = await harness.batchCreate('orders', orders(60, 'busy'), withKey(key));
    expect(retried.status).toBe(200);
    const ids = retried.body.data as string[];
    expect(new Set(ids).size).toBe(60);
    expect(await idsTagged('busy')).toEqual([...ids].sort());
    expect(await total()).toBe(before + 60);
  });
});
