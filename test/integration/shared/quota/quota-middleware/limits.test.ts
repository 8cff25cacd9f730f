/**
 * docs/interface.md §7 limits and §2 rate-limit headers over HTTP: the real handlers (real pipeline, real operations,
 * real quota store over dynalite), built on a clock the test drives so that windows can end on demand.
 */
import path from 'node:path';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createHandler } from '../../../../../shared/composition/pipeline';
import type { Operation } from '../../../../../shared/operation/operation';
import { createOperation } from '../../../../../shared/operations/create';
import { getOneOperation } from '../../../../../shared/operations/get-one';
import { updateOperation } from '../../../../../shared/operations/update';
import { getListOperation } from '../../../../../shared/query/get-list';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const QUOTA_CONFIG = path.join(FIXTURES_DIR, 'quota-config.json');
const OPERATIONS: Record<string, Operation> = {
  'get-list': getListOperation,
  'get-one': getOneOperation,
  create: createOperation,
  update: updateOperation,
};

let clock = Date.parse('2026-11-22T04:10:37Z');
const setClock = (iso: string) => {
  clock = Date.parse(iso);
};

const harness = new ServiceHarness(QUOTA_CONFIG, {
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation, { now: () => clock }) : undefined;
  },
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

function app(appCode: string): AppCredentials {
  return { appCode, accessKey: `ak-${appCode}-0001`, secret: 'quota-fixture-default-secret' };
}

/** A get-list signed at the test's clock (the server checks the timestamp against the same clock). */
function list(appCode: string): Promise<CallResult> {
  return harness.getList('notes', undefined, { app: app(appCode), timeStamp: clock });
}

function rateLimit(res: CallResult) {
  return {
    limit: res.headers.get('ratelimit-limit'),
    remaining: res.headers.get('ratelimit-remaining'),
    reset: res.headers.get('ratelimit-reset'),
  };
}

async function quotaItem(appCode: string): Promise<Record<string, unknown> | undefined> {
  const { client, tables } = harness.dynamo();
  const result = await client.send(new GetCommand({ TableName: tables.quota, Key: { pk: `app#${appCode}` } }));
  return result.Item;
}

async function quotaItemByKey(pk: string): Promise<Record<string, unknown> | undefined> {
  const { client, tables } = harness.dynamo();
  return (await client.send(new GetCommand({ TableName: tables.quota, Key: { pk } }))).Item;
}

