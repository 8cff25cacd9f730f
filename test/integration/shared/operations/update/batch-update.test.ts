/**
 * Batch update (docs/interface.md §21, docs/batch-update.md) over HTTP: `paramMap.id` a list or a comma-separated
 * text of 1 to 1000 ids; every record checked before any is written, a failure naming its id and writing nothing;
 * `{ids, total}` in the order sent; one revision and one change event per changed record; If-Match refused;
 * Idempotency-Key replayed; totals exact; a batch left midway by a writer that died is finished by the next write
 * that meets it, whole or not at all.
 */
import path from 'node:path';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expectFailure } from '../../../../support/failure-envelope';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const BATCH: AppCredentials = { appCode: 'app-batch', accessKey: 'ak-batch-0000001', secret: 'sk-batch-secret' };
const EU: AppCredentials = { appCode: 'app-eu', accessKey: 'ak-batch-eu-0001', secret: 'sk-batch-eu-secret' };
const SETTLE_MS = 300;
const harness = new ServiceHarness(path.join(__dirname, '../../../../fixtures/batch-update-config.json'), {
  changeSettleMs: SETTLE_MS,
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

async function createOrders(count: number, fields: Record<string, unknown> = {}): Promise<string[]> {
  const created = await harness.batchCreate(
    'orders',
    Array.from({ length: count }, (_, i) => ({ customer: `c${i}`, status: 'new', region: 'EU', ...fields })),
    { app: BATCH },
  );
  expect(created.status).toBe(200);
  return created.body.data as string[];
}

async function revisionOf(id: string): Promise<number> {
  return Number(JSON.parse((await harness.getOne('orders', id, { app: BATCH })).headers.get('etag') as string));
}

function batchUpdate(paramMap: Record<string, unknown>, app = BATCH, headers?: Record<string, string>) {
  return harness.update('orders', paramMap, { app, ...(headers ? { headers } : {}) });
}

async function eventsOf(ids: readonly string[]): Promise<Record<string, unknown>[]> {
  await harness.changesSettled();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 100));
  const wanted = new Set(ids);
  const events = new Map<string, Record<string, unknown>>();
  let after: string | undefined;
  for (;;) {
    const page = await harness.changes({ limit: 500, ...(after ? { after } : {}) }, { app: BATCH });
    for (const event of page.body.data.events) if (wanted.has(event.id)) events.set(event.eventId, event);
    if (!page.body.data.hasMore) return [...events.values()];
    after = page.body.data.cursor;
  }
}

describe('a batch update', () => {
  it('changes every listed record, answers the ids in the order sent, one revision and one event each', async () => {
    const ids = await createOrders(30);
    const sent = [...ids].reverse();
    const res = await batchUpdate({ id: sent, status: 'paid', note: 'batch' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ids: sent, total: 30 });
    expect(res.headers.get('etag')).toBeNull();
    for (const id of ids) {
      const read = await harness.getOne('orders', id, { app: BATCH });
      expect(read.body.data).toMatchObject({ status: 'paid', note: 'batch' });
      expect(read.headers.get('etag')).toBe('"2"');
    }
    const updates = (await eventsOf(ids)).filter((event) => event.type === 'record.updated');
    expect(updates.map((event) => event.id).sort()).toEqual([...ids].sort());
    for (const event of updates) {
      expect(event).toMatchObject({ revision: 2, changed: ['status', 'note'] });
      expect(event.actor).toEqual({ appCode: 'app-batch', userId: null });
    }
    const paid = await harness.getList('orders', { status: 'paid', id_in: ids }, { app: BATCH });
    expect(paid.body.data.paging.totalCount).toBe(30);
  });

  it('takes the ids as a comma-separated text too', async () => {
    const ids = await createOrders(3);
    const res = await batchUpdate({ id: `${ids[2]}, ${ids[0]},${ids[1]}`, amount: '12.5' });
    expect(res.body.data).toEqual({ ids: [ids[2], ids[0], ids[1]], total: 3 });
    for (const id of ids) expect((await harness.getOne('orders', id, { app: BATCH })).body.data.amount).toBe(12.5);
  });

  it('leaves a record the change would not change as it is: no revision, no event', async () => {
    const [a, b] = await createOrders(2);
    await batchUpdate({ id: [a], status: 'shipped' });
    const res = await batchUpdate({ id: [a, b], status: 'shipped' });
    expect(res.body.data).toEqual({ ids: [a, b], total: 2 });
    expect(await revisionOf(a as string)).toBe(2);
    expect(await revisionOf(b as string)).toBe(2);
    const updates = (await eventsOf([a as string])).filter((event) => event.type === 'record.updated');
    expect(updates.map((event) => event.revision)).toEqual([2]);
  });
});

