/**
 * The client's behaviour toward a remote service that misbehaves or is busy: retry on 4001 honouring
 * Retry-After, bounded attempts, the timeout, answers that are not envelopes, and the exact request an
 * executeSql call puts on the wire. The remote is a small HTTP server in this file that answers what each
 * test scripts: a stand-in for the network, not for any module of ours.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createClient,
  InternalServiceError,
  QueryTimeoutError,
  RateLimitedError,
  RequestTimeoutError,
  TransportError,
} from '../../../../../../packages/client/src';
import { verifySignature } from '../../../../../../packages/client/src/signature';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  at: number;
}

type Script = (received: Received, index: number, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let script: Script;
let received: Received[];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const entry = {
      path: req.url ?? '',
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
      at: Date.now(),
    };
    received.push(entry);
    script(entry, received.length - 1, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => {
  received = [];
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const CREDENTIALS = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', signingSecret: 'sk-demo-secret' };

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-fake', ...headers });
  res.end(JSON.stringify(body));
}

const rateLimited = { success: false, msg: null, data: null, errorCode: 4001, errorMsg: 'request rate exceeded' };
const emptyList = {
  success: true,
  msg: null,
  data: { paging: { pageSize: 20, totalCount: 0, currentPage: 1 }, tableData: [], tableColumns: [] },
};

describe('retry on 4001', () => {
  it('waits the Retry-After the service asks for, signs again and succeeds', async () => {
    script = (_r, index, res) =>
      index === 0 ? answer(res, 429, rateLimited, { 'Retry-After': '1' }) : answer(res, 200, emptyList);
    const client = createClient({ baseUrl, ...CREDENTIALS });
    const list = await client.getList('orders');
    expect(list.paging.totalCount).toBe(0);
    expect(received).toHaveLength(2);
    const [first, second] = received as [Received, Received];
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
    expect(Number(second.headers['x-time-stamp'])).toBeGreaterThan(Number(first.headers['x-time-stamp']));
    expect(
      verifySignature(
        String(second.headers['x-token']),
        { appCode: 'app-demo', datasetCode: 'orders', timeStamp: String(second.headers['x-time-stamp']) },
        [CREDENTIALS.accessKey],
        CREDENTIALS.signingSecret,
      ),
    ).toBe(true);
  });

  it('backs off without Retry-After, and gives up after maxAttempts with RateLimitedError', async () => {
    script = (_r, _i, res) => answer(res, 429, rateLimited, { 'Retry-After': '0' });
    const client = createClient({ baseUrl, ...CREDENTIALS, retry: { maxAttempts: 4 } });
    const error = await client.getOne('orders', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ errorCode: 4001, httpStatus: 429, retryAfterSeconds: 0, requestId: 'req-fake' });
    expect(received).toHaveLength(4);
  });

  it('uses exponential backoff when Retry-After is absent', async () => {
    script = (_r, index, res) => (index < 2 ? answer(res, 429, rateLimited) : answer(res, 200, emptyList));
    const client = createClient({ baseUrl, ...CREDENTIALS, retry: { baseDelayMs: 100 } });
    await client.getList('orders');
    const [a, b, c] = received as [Received, Received, Received];
    expect(b.at - a.at).toBeGreaterThanOrEqual(45); // 100 ms with jitter down to half
    expect(c.at - b.at).toBeGreaterThanOrEqual(95); // 200 ms with jitter down to half
  });

  it('does not wait longer than maxDelayMs: a longer Retry-After fails at once', async () => {
    script = (_r, _i, res) => answer(res, 429, rateLimited, { 'Retry-After': '120' });
    const client = createClient({ baseUrl, ...CREDENTIALS, retry: { maxDelayMs: 5_000 } });
    await expect(client.getList('orders')).rejects.toMatchObject({ errorCode: 4001, retryAfterSeconds: 120 });
    expect(received).toHaveLength(1);
  });

  it('retries nothing but 4001', async () => {
    script = (_r, _i, res) =>
      answer(res, 500, {
        success: false,
        msg: null,
        data: null,
        errorCode: 3001,
        errorMsg: 'internal error; quote request id req-fake',
      });
    const client = createClient({ baseUrl, ...CREDENTIALS });
    await expect(client.getList('orders')).rejects.toBeInstanceOf(InternalServiceError);
    expect(received).toHaveLength(1);
  });
});

describe('timeout and transport', () => {
  it('aborts an attempt after timeoutMs with RequestTimeoutError', async () => {
    script = () => undefined; // never answers
    const client = createClient({ baseUrl, ...CREDENTIALS, timeoutMs: 200 });
    const started = Date.now();
    const error = await client.getList('orders').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).timeoutMs).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the default timeout is the 30 seconds docs/interface.md §7 recommends', async () => {
    script = () => undefined;
    const timers: number[] = [];
    const realSetTimeout = global.setTimeout;
    const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      timers.push(ms ?? 0);
      return realSetTimeout(fn, ms === 30_000 ? 50 : ms);
    }) as typeof setTimeout);
    try {
      const client = createClient({ baseUrl, ...CREDENTIALS });
      await expect(client.getList('orders')).rejects.toMatchObject({ name: 'RequestTimeoutError', timeoutMs: 30_000 });
    } finally {
      spy.mockRestore();
    }
    expect(timers).toContain(30_000);
  });

  it('a caller signal aborts the request', async () => {
    script = () => undefined;
    const client = createClient({ baseUrl, ...CREDENTIALS });
    const controller = new AbortController();
    const pending = client.getList('orders', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('navigated away')), 50);
    await expect(pending).rejects.toThrow('navigated away');
  });

  it('an answer that is not an envelope is a TransportError with the HTTP status', async () => {
    script = (_r, _i, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html' });
      res.end('<html>Bad gateway</html>');
    };
    const client = createClient({ baseUrl, ...CREDENTIALS });
    const error = await client.getList('orders').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ httpStatus: 502 });
    expect((error as Error).message).toContain('Bad gateway');
  });

  it('a refused connection is a TransportError', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', ...CREDENTIALS });
    await expect(client.getList('orders')).rejects.toBeInstanceOf(TransportError);
  });

  it('2001 is a QueryTimeoutError', async () => {
    script = (_r, _i, res) =>
      answer(res, 504, { success: false, msg: null, data: null, errorCode: 2001, errorMsg: 'too long' });
    const client = createClient({ baseUrl, ...CREDENTIALS });
    await expect(client.executeSql('slow-query')).rejects.toBeInstanceOf(QueryTimeoutError);
  });
});

describe('executeSql on the wire', () => {
  const sqlResult = {
    success: true,
    msg: null,
    data: { execSuccess: true, execResult: [{ status: 'new', orders: 2 }] },
  };

  it('posts {appCode, sqlCode, params} to /api/custom/executeSql, signed without a dataset', async () => {
    script = (_r, _i, res) => answer(res, 200, sqlResult);
    const client = createClient({ baseUrl, ...CREDENTIALS });
    const result = await client.executeSql<{ status: string; orders: number }>('revenue-by-status', {
      since: '2024-01-01',
      limit: 5,
    });
    expect(result).toEqual({ execSuccess: true, execResult: [{ status: 'new', orders: 2 }] });
    const [request] = received as [Received];
    expect(request.path).toBe('/api/custom/executeSql');
    expect(request.body).toEqual({
      appCode: 'app-demo',
      sqlCode: 'revenue-by-status',
      params: { since: '2024-01-01', limit: 5 },
    });
    expect(request.headers['x-dataset-code']).toBeUndefined();
    expect(request.headers['content-type']).toBe('application/json');
    const timeStamp = String(request.headers['x-time-stamp']);
    expect(
      verifySignature(
        String(request.headers['x-token']),
        { appCode: 'app-demo', timeStamp },
        [CREDENTIALS.accessKey],
        CREDENTIALS.signingSecret,
      ),
    ).toBe(true);
  });

  it('sends a numeric id instead of sqlCode, and a dataset header when asked', async () => {
    script = (_r, _i, res) => answer(res, 200, sqlResult);
    const client = createClient({ baseUrl, ...CREDENTIALS });
    await client.executeSql(1001, undefined, { datasetCode: 'orders' });
    const [request] = received as [Received];
    expect(request.body).toEqual({ appCode: 'app-demo', id: 1001, datasetCode: 'orders' });
    expect(request.headers['x-dataset-code']).toBe('orders');
  });

  it('a failed statement is a result, not an error', async () => {
    script = (_r, _i, res) =>
      answer(res, 200, { success: true, msg: null, data: { execSuccess: false, execError: 'no such column: x' } });
    const client = createClient({ baseUrl, ...CREDENTIALS });
    expect(await client.executeSql({ sqlCode: 'broken' })).toEqual({
      execSuccess: false,
      execError: 'no such column: x',
    });
  });
});
