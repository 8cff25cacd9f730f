/**
 * Contract §6 over HTTP: two applications share one dataset, one unrestricted, one with readFields,
 * writeFields and a rowFilter; the owner has no grant and so no access.
 */
import path from 'node:path';
import { type AppCredentials, ServiceHarness } from '../support/service-harness';

const harness = new ServiceHarness(path.join(__dirname, '..', 'fixtures', 'permissions-config.json'));
const FULL: AppCredentials = { appCode: 'app-full', accessKey: 'ak-full-00000001', secret: 'sk-full-secret' };
const LIMITED: AppCredentials = { appCode: 'app-limited', accessKey: 'ak-limited-000001', secret: 'sk-limited-secret' };
const OWNER: AppCredentials = { appCode: 'app-owner', accessKey: 'ak-owner-00000001', secret: 'sk-owner-secret' };
const READER: AppCredentials = { appCode: 'app-reader', accessKey: 'ak-reader-000001', secret: 'sk-reader-secret' };

const VISIBLE_TO_LIMITED = ['id', 'customer', 'status', 'region', 'gmt_create', 'gmt_modified'];

let euOrder: Record<string, unknown>;
let usOrder: Record<string, unknown>;

beforeAll(async () => {
  await harness.start();
  euOrder = (
    await harness.create(
      'orders',
      { customer: 'c-eu', amount: 100, status: 'new', region: 'EU', margin: 0.4 },
      { app: FULL },
    )
  ).body.data;
  usOrder = (
    await harness.create(
      'orders',
      { customer: 'c-us', amount: 200, status: 'new', region: 'US', margin: 0.3 },
      { app: FULL },
    )
  ).body.data;
});
afterAll(() => harness.stop());

describe('grants', () => {
  it.each([
    ['get-list', '/openapi/data/get-list', {}],
    ['get-one', '/openapi/data/get-one', { id: 'x' }],
    ['create', '/openapi/data/create', { customer: 'c' }],
    ['update', '/openapi/data/update', { id: 'x', status: 'paid' }],
  ])('the owner without a grant gets 1006 on %s', async (_op, route, paramMap) => {
    const res = await harness.call(route, { datasetCode: 'orders', paramMap }, { app: OWNER });
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe("application 'app-owner' has no access to dataset 'orders'");
  });

  it.each([
    ['get-list', '/openapi/data/get-list', {}],
    ['get-one', '/openapi/data/get-one', { id: 'x' }],
    ['create', '/openapi/data/create', { customer: 'c' }],
    ['update', '/openapi/data/update', { id: 'x', status: 'paid' }],
  ])('an unknown dataset is 1005 on %s', async (_op, route, paramMap) => {
    const res = await harness.call(route, { datasetCode: 'invoices', paramMap }, { app: FULL });
    expect(res.status).toBe(404);
    expect(res.body.errorCode).toBe(1005);
  });

  it.each([
    ['create', '/openapi/data/create', { customer: 'c' }, 'create'],
    ['update', '/openapi/data/update', { id: 'x', status: 'paid' }, 'update'],
  ])('a read-only grant refuses %s with 1006', async (_op, route, paramMap, verb) => {
    const res = await harness.call(route, { datasetCode: 'orders', paramMap }, { app: READER });
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe(`application 'app-reader' may not ${verb} records of dataset 'orders'`);
  });
});

describe('readFields', () => {
  it('hides other fields from get-one', async () => {
    const res = await harness.getOne('orders', euOrder.id, { app: LIMITED });
    expect(res.body.data).toEqual({
      id: euOrder.id,
      customer: 'c-eu',
      status: 'new',
      region: 'EU',
      gmt_create: euOrder.gmt_create,
      gmt_modified: euOrder.gmt_modified,
    });
  });

  it('shows everything to the unrestricted application', async () => {
    const res = await harness.getOne('orders', euOrder.id, { app: FULL });
    expect(res.body.data).toEqual(euOrder);
    expect(res.body.data.margin).toBe(0.4);
  });

  it('hides other fields from the record create answers with', async () => {
    const res = await harness.create('orders', { customer: 'c-new', region: 'EU', status: 'new' }, { app: LIMITED });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data)).toEqual(VISIBLE_TO_LIMITED);
  });

  it('hides other fields from the record update answers with', async () => {
    const created = await harness.create('orders', { customer: 'c-upd', region: 'EU', amount: 5 }, { app: FULL });
    const res = await harness.update('orders', { id: created.body.data.id, status: 'paid' }, { app: LIMITED });
    expect(res.body.data).toEqual({
      id: created.body.data.id,
      customer: 'c-upd',
      status: 'paid',
      region: 'EU',
      gmt_create: created.body.data.gmt_create,
      gmt_modified: expect.any(String),
    });
  });
});

describe('writeFields', () => {
  it('refuses a create touching another field with 1006 and writes nothing', async () => {
    const before = (await harness.getList('orders', {}, { app: FULL })).body.data.paging.totalCount;
    const res = await harness.create('orders', { customer: 'c-x', region: 'EU', margin: 0.9 }, { app: LIMITED });
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe("application 'app-limited' may not write field 'margin' of dataset 'orders'");
    expect((await harness.getList('orders', {}, { app: FULL })).body.data.paging.totalCount).toBe(before);
  });

  it('refuses an update touching other fields with 1006, naming them, and changes nothing', async () => {
    const res = await harness.update(
      'orders',
      { id: euOrder.id, status: 'paid', amount: 1, margin: null },
      { app: LIMITED },
    );
    expect(res.status).toBe(403);
    expect(res.body.errorMsg).toBe(
      "application 'app-limited' may not write fields 'amount', 'margin' of dataset 'orders'",
    );
    expect((await harness.getOne('orders', euOrder.id, { app: FULL })).body.data).toEqual(euOrder);
  });

  it('ignores system fields, which are never written by callers', async () => {
    const res = await harness.update('orders', { id: euOrder.id, gmt_create: 'x', status: 'new' }, { app: LIMITED });
    expect(res.status).toBe(200);
  });
});

describe('the unrestricted application', () => {
  it('reads rows outside the limited application scope', async () => {
    const res = await harness.getOne('orders', usOrder.id, { app: FULL });
    expect(res.body.data.region).toBe('US');
  });
});