describe('refused before anything is written', () => {
  it('refuses an empty list, more than 1000 ids, a duplicate, an id of the wrong form, and If-Match (1001)', async () => {
    const [a] = await createOrders(1);
    expectFailure(await batchUpdate({ id: [], status: 'paid' }), 1001, /empty list/);
    expectFailure(
      await batchUpdate({ id: Array.from({ length: 1001 }, (_, i) => `x${i}`), status: 'paid' }),
      1001,
      /lists 1001 ids; a batch update changes at most 1000/,
    );
    expectFailure(
      await batchUpdate({ id: [a, a], status: 'paid' }),
      1001,
      `paramMap.id lists '${a}' twice: list each id once`,
    );
    expectFailure(await batchUpdate({ id: [a, { x: 1 }], status: 'paid' }), 1001, /paramMap.id\[1\]/);
    const conditional = await batchUpdate({ id: [a], status: 'paid' }, BATCH, { 'If-Match': '"1"' });
    expectFailure(conditional, 1001, /cannot carry it/);
    expect(await revisionOf(a as string)).toBe(1);
  });

  it('answers 2002 naming an unknown id, and changes none of the others', async () => {
    const ids = await createOrders(3);
    const missing = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const res = await batchUpdate({ id: [ids[0], missing, ids[1]], status: 'paid' });
    expectFailure(res, 2002, `record '${missing}' not found in dataset 'orders'`);
    for (const id of ids) expect(await revisionOf(id)).toBe(1);
  });

  it('answers 2002 for a record outside the caller rows, 1006 for one the change would take out of them', async () => {
    const [eu] = await createOrders(1);
    const [us] = await createOrders(1, { region: 'US' });
    expectFailure(
      await batchUpdate({ id: [eu, us], note: 'x' }, EU),
      2002,
      `record '${us}' not found in dataset 'orders'`,
    );
    expectFailure(await batchUpdate({ id: [eu], region: 'US' }, EU), 1006, new RegExp(`^record '${eu}': `));
    expect(await revisionOf(eu as string)).toBe(1);
    expect(await revisionOf(us as string)).toBe(1);
  });

  it('refuses a field the grant cannot write (1006), a wrong type and an emptied required field (1001)', async () => {
    const [a] = await createOrders(1);
    expectFailure(await batchUpdate({ id: [a], amount: 3 }, EU), 1006);
    expectFailure(await batchUpdate({ id: [a], amount: 'many' }), 1001, /amount/);
    expectFailure(await batchUpdate({ id: [a], customer: null }), 1001, /required/);
    expect(await revisionOf(a as string)).toBe(1);
  });
});

