/**
 * The client against the real local service where custom SQL and quotas take part: executeSql through the
 * real engine, and a real 4001 from the quota middleware (an application limited to one request in flight,
 * whose slot is taken by a lease left behind as a crashed request would leave it), which the client retries
 * after the Retry-After the service sends. Also `das call execute-sql` as a spawned process, keys from the
 * configuration file.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createClient, InvalidParameterError, RateLimitedError } from '../../../../../../packages/client/src';
import { REPO_ROOT } from '../../../../../support/paths';
import { ServiceHarness } from '../../../../../support/service-harness';

const APP = { appCode: 'app-client', accessKey: 'ak-client-live-0001', signingSecret: 'sk-client-live-secret' };
const SINGLE = { appCode: 'app-single', accessKey: 'ak-client-single-01', signingSecret: 'sk-client-single-secret' };

const config = {
  applications: [
    {
      ...APP,
      grants: [
        { datasetCode: 'orders', operations: ['read', 'create'] },
        // `nope` is hidden: to this application a query naming it names a column that does not exist.
        { datasetCode: 'notes', operations: ['read'], readFields: ['title'] },
      ],
    },
    { ...SINGLE, quota: { concurrent: 1 }, grants: [{ datasetCode: 'orders', operations: ['read'] }] },
  ],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      fields: [
        { name: 'status', type: 'enum', options: ['new', 'paid'], required: true },
        { name: 'amount', type: 'number' },
      ],
    },
    {
      appCode: APP.appCode,
      datasetCode: 'notes',
      fields: [
        { name: 'title', type: 'string' },
        { name: 'nope', type: 'string' },
      ],
    },
  ],
  queries: [
    {
      appCode: APP.appCode,
      sqlCode: 'totals-by-status',
      id: 301,
      sql: 'SELECT status, count(*) AS orders, sum(amount) AS total FROM orders WHERE amount >= #{minAmount} GROUP BY status ORDER BY status',
      params: { minAmount: { type: 'number', required: true } },
    },
    { appCode: APP.appCode, sqlCode: 'broken', sql: 'SELECT nope FROM notes' },
  ],
};

const configFile = path.join(os.tmpdir(), `client-live-limits-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(config));
const harness = new ServiceHarness(configFile);
beforeAll(() => harness.start());
afterAll(async () => {
  await harness.stop();
  rmSync(configFile, { force: true });
});

describe('executeSql against the real engine', () => {
  it('answers typed rows, by sqlCode and by numeric id', async () => {
    const client = createClient({ baseUrl: harness.url, ...APP });
    await client.create('orders', { status: 'new', amount: 10 });
    await client.create('orders', { status: 'new', amount: 5 });
    await client.create('orders', { status: 'paid', amount: 7.5 });

    const result = await client.executeSql<{ status: string; orders: number; total: number }>('totals-by-status', {
      minAmount: 6,
    });
    expect(result).toEqual({
      execSuccess: true,
      execResult: [
        { status: 'new', orders: 1, total: 10 },
        { status: 'paid', orders: 1, total: 7.5 },
      ],
    });
    expect(await client.executeSql(301, { minAmount: 0 })).toMatchObject({
      execSuccess: true,
      execResult: [{ status: 'new', orders: 2, total: 15 }, { status: 'paid' }],
    });
  });

  it('a failing statement is execSuccess false; an unknown query or a missing parameter is 1001', async () => {
    const client = createClient({ baseUrl: harness.url, ...APP });
    expect(await client.executeSql('broken')).toEqual({
      execSuccess: false,
      execError: expect.stringContaining('nope'),
    });
    await expect(client.executeSql('no-such-query')).rejects.toBeInstanceOf(InvalidParameterError);
    await expect(client.executeSql('totals-by-status', {})).rejects.toMatchObject({ errorCode: 1001, httpStatus: 400 });
  });
});

describe('das call execute-sql', () => {
  it('sends --sql and --param as sqlCode and params, with the keys of the configuration', async () => {
    // Asynchronously: the service runs in this process and must keep answering while the command waits.
    const run = await promisify(execFile)(
      process.execPath,
      [
        path.join(REPO_ROOT, 'bin', 'das.js'),
        'call',
        'execute-sql',
        '--url',
        harness.url,
        '--config',
        configFile,
        '--app',
        APP.appCode,
        '--sql',
        'totals-by-status',
        '--param',
        'minAmount:=100',
      ],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(run.stdout)).toEqual({ success: true, msg: null, data: { execSuccess: true, execResult: [] } });
  });
});

describe('retry on a real 4001', () => {
  async function occupySlot(untilMs: number): Promise<void> {
    const { client, tables } = harness.dynamo();
    await client.send(
      new PutCommand({ TableName: tables.quota, Item: { pk: `app#${SINGLE.appCode}`, leases: { crashed: untilMs } } }),
    );
  }

  it('is retried after Retry-After and then succeeds, once the slot is free', async () => {
    // The slot frees itself before the client's retry, one Retry-After (1 s) later.
    await occupySlot(Date.now() + 600);
    const seen: number[] = [];
    const client = createClient({
      baseUrl: harness.url,
      ...SINGLE,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        seen.push(response.status);
        return response;
      },
    });
    const started = Date.now();
    const list = await client.getList('orders');
    expect(list.paging.currentPage).toBe(1);
    expect(seen).toEqual([429, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('gives up with RateLimitedError carrying the service message when the limit holds', async () => {
    // This process's environment keeps its own slot up to 2 s after its last request: let it lapse first, so
    // that the one slot is the other holder's alone.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await occupySlot(Date.now() + 30_000);
    const client = createClient({ baseUrl: harness.url, ...SINGLE, retry: { maxAttempts: 1 } });
    const error = await client.getList('orders').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({
      errorCode: 4001,
      httpStatus: 429,
      // The slot frees when the lease holding it expires, 30 s from now.
      retryAfterSeconds: 30,
      errorMsg: 'limit of 1 request in flight reached; retry after 30 s',
    });
  });
});
