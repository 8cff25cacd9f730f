/**
 * The TypeScript client against the real local server: every data operation, browser-token mode, and each
 * error family the server can be made to answer (1001 to 1006, 2002) as its typed error.
 */
import {
  AccessDeniedError,
  AuthenticationError,
  createClient,
  type DataAccessClient,
  InvalidParameterError,
  NotFoundError,
  PreconditionFailedError,
  type TokenRequest,
} from '../../../../../../packages/client/src';
import { mintBrowserToken } from '../../../../../../packages/client/src/browser-token';
import { MAIN_APP, ServiceHarness } from '../../../../../support/service-harness';

const harness = new ServiceHarness();
let client: DataAccessClient;

beforeAll(async () => {
  await harness.start();
  client = createClient({
    baseUrl: `${harness.url}/`,
    appCode: MAIN_APP.appCode,
    accessKey: MAIN_APP.accessKey,
    signingSecret: MAIN_APP.secret,
  });
});
afterAll(() => harness.stop());

interface Typed {
  s: string;
  i: number | null;
  e: string | null;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('data operations', () => {
  it('create, getOne, update and getList answer the records', async () => {
    const created = await client.create<Typed>('typed', { s: 'from the client', i: 7 });
    expect(created).toMatchObject({ s: 'from the client', i: 7, e: null });
    expect(created.id).toMatch(ULID);
    expect(created.gmt_create).toMatch(TIMESTAMP);

    expect(await client.getOne<Typed>('typed', created.id)).toEqual(created);

    const updated = await client.update<Typed>('typed', created.id, { e: 'green' });
    expect(updated).toMatchObject({ id: created.id, s: 'from the client', i: 7, e: 'green' });

    const list = await client.getList<Typed>('typed', { pageSize: 1 });
    expect(list.paging).toEqual({ pageSize: 1, totalCount: expect.any(Number), currentPage: 1 });
    expect(list.paging.totalCount).toBeGreaterThanOrEqual(1);
    expect(list.tableData).toEqual([updated]);
    expect(list.tableColumns[0]).toEqual({ title: 'id', dataIndex: 'id' });
  });

  it('getOneWithRevision answers the revision, and update with ifMatch applies only at that revision', async () => {
    const created = await client.create<Typed>('typed', { s: 'revised', i: 1 });
    const first = await client.getOneWithRevision<Typed>('typed', created.id);
    expect(first).toEqual({ record: created, revision: 1 });
    const updated = await client.update<Typed>('typed', created.id, { i: 2 }, { ifMatch: first.revision });
    expect(updated.i).toBe(2);
    const stale = client.update<Typed>('typed', created.id, { i: 3 }, { ifMatch: first.revision });
    await expect(stale).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(stale).rejects.toMatchObject({ errorCode: 1001, httpStatus: 412 });
    await expect(stale).rejects.toBeInstanceOf(InvalidParameterError);
    expect(await client.getOneWithRevision<Typed>('typed', created.id)).toEqual({ record: updated, revision: 2 });
  });

  it('getList takes orderBy and page, and aggregate measures groups, as the platform SDK sends them', async () => {
    for (const [i, e] of [
      [3, 'red'],
      [1, 'blue'],
      [5, 'red'],
      [2, null],
    ] as const) {
      await client.create<Typed>('typed', { s: 'sdk-shapes', i, e });
    }
    const sorted = await client.getList<Typed>('typed', {
      s: 'sdk-shapes',
      orderBy: [{ e: 'DESC' }, { i: 'asc' }],
      page: 1,
      pageSize: 3,
    });
    expect(sorted.tableData.map((row) => [row.e, row.i])).toEqual([
      ['red', 3],
      ['red', 5],
      ['blue', 1],
    ]);
    const groups = await client.aggregate('typed', {
      aggregate: [
        { type: 'SUM', column: 'i', alias: 'total' },
        { type: 'count', alias: 'records' },
      ],
      groupBy: ['e'],
      where: { s: 'sdk-shapes', i: { $gteq: 2 } },
      orderBy: [{ total: 'desc' }],
    });
    expect(groups).toEqual({
      tableData: [
        { e: 'red', total: 8, records: 2 },
        { e: null, total: 2, records: 1 },
      ],
      paging: { currentPage: 1, pageSize: 20, totalCount: 2 },
      tableColumns: [
        { title: 'e', dataIndex: 'e' },
        { title: 'total', dataIndex: 'total' },
        { title: 'records', dataIndex: 'records' },
      ],
    });
    const refused = await client.aggregate('typed', { aggregate: [{ type: 'MEDIAN', column: 'i' }] }).catch((e) => e);
    expect(refused).toBeInstanceOf(InvalidParameterError);
    expect(refused).toMatchObject({
      errorCode: 1001,
      errorMsg: 'aggregate[0].type: expects SUM, AVG, COUNT, MAX or MIN (any letter case)',
    });
  });

  it('getList without parameters uses the defaults', async () => {
    const list = await client.getList('notes');
    expect(list.paging).toMatchObject({ currentPage: 1, pageSize: 20 });
  });

  it('send answers the raw envelope with the request id', async () => {
    const response = await client.send('get-list', { datasetCode: 'notes', paramMap: { pageSize: 1 } });
    expect(response.httpStatus).toBe(200);
    expect(response.envelope).toMatchObject({ success: true, msg: null });
    expect(response.requestId).toEqual(expect.any(String));
  });
});

describe('browser mode', () => {
  it('sends a token minted by a trusted server, asking for one per dataset', async () => {
    const asked: TokenRequest[] = [];
    const browser = createClient({
      baseUrl: harness.url,
      appCode: MAIN_APP.appCode,
      token: (request) => {
        asked.push(request);
        // In a browser this is a call to the application's own backend, which runs `das token` or mintBrowserToken.
        return mintBrowserToken(
          { appCode: request.appCode, accessKey: MAIN_APP.accessKey, datasetCode: request.datasetCode },
          MAIN_APP.secret,
        );
      },
    });
    const created = await browser.create('notes', { title: 'from a browser' });
    expect(created).toMatchObject({ title: 'from a browser' });
    expect(asked).toEqual([{ operation: 'create', appCode: MAIN_APP.appCode, datasetCode: 'notes' }]);
  });

  it('a token minted for another dataset is refused as 1002', async () => {
    const browser = createClient({
      baseUrl: harness.url,
      appCode: MAIN_APP.appCode,
      token: () =>
        mintBrowserToken(
          { appCode: MAIN_APP.appCode, accessKey: MAIN_APP.accessKey, datasetCode: 'typed' },
          MAIN_APP.secret,
        ),
    });
    await expect(browser.getList('notes')).rejects.toMatchObject({ errorCode: 1002, httpStatus: 401 });
  });
});

describe('typed errors', () => {
  it('1001 InvalidParameterError with the contract message', async () => {
    const error = await client.create('typed', { s: 'x', i: 'seven' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect(error).toMatchObject({ errorCode: 1001, httpStatus: 400, requestId: expect.any(String) });
    expect((error as InvalidParameterError).errorMsg).toMatch(/'i'/);
  });

  it('1002 AuthenticationError for a wrong secret', async () => {
    const wrong = createClient({
      baseUrl: harness.url,
      appCode: 'app-main',
      accessKey: MAIN_APP.accessKey,
      signingSecret: 'not-the-secret',
    });
    const error = await wrong.getList('notes').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ errorCode: 1002, httpStatus: 401 });
  });

  it('1003 AuthenticationError for a clock 11 minutes behind', async () => {
    const late = createClient({
      baseUrl: harness.url,
      appCode: MAIN_APP.appCode,
      accessKey: MAIN_APP.accessKey,
      signingSecret: MAIN_APP.secret,
      now: () => Date.now() - 11 * 60 * 1000,
    });
    await expect(late.getList('notes')).rejects.toMatchObject({
      name: 'AuthenticationError',
      errorCode: 1003,
      httpStatus: 401,
    });
  });

  it('1004 NotFoundError for an unknown application', async () => {
    const unknown = createClient({
      baseUrl: harness.url,
      appCode: 'app-nobody',
      accessKey: 'ak-whatever-1',
      signingSecret: 'sk-whatever-1',
    });
    const error = await unknown.getList('notes').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ errorCode: 1004, httpStatus: 404 });
  });

  it('1005 NotFoundError for an unknown dataset', async () => {
    await expect(client.getList('no_such_dataset')).rejects.toMatchObject({
      name: 'NotFoundError',
      errorCode: 1005,
      httpStatus: 404,
    });
  });

  it('1006 AccessDeniedError for a dataset without a grant, and for an operation outside it', async () => {
    const notGranted = await client.getList('other_data').catch((e: unknown) => e);
    expect(notGranted).toBeInstanceOf(AccessDeniedError);
    expect(notGranted).toMatchObject({ errorCode: 1006, httpStatus: 403 });
    await expect(client.create('readonly_notes', { title: 'x' })).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it('2002 NotFoundError for an unknown id, on getOne and on update', async () => {
    await expect(client.getOne('typed', '01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toMatchObject({
      name: 'NotFoundError',
      errorCode: 2002,
      httpStatus: 404,
    });
    await expect(client.update('typed', '01ARZ3NDEKTSV4RRFFQ69G5FAV', { s: 'y' })).rejects.toMatchObject({
      errorCode: 2002,
    });
  });
});