describe('with an Idempotency-Key', () => {
  it('answers a replay with the first answer and changes nothing twice', async () => {
    const ids = await createOrders(2);
    const headers = { 'Idempotency-Key': `batch-${ids[0]}` };
    const first = await batchUpdate({ id: ids, status: 'paid' }, BATCH, headers);
    const again = await batchUpdate({ id: ids, status: 'paid' }, BATCH, headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    for (const id of ids) expect(await revisionOf(id)).toBe(2);
  });
});

describe('a batch its writer left midway', () => {
  const records = () => harness.dynamo();
  const metaKey = (batchId: string) => ({ '@pk': 'meta#ds#orders', '@sk': `batch-update#${batchId}` });

  async function leaveBatch(state: 'pending' | 'committed', ids: string[], createdAt: number): Promise<string> {
    const { client, tables } = records();
    const batchId = `01JBATCH${String(createdAt).padStart(18, '0')}`;
    await client.send(
      new PutCommand({
        TableName: tables.records,
        Item: {
          ...metaKey(batchId),
          state,
          ids: JSON.stringify(ids),
          set: JSON.stringify({ status: 'shipped' }),
          remove: '[]',
          origin: { a: 'app-batch', u: null, r: 'req-left', t: createdAt },
          createdAt,
        },
      }),
    );
    for (const id of ids) {
      await client.send(
        new UpdateCommand({
          TableName: tables.records,
          Key: { '@pk': 'ds#orders', '@sk': id },
          UpdateExpression: 'SET #lock = :b',
          ExpressionAttributeNames: { '#lock': '@lock' },
          ExpressionAttributeValues: { ':b': batchId },
        }),
      );
    }
    return batchId;
  }

  async function intentExists(batchId: string): Promise<boolean> {
    const { client, tables } = records();
    return (await client.send(new GetCommand({ TableName: tables.records, Key: metaKey(batchId) }))).Item !== undefined;
  }

  it('applies a committed batch whole when an update meets one of its records, then the update', async () => {
    const ids = await createOrders(4);
    const batchId = await leaveBatch('committed', ids, Date.now());
    const res = await harness.update('orders', { id: ids[1], note: 'after the batch' }, { app: BATCH });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'shipped', note: 'after the batch' });
    expect(res.headers.get('etag')).toBe('"3"');
    for (const id of ids) expect((await harness.getOne('orders', id, { app: BATCH })).body.data.status).toBe('shipped');
    expect(await intentExists(batchId)).toBe(false);
    const shipped = await harness.getList('orders', { status: 'shipped', id_in: ids }, { app: BATCH });
    expect(shipped.body.data.paging.totalCount).toBe(4);
  });

  it('applies a committed batch whole with no other write: the fold its commit point asked for finishes it', async () => {
    const ids = await createOrders(3);
    const batchId = await leaveBatch('committed', ids, Date.now());
    // Nothing else is written: the change log sees the intent committed and asks for a fold of the dataset 5 s on,
    // which finds the intent still there and applies the batch (docs/batch-update.md). Without that request the
    // next fold would be the one the creates asked for, 31 s after them.
    const until = Date.now() + 15_000;
    while ((await intentExists(batchId)) && Date.now() < until) await new Promise((r) => setTimeout(r, 250));
    expect(await intentExists(batchId)).toBe(false);
    for (const id of ids) {
      const res = await harness.getOne('orders', id, { app: BATCH });
      expect(res.body.data.status).toBe('shipped');
      expect(res.headers.get('etag')).toBe('"2"');
    }
    const shipped = await harness.getList('orders', { status: 'shipped', id_in: ids }, { app: BATCH });
    expect(shipped.body.data.paging.totalCount).toBe(3);
  }, 60_000);

  it('aborts a pending batch whose writer is gone: the records stay as they were, and take updates again', async () => {
    const ids = await createOrders(3);
    const batchId = await leaveBatch('pending', ids, Date.now() - 60_000);
    const res = await harness.update('orders', { id: ids[0], note: 'free again' }, { app: BATCH });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'new', note: 'free again' });
    for (const id of ids) expect((await harness.getOne('orders', id, { app: BATCH })).body.data.status).toBe('new');
    expect(await intentExists(batchId)).toBe(false);
  });

  it('answers 4001 with Retry-After to an update of a record a live batch holds, and writes nothing', async () => {
    const ids = await createOrders(2);
    const batchId = await leaveBatch('pending', ids, Date.now());
    const res = await harness.update('orders', { id: ids[0], note: 'blocked' }, { app: BATCH });
    expectFailure(res, 4001);
    expect(res.headers.get('retry-after')).toBe('1');
    const other = await batchUpdate({ id: [ids[1]], note: 'blocked too' });
    expectFailure(other, 4001, /another batch update/);
    expect(await revisionOf(ids[0] as string)).toBe(1);
    expect(await intentExists(batchId)).toBe(true);
  });
});
