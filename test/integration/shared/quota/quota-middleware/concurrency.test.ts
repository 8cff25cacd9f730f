/**
 * docs/interface.md §7 requests in flight over HTTP: a test-only operation, registered through the real pipeline
 * (envelope, body, authentication, quota), holds its requests open until the test lets them finish, so the
 * number in flight is exact rather than a matter of timing.
 */
import path from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createHandler } from '../../../../../shared/composition/pipeline';
import type { Operation } from '../../../../../shared/operation/operation';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const QUOTA_CONFIG = path.join(FIXTURES_DIR, 'quota-config.json');
const CONCURRENT = 3; // app-slow's limit in the fixture

/** Requests wait here until the test opens the gate. */
let gate: Promise<void> = Promise.resolve();
let openGate: () => void = () => undefined;
let entered = 0;

const slowList: Operation = {
  name: 'get-list',
  async run() {
    entered += 1;
    await gate;
    return { paging: { pageSize: 20, totalCount: 0, currentPage: 1 }, tableData: [], tableColumns: [] };
  },
};

const harness = new ServiceHarness(QUOTA_CONFIG, {
  loadHandler: async (file) => (file === 'get-list' ? createHandler(slowList) : undefined),
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const slowApp: AppCredentials = {
  appCode: 'app-slow',
  accessKey: 'ak-app-slow-0001',
  secret: 'quota-fixture-default-secret',
};

async function quotaItem(appCode: string): Promise<Record<string, unknown> | undefined> {
  const { client, tables } = harness.dynamo();
  return (await client.send(new GetCommand({ TableName: tables.quota, Key: { pk: `app#${appCode}` } }))).Item;
}

async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Send `count` requests that stay in flight until the gate opens; answers once all have ended. `whileInFlight`
 * runs once the admitted ones are held and the refused ones answered.
 */
async function burstInFlight(
  count: number,
  expectRefused: number,
  whileInFlight: () => Promise<void> = async () => undefined,
): Promise<CallResult[]> {
  entered = 0;
  gate = new Promise((resolve) => {
    openGate = resolve;
  });
  let answered = 0;
  const calls = Array.from({ length: count }, () =>
    harness.getList('notes', undefined, { app: slowApp }).then((res) => {
      answered += 1;
      return res;
    }),
  );
  await waitUntil(
    () => entered === count - expectRefused && answered === expectRefused,
    `${count - expectRefused} requests are in flight and ${expectRefused} answered`,
  );
  try {
    await whileInFlight();
  } finally {
    openGate();
  }
  return Promise.all(calls);
}

describe('requests in flight', () => {
  it('refuses exactly 5 of C+5 slow requests, with 4001 and a Retry-After that says when the oldest lease lapses', async () => {
    const sent = Date.now();
    let leases: Record<string, number> = {};
    let seen = 0;
    const results = await burstInFlight(CONCURRENT + 5, 5, async () => {
      seen = Date.now();
      leases = (await quotaItem('app-slow'))?.leases as Record<string, number>;
    });

    expect(results.filter((res) => res.status === 200)).toHaveLength(CONCURRENT);
    const refused = results.filter((res) => res.status === 429);
    expect(refused).toHaveLength(5);
    for (const res of refused) {
      // A slot lease lasts 1.9 s from its last renewal (renewed while its request runs).
      expectFailure(res, 4001, /^limit of 3 requests in flight reached; retry after [12] s$/);
      expect(res.headers.get('retry-after')).toMatch(/^[12]$/);
      expect(res.headers.get('ratelimit-limit')).toBe('600');
    }
    expect(entered).toBe(CONCURRENT);
    const expiries = Object.values(leases);
    expect(expiries).toHaveLength(CONCURRENT);
    for (const expiry of expiries) {
      expect(expiry).toBeGreaterThanOrEqual(sent + 1_900);
      expect(expiry).toBeLessThanOrEqual(seen + 1_900);
    }
  });

  it('keeps the slots of requests running longer than a lease: a request sent meanwhile is refused', async () => {
    let late: CallResult | undefined;
    let renewed: number[] = [];
    const held = Date.now();
    const results = await burstInFlight(CONCURRENT, 0, async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      late = await harness.getList('notes', undefined, { app: slowApp });
      renewed = Object.values((await quotaItem('app-slow'))?.leases as Record<string, number>);
    });
    expect(results.map((res) => res.status)).toEqual([200, 200, 200]);
    expectFailure(late as CallResult, 4001, /^limit of 3 requests in flight reached; retry after [12] s$/);
    // Each running request's lease was renewed after the first 1.9 s had passed.
    expect(renewed).toHaveLength(CONCURRENT);
    for (const expiry of renewed) expect(expiry).toBeGreaterThan(held + 2_500);
  });

  it('admits the next C once the requests end, never holding more than C slots', async () => {
    const results = await burstInFlight(CONCURRENT, 0);
    expect(results.map((res) => res.status)).toEqual([200, 200, 200]);
    // Each environment keeps its slot, or gives it back as its request ends when its own traffic is too sparse to
    // reuse it soon. A request takes an idle environment holding a live lease first, else the warmest idle one
    // (quota/lease-holder.ts), which may be one that served a refused request above and takes a slot only when one
    // is free: at most C holders, whichever they are.
    const left = Object.keys((await quotaItem('app-slow'))?.leases as Record<string, number>);
    expect(left.length).toBeLessThanOrEqual(CONCURRENT);
  });
});
