/**
 * docs/interface.md §7 limits and §2 rate-limit headers over HTTP: the real handlers (real pipeline, real operations,
 * real quota store over dynalite), built on a clock the test drives so that windows can end on demand.
 */
import path from 'node:path';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createHandler } from '../../../../../shared/composition/pipeline';
import type { Operation } from '../../../../../shared/operation/operation';
import { createOperation } from '../../../../../shared/operations/create';
import { getListOperation } from '../../../../../shared/operations/get-list-operation';
import { getOneOperation } from '../../../../../shared/operations/get-one';
import { updateOperation } from '../../../../../shared/operations/update';
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
    // One write (1 WCU) admits each admitted request, and nothing is written when it ends; a refusal is one
    // failed write, or none when the environment's last image of the item already showed the minute full.
    const lines = harness.logLines.slice(before).filter((line) => line.operation === 'get-list');
    expect(lines.filter((line) => line.errorCode === undefined).map((line) => line.writeUnits)).toEqual(
      Array(10).fill(1),
    );
    const refusalWrites = lines.filter((line) => line.errorCode === 4001).map((line) => line.writeUnits);
    expect(refusalWrites).toHaveLength(30);
    expect(refusalWrites.every((units) => units === 0 || units === 1)).toBe(true);
    // Refusals did not count. (The hour and the day also count the request of the minute before.) Each admitted
    // request's environment keeps its slot (one environment may have served two of them), which lapses 1.9 s
    // after it was taken; the lease of the minute before has lapsed.
    const item = await quotaItem('app-burst');
    expect(item).toMatchObject({ 'm#2026-11-22T04:10': 10, 'h#2026-11-22T04': 11, 'd#2026-11-22': 11 });
    const expiries = Object.values(item?.leases as Record<string, number>);
    expect(expiries.filter((expiry) => expiry === clock + 1_900).length).toBeGreaterThanOrEqual(1);
    expect(expiries.every((expiry) => expiry === clock + 1_900 || expiry <= clock)).toBe(true);
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

describe('a warm environment', () => {
  it('admits from the block of tokens and the slot it holds, writing about once per lease', async () => {
    // app-open: 600 a minute, so its environments may hold 30 tokens unspent (5 %) between them.
    setClock('2026-11-22T04:20:00Z');
    const before = harness.logLines.length;
    const remaining: string[] = [];
    for (let k = 0; k < 40; k += 1) {
      const res = await list('app-open');
      expect(res.status).toBe(200);
      remaining.push(rateLimit(res).remaining as string);
      clock += 100;
    }
    const writes = harness.logLines
      .slice(before)
      .filter((line) => line.operation === 'get-list')
      .map((line) => line.writeUnits);
    // At 0 ms the first request takes 1 token (no rate known yet; the application's first request also creates
    // its lease map: a failed write, the map, the write); at 100 ms the second takes a block of 31 (3 s
    // of its 100 ms rhythm, capped so that 30 stay unspent, 5 % of the minute) and a lease to 2,000 ms; it starts
    // the next ones while 300 ms of what it relies on (to 1,900 ms) is left, so it renews at 1,700 and 3,300 ms,
    // topping the block up to 30 each time: 4 writes for 40 requests.
    expect(writes.filter((units) => units !== 0)).toEqual([3, 1, 1, 1]);
    // Remaining counts the tokens this environment holds, never the ones it could not be sure of.
    expect(remaining.slice(0, 3)).toEqual(['599', '598', '597']);
    // Granted: 1 + 31 + 16 + 16; reported unspent at the last write: 30; unspent now: 64 - 40 = 24.
    const item = await quotaItem('app-open');
    expect(item).toMatchObject({ 'm#2026-11-22T04:20': 64, 'u#2026-11-22T04:20': 30 });
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

describe('a slot lease', () => {
  it('left by a crashed environment holds its slot 2 s at most, and Retry-After says until when', async () => {
    setClock('2026-11-22T04:10:37Z');
    const { client, tables } = harness.dynamo();
    // What an environment killed during a request leaves behind: a lease renewed at most 1.9 s before.
    await client.send(
      new PutCommand({ TableName: tables.quota, Item: { pk: 'app#app-crash', leases: { crashed: clock + 1_900 } } }),
    );

    const blocked = await list('app-crash');
    expect(blocked.status).toBe(429);
    expect(blocked.body.errorMsg).toBe('limit of 1 request in flight reached; retry after 2 s');
    expect(blocked.headers.get('retry-after')).toBe('2');

    // A caller that waited what Retry-After said is admitted: the lapsed lease is removed, asserting its value.
    // With a single slot, nearly every slot is always held, so the environment gives it back as its request ends.
    setClock('2026-11-22T04:10:39Z');
    const before = harness.logLines.length;
    const freed = await list('app-crash');
    expect(freed.status).toBe(200);
    expect((await quotaItem('app-crash'))?.leases).toEqual({});
    // The admission's write and the slot given back; the failed first try reads the item (dynalite only).
    expect(harness.logLines.slice(before)).toEqual([expect.objectContaining({ writeUnits: 2 })]);
  });

  it('that lapsed and was taken over is not renewed: its holder waits for a free slot', async () => {
    // app-slow (3 slots): this environment keeps its slot; after it lapsed, others took all three.
    setClock('2026-11-22T04:10:45Z');
    expect((await list('app-slow')).status).toBe(200);
    const mine = Object.keys((await quotaItem('app-slow'))?.leases as Record<string, number>)[0] as string;
    setClock('2026-11-22T04:10:50Z');
    const { client, tables } = harness.dynamo();
    await client.send(
      new UpdateCommand({
        TableName: tables.quota,
        Key: { pk: 'app#app-slow' },
        UpdateExpression: 'REMOVE leases.#mine SET leases.#a = :expiry, leases.#b = :expiry, leases.#c = :expiry',
        ExpressionAttributeNames: { '#mine': mine, '#a': 'a', '#b': 'b', '#c': 'c' },
        ExpressionAttributeValues: { ':expiry': clock + 1_000 },
      }),
    );
    const before = harness.logLines.length;
    const refused = await list('app-slow');
    expect(refused.status).toBe(429);
    expect(refused.body.errorMsg).toBe('limit of 3 requests in flight reached; retry after 1 s');
    // The renewal's failed write (the read is dynalite's: DynamoDB returns the old item with the failure).
    expect(harness.logLines.slice(before)).toEqual([expect.objectContaining({ errorCode: 4001, writeUnits: 1 })]);

    // Once they lapsed, one write removes them (asserting their values) and takes a slot.
    setClock('2026-11-22T04:10:51Z');
    expect((await list('app-slow')).status).toBe(200);
    expect((await quotaItem('app-slow'))?.leases).toEqual({ [mine]: clock + 1_900 });
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

  it('count the quota writes in the request log: none for a request its environment holds a token and a slot for', async () => {
    const before = harness.logLines.length;
    const res = await list('app-open');
    expect(rateLimit(res)).toEqual({ limit: '600', remaining: '597', reset: '23' });
    expect(harness.logLines.slice(before).filter((line) => line.operation === 'get-list')).toEqual([
      expect.objectContaining({ appCode: 'app-open', writeUnits: 0 }),
    ]);
  });
});