describe('per-minute limit', () => {
  it('admits exactly N of a burst of 4N concurrent requests', async () => {
    // The application's first request creates its lease map (once per application); then a new minute.
    setClock('2026-11-22T04:09:37Z');
    expect((await list('app-burst')).status).toBe(200);
    setClock('2026-11-22T04:10:37Z');
    const before = harness.logLines.length;
    const results = await Promise.all(Array.from({ length: 40 }, () => list('app-burst')));

    const admitted = results.filter((res) => res.status === 200);
    const refused = results.filter((res) => res.status === 429);
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(30);
    // Each admission saw a different count: the writes were serialised on the item, none lost.
    expect(admitted.map((res) => Number(rateLimit(res).remaining)).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    for (const res of refused) {
      expectFailure(res, 4001, 'per-minute limit of 10 requests reached; retry after 23 s');
      expect(res.headers.get('retry-after')).toBe('23');
    }
    // Exactly 1 WCU to admit and 1 to release each admitted request, 1 per refusal, however many race.
    const lines = harness.logLines.slice(before);
    expect(lines.filter((line) => line.errorCode === undefined).map((line) => line.writeUnits)).toEqual(
      Array(10).fill(2),
    );
    expect(lines.filter((line) => line.errorCode === 4001).map((line) => line.writeUnits)).toEqual(Array(30).fill(1));
    // Refusals did not count, and every lease was released when its request ended.
    // (The hour and the day also count the request of the minute before.)
    expect(await quotaItem('app-burst')).toMatchObject({
      'm#2026-11-22T04:10': 10,
      'h#2026-11-22T04': 11,
      'd#2026-11-22': 11,
      leases: {},
    });
  });

  it('refuses the (N+1)-th sequential request with 4001, HTTP 429 and the seconds to the next minute', async () => {
    setClock('2026-11-22T04:10:37Z');
    for (const remaining of ['2', '1', '0']) {
      const res = await list('app-seq');
      expect(res.status).toBe(200);
      expect(rateLimit(res)).toEqual({ limit: '3', remaining, reset: '23' });
    }
    const refused = await list('app-seq');
    expectFailure(refused, 4001, 'per-minute limit of 3 requests reached; retry after 23 s');
    expect(refused.headers.get('retry-after')).toBe('23');
    expect(rateLimit(refused)).toEqual({ limit: '3', remaining: '0', reset: '23' });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('an application spread over quota shares', () => {
  // app-shards: 10 a minute and 100 in flight, so 4 shares (shared/quota/shares.ts) taking 3, 3, 2 and 2.
  it('admits exactly its limit of a concurrent burst, every share full to its part', async () => {
    setClock('2026-11-22T04:10:37Z');
    const results = await Promise.all(Array.from({ length: 40 }, () => list('app-shards')));

    expect(results.filter((res) => res.status === 200)).toHaveLength(10);
    const refused = results.filter((res) => res.status === 429);
    expect(refused).toHaveLength(30);
    for (const res of refused) {
      expect(res.body.errorMsg).toBe('per-minute limit of 10 requests reached; retry after 23 s');
      expect(res.headers.get('retry-after')).toBe('23');
    }
    const shares = await Promise.all(
      ['app#app-shards', 'app#app-shards#1', 'app#app-shards#2', 'app#app-shards#3'].map(quotaItemByKey),
    );
    expect(shares.map((item) => item?.['m#2026-11-22T04:10'])).toEqual([3, 3, 2, 2]);
    expect(shares.map((item) => item?.leases)).toEqual([{}, {}, {}, {}]);
  });

  it('refuses with one failed write once this container has seen every share full', async () => {
    const before = harness.logLines.length;
    const res = await list('app-shards');
    expect(res.status).toBe(429);
    expect(harness.logLines.slice(before)).toEqual([expect.objectContaining({ errorCode: 4001, writeUnits: 1 })]);
  });

  it('refuses no request while any share has room, whichever share a request starts at', async () => {
    // app-quarters: 4 a minute over 4 shares of 1 each; every request starts at a share chosen at random.
    setClock('2026-11-22T04:10:37Z');
    for (const remaining of ['3', '2', '1', '0']) {
      const res = await list('app-quarters');
      expect(res.status).toBe(200);
      expect(rateLimit(res)).toEqual({ limit: '4', remaining, reset: '23' });
    }
    const refused = await list('app-quarters');
    expect(refused.status).toBe(429);
    expect(refused.body.errorMsg).toBe('per-minute limit of 4 requests reached; retry after 23 s');
  });
});

describe('refused requests', () => {
  it('do not count: a client that slows down gets its full allowance', async () => {
    setClock('2026-11-22T04:10:37Z');
    for (let k = 0; k < 3; k += 1) expect((await list('app-patient')).status).toBe(200);
    for (let k = 0; k < 5; k += 1) expect((await list('app-patient')).status).toBe(429);

    // Next minute: the hour (limit 5) has 2 left, not 0 — the 5 refusals were not counted.
    setClock('2026-11-22T04:11:05Z');
    const first = await list('app-patient');
    expect(first.status).toBe(200);
    expect(rateLimit(first)).toEqual({ limit: '5', remaining: '1', reset: String(48 * 60 + 55) });
    const second = await list('app-patient');
    expect(second.status).toBe(200);
    expect(rateLimit(second)).toEqual({ limit: '5', remaining: '0', reset: String(48 * 60 + 55) });

    const third = await list('app-patient');
    expect(third.status).toBe(429);
    expect(third.body.errorMsg).toBe('per-hour limit of 5 requests reached; retry after 2935 s');
    expect(third.headers.get('retry-after')).toBe('2935');
  });
});

describe('window rollover', () => {
  it('admits again when the minute, then the day, starts over', async () => {
    setClock('2026-11-22T04:10:37Z');
    expect((await list('app-roll')).status).toBe(200);
    expect((await list('app-roll')).status).toBe(200);
    expect((await list('app-roll')).status).toBe(429);

    setClock('2026-11-22T04:11:00Z');
    const nextMinute = await list('app-roll');
    expect(nextMinute.status).toBe(200);
    // The day (limit 3) is now the tightest window: 0 left, 19 h 49 min to midnight UTC.
    expect(rateLimit(nextMinute)).toEqual({ limit: '3', remaining: '0', reset: '71340' });
    const dayFull = await list('app-roll');
    expect(dayFull.status).toBe(429);
    expect(dayFull.body.errorMsg).toBe('per-day limit of 3 requests reached; retry after 71340 s');

    setClock('2026-11-23T00:00:00Z');
    const nextDay = await list('app-roll');
    expect(nextDay.status).toBe(200);
    expect(rateLimit(nextDay)).toEqual({ limit: '2', remaining: '1', reset: '60' });
  });

  it("removes ended windows' counters with later writes, without relying on TTL", async () => {
    // Continues app-roll: a minute and a half into the new day, the previous day's counters have ended.
    setClock('2026-11-23T00:01:30Z');
    expect((await list('app-roll')).status).toBe(200);
    const item = (await quotaItem('app-roll')) ?? {};
    expect(Object.keys(item).sort()).toEqual([
      'd#2026-11-23',
      'expiresAt',
      'h#2026-11-23T00',
      'leases',
      'm#2026-11-23T00:00',
      'm#2026-11-23T00:01',
      'pk',
    ]);
    expect(item).toMatchObject({ 'd#2026-11-23': 2, 'h#2026-11-23T00': 2, leases: {} });
  });
});

describe('a lease left by a crashed request', () => {
  it('holds its slot no longer than the function timeout plus the margin, and Retry-After says until when', async () => {
    setClock('2026-11-22T04:10:37Z');
    const { client, tables } = harness.dynamo();
    // What a request admitted now and then killed leaves behind: its lease, never released. The local
    // functions' timeout is 28 s, so its lease lasts 28 s + the 2 s margin.
    await client.send(
      new PutCommand({ TableName: tables.quota, Item: { pk: 'app#app-crash', leases: { crashed: clock + 30_000 } } }),
    );

    const blocked = await list('app-crash');
    expect(blocked.status).toBe(429);
    expect(blocked.body.errorMsg).toBe('limit of 1 request in flight reached; retry after 30 s');
    expect(blocked.headers.get('retry-after')).toBe('30');

    setClock('2026-11-22T04:10:58.500Z');
    const later = await list('app-crash');
    expect(later.body.errorMsg).toBe('limit of 1 request in flight reached; retry after 9 s');
    expect(later.headers.get('retry-after')).toBe('9');

    // A caller that waited what Retry-After said is admitted.
    setClock('2026-11-22T04:11:07Z');
    const freed = await list('app-crash');
    expect(freed.status).toBe(200);
    expect((await quotaItem('app-crash'))?.leases).toEqual({});
  });

  it('is purged even when this container last saw the map empty (a lease another container left)', async () => {
    setClock('2026-11-22T04:12:00Z');
    const plain = harness.logLines.length;
    expect((await list('app-crash')).status).toBe(200);
    const listReads = harness.logLines[plain]?.readUnits as number;
    const { client, tables } = harness.dynamo();
    await client.send(
      new UpdateCommand({
        TableName: tables.quota,
        Key: { pk: 'app#app-crash' },
        UpdateExpression: 'SET leases.#id = :expiry',
        ExpressionAttributeNames: { '#id': 'elsewhere' },
        ExpressionAttributeValues: { ':expiry': clock + 30_000 },
      }),
    );
    setClock('2026-11-22T04:12:31Z');
    const before = harness.logLines.length;
    const res = await list('app-crash');
    expect(res.status).toBe(200);
    expect((await quotaItem('app-crash'))?.leases).toEqual({});
    // The refused first try, the purging retry and the release; the read is dynalite's (DynamoDB returns the
    // old item with the failure).
    expect(harness.logLines.slice(before)).toEqual([
      expect.objectContaining({ writeUnits: 3, readUnits: listReads + 1 }),
    ]);
  });
});

describe('rate-limit headers', () => {
  it('come with every response once the caller is authenticated, success or failure', async () => {
    setClock('2026-11-22T04:10:37Z');
    const ok = await list('app-open');
    expect(rateLimit(ok)).toEqual({ limit: '600', remaining: '599', reset: '23' });

    const notFound = await harness.getOne('notes', 'no-such-id', { app: app('app-open'), timeStamp: clock });
    expectFailure(notFound, 2002);
    expect(rateLimit(notFound)).toEqual({ limit: '600', remaining: '598', reset: '23' });
  });

  it('are absent when authentication fails (nothing is counted)', async () => {
    const res = await harness.getList('notes', undefined, {
      app: { ...app('app-open'), secret: 'not-the-secret' },
      timeStamp: clock,
    });
    expectFailure(res, 1002);
    expect(rateLimit(res)).toEqual({ limit: null, remaining: null, reset: null });
  });

  it('count the quota writes in the request log: one to admit, one to release', async () => {
    const before = harness.logLines.length;
    await list('app-open');
    expect(harness.logLines.slice(before)).toEqual([
      expect.objectContaining({ appCode: 'app-open', operation: 'get-list', writeUnits: 2 }),
    ]);
  });
});
