/**
 * docs/interface.md §12 over HTTP: batch create writes 1 to 1000 records, each as create would, answers their ids in
 * order, checks every record before writing any, and counts as one request.
 */
import path from 'node:path';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { itemSize } from '../../../../shared/records/record-codec';
import { datasetMetaPartition, recordKey } from '../../../../shared/storage/item-keys';
import { RecordAttr } from '../../../../shared/storage/table-definitions';
import { FIXTURES_DIR } from '../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'batch-config.json'));
const LOADER: AppCredentials = { appCode: 'app-loader', accessKey: 'ak-loader-000001', secret: 'sk-loader-secret' };
const EU: AppCredentials = { appCode: 'app-eu', accessKey: 'ak-eu-0000000001', secret: 'sk-eu-secret' };
const READER: AppCredentials = { appCode: 'app-reader', accessKey: 'ak-reader-000001', secret: 'sk-reader-secret' };

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

beforeAll(() => harness.start());
afterAll(() => harness.stop());

function batch(paramList: unknown, options: { app?: AppCredentials } = {}) {
  return harness.batchCreate('orders', paramList, { app: LOADER, ...options });
}

async function total(app: AppCredentials = LOADER): Promise<number> {
  const res = await harness.getList('orders', { pageSize: 1 }, { app });
  expect(res.status).toBe(200);
  return res.body.data.paging.totalCount;
}

/** The change items a batch claimed (found by the position its first record stores), as stored. */
async function changeItemsOf(id: string): Promise<Record<string, unknown>[]> {
  const { client, tables } = harness.dynamo();
  const record = await client.send(
    new GetCommand({ TableName: tables.records, Key: recordKey('orders', id), ConsistentRead: true }),
  );
  const position = record.Item?.[RecordAttr.changePosition] as string;
  const items = await client.send(
    new QueryCommand({
      TableName: tables.records,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :change)',
      ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
      ExpressionAttributeValues: { ':pk': datasetMetaPartition('orders'), ':change': 'change' },
      ConsistentRead: true,
    }),
  );
  return (items.Items ?? []).filter((item) => String(item[RecordAttr.sortKey]).endsWith(position));
}

function orders(count: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    customer: `c-${from + i}`,
    amount: from + i,
    status: 'new',
    region: 'EU',
  }));
}

describe('batch create', () => {
  it('writes every record as create would and answers their ids in paramList order', async () => {
    const before = await total();
    const res = await batch([
      { customer: 'alice', amount: '12.5', status: 'new', region: 'EU', id: 'ignored', gmt_create: 'ignored' },
      { customer: 'bob', status: 'paid' },
      { customer: 'carol', amount: 3, note: null },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const ids: string[] = res.body.data;
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(id).toMatch(ULID);
    expect(new Set(ids).size).toBe(3);
    // Ids are in creation order, and the batch's records were created in paramList order.
    expect([...ids].sort()).toEqual(ids);

    const first = (await harness.getOne('orders', ids[0], { app: LOADER })).body.data;
    expect(first).toEqual({
      id: ids[0],
      customer: 'alice',
      amount: 12.5,
      status: 'new',
      region: 'EU',
      note: null,
      gmt_create: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      gmt_modified: first.gmt_create,
    });
    const second = (await harness.getOne('orders', ids[1], { app: LOADER })).body.data;
    expect(second).toMatchObject({ id: ids[1], customer: 'bob', amount: null, status: 'paid' });
    expect(second.gmt_create).toBe(first.gmt_create);

    // The total counts them at once; the indexes serve them at once.
    expect(await total()).toBe(before + 3);
    const paid = await harness.getList('orders', { status: 'paid', customer: 'bob' }, { app: LOADER });
    expect(paid.body.data.tableData.map((r: { id: string }) => r.id)).toEqual([ids[1]]);
  });

  it('writes 1000 records of about 200 bytes in one request, counted as one request', async () => {
    const before = await total();
    const paramList = Array.from({ length: 1000 }, (_, i) => ({
      customer: `bulk-${i}`,
      amount: i,
      status: 'new',
      region: 'EU',
      note: 'x'.repeat(120),
    }));
    const first = await batch(paramList.slice(0, 1));
    const res = await batch(paramList.slice(1));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(999);
    expect(new Set(res.body.data).size).toBe(999);
    // One request against the limits, however many records it carries.
    expect(Number(res.headers.get('ratelimit-remaining'))).toBe(Number(first.headers.get('ratelimit-remaining')) - 1);
    expect(await total()).toBe(before + 1000);

    const line = harness.logLines.find((l) => l.requestId === res.headers.get('x-request-id'));
    expect(line).toMatchObject({ operation: 'batch-create', appCode: 'app-loader', datasetCode: 'orders' });
    // Each record's own write unit (the embedded store leaves index writes out); per batch, its change item (the
    // item naming the records, one per index build with their values: a unit per KB each), the record count's
    // bulk group (begun, then done) and the quota's admission (one write, or none when the environment held a token
    // and a live slot).
    const changeItems = await changeItemsOf(res.body.data[0]);
    expect(changeItems.map((item) => item[RecordAttr.sortKey])).toEqual([
      expect.stringMatching(/^change#/),
      expect.stringMatching(/^change-slot#@ix1\.b1:customer#/),
      expect.stringMatching(/^change-slot#@ix2\.b2:amount#/),
      expect.stringMatching(/^change-slot#@ix3\.b3:status#/),
    ]);
    const changeUnits = changeItems.reduce((sum, item) => sum + Math.ceil(itemSize(item) / 1024), 0);
    expect(changeUnits).toBeLessThan(40);
    // Plus the quota's admission, and a lease renewal for each 1.9 s the request runs (one or two on a busy machine).
    expect([999 + changeUnits + 2, 999 + changeUnits + 2 + 1, 999 + changeUnits + 2 + 2]).toContain(line?.writeUnits);

    const last = await harness.getList(
      'orders',
      { customer: 'bulk-999', pageSize: 5, select: ['customer', 'amount'] },
      { app: LOADER },
    );
    expect(last.body.data.tableData).toEqual([{ id: res.body.data[998], customer: 'bulk-999', amount: 999 }]);
  });
});

describe('validation first', () => {
  it('answers the first bad record with its position, and writes nothing', async () => {
    const before = await total();
    const paramList = orders(6);
    (paramList[3] as Record<string, unknown>).amount = 'lots';
    const res = await batch(paramList);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      msg: null,
      data: null,
      errorCode: 1001,
      errorMsg: "paramList[3]: field 'amount' expects a number",
    });
    expect(await total()).toBe(before);
  });

  it.each([
    [{ status: 'new' }, "paramList[1]: required field 'customer' missing"],
    [{ customer: 'c', colour: 'red' }, "paramList[1]: field 'colour' is not defined in dataset 'orders'"],
    [{ customer: 'c', status: 'lost' }, "paramList[1]: field 'status' expects one of: new, paid, shipped"],
    ['text', 'paramList[1]: a record must be a JSON object'],
    [[{ customer: 'c' }], 'paramList[1]: a record must be a JSON object'],
  ])('refuses %j at position 1 with 1001', async (bad, message) => {
    const before = await total();
    const res = await batch([{ customer: 'ok' }, bad, { customer: 'ok too' }]);
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe(1001);
    expect(res.body.errorMsg).toBe(message);
    expect(await total()).toBe(before);
  });

  it('refuses a record that touches a field outside writeFields with 1006 and its position', async () => {
    const before = await total();
    const res = await harness.batchCreate(
      'orders',
      [
        { customer: 'a', region: 'EU' },
        { customer: 'b', region: 'EU' },
        { customer: 'c', region: 'EU', amount: 5 },
      ],
      { app: EU },
    );
    expect(res.status).toBe(403);
    expect(res.body.errorCode).toBe(1006);
    expect(res.body.errorMsg).toBe(
      "paramList[2]: application 'app-eu' may not write field 'amount' of dataset 'orders'",
    );
    expect(await total()).toBe(before);
  });

  it('refuses a record outside the row filter with 1006 and its position', async () => {
    const before = await total();
    const res = await harness.batchCreate(
      'orders',
      [
        { customer: 'a', region: 'EU' },
        { customer: 'b', region: 'US' },
      ],
      { app: EU },
    );
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe(
      "paramList[1]: the record would be outside the rows application 'app-eu' may write in dataset 'orders'",
    );
    expect(await total()).toBe(before);
  });

  it('lets a limited grant create inside its scope', async () => {
    const res = await harness.batchCreate(
      'orders',
      [
        { customer: 'eu-1', region: 'EU', status: 'new' },
        { customer: 'eu-2', region: 'EU' },
      ],
      { app: EU },
    );
    expect(res.status).toBe(200);
    const record = (await harness.getOne('orders', res.body.data[1], { app: EU })).body.data;
    expect(record).toEqual({
      id: res.body.data[1],
      customer: 'eu-2',
      amount: null,
      status: null,
      region: 'EU',
      gmt_create: expect.any(String),
      gmt_modified: expect.any(String),
    });
  });

  it('needs the grant’s create operation (1006)', async () => {
    const res = await batch(orders(1), { app: READER });
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe("application 'app-reader' may not create records of dataset 'orders'");
  });

  it.each([
    [[], 'paramList is empty: send 1 to 1000 records'],
    [orders(1001), 'paramList has 1001 records; at most 1000 per request: split the batch'],
    [{ customer: 'c' }, 'paramList must be an array of 1 to 1000 records'],
    ['c', 'paramList must be an array of 1 to 1000 records'],
    [null, 'paramList is required: an array of 1 to 1000 records'],
  ])('refuses paramList %# with 1001', async (paramList, message) => {
    const res = await batch(paramList);
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe(message);
  });

  it('refuses a record too large for the store with 1001 and its position', async () => {
    const before = await total();
    const res = await batch([{ customer: 'small' }, { customer: 'big', note: 'x'.repeat(500 * 1024) }]);
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe(
      'paramList[1]: the record is too large: a stored record is at most 400 KB; store large content elsewhere or split it',
    );
    expect(await total()).toBe(before);
  });

  it('refuses a body over 1 MB with 1001', async () => {
    const res = await batch([{ customer: 'c', note: 'x'.repeat(1024 * 1024) }]);
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe('request body is larger than 1 MB (1048576 bytes)');
  });
});
