/**
 * Receivers are isolated (contract §22; docs/interface.md §18): three subscriptions on three datasets as `npm start`
 * delivers them, one receiver that never answers (each attempt holds its delivery for the 15 s timeout), one that
 * answers 500, one healthy. Once the hanging receiver holds its subscription's share of attempts open, the healthy
 * one gets every event of its dataset, each record's in revision order, while those attempts are all still held
 * (each for its 15 s): a pool the subscriptions shared would be full of them. The hanging receiver never has more
 * than its subscription's share of attempts open at once.
 * Times are the benchmark's (`npm run bench -- webhooks`); here, counts and order.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SUBSCRIPTION_SHARE } from '../../../../shared/changes/local-deliveries';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const APP: AppCredentials = { appCode: 'app-hooks', accessKey: 'ak-hooks-00000001', secret: 'sk-hooks-secret' };
const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
/**
 * Records of the hanging and failing datasets: several times a subscription's share, enough to fill a pool of
 * deliveries the subscriptions shared with hanging attempts.
 */
const RECORDS = 4 * SUBSCRIPTION_SHARE;
/** The healthy dataset's records, and updates of its first one. */
const HEALTHY_RECORDS = 2 * SUBSCRIPTION_SHARE;
const UPDATES = 5;
/** Creates sent at once. */
const AT_ONCE = 8;

interface Event {
  id: string;
  revision: number;
}

/** What each receiver saw: the events it was sent; the hanging one's attempts open now and at most. */
const seen = {
  healthy: [] as Event[],
  failing: [] as Event[],
  hanging: [] as Event[],
  hangingOpen: 0,
  hangingMostOpen: 0,
};

/** The hanging receiver's attempts open now. */
const open = new Set<object>();
let receiver: Server;
let harness: ServiceHarness;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Event;
      const at = { id: event.id, revision: event.revision };
      if (request.url === '/hanging') {
        seen.hanging.push(at);
        seen.hangingOpen += 1;
        seen.hangingMostOpen = Math.max(seen.hangingMostOpen, seen.hangingOpen);
        open.add(response);
        response.on('close', () => {
          seen.hangingOpen -= 1;
          open.delete(response);
        });
        return; // never answers
      }
      if (request.url === '/failing') {
        seen.failing.push(at);
        response.writeHead(500).end('not now');
        return;
      }
      seen.healthy.push(at);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const datasets = ['hanging', 'failing', 'healthy'];
  const config = {
    applications: [
      {
        appCode: APP.appCode,
        accessKey: APP.accessKey,
        signingSecret: APP.secret,
        quota: { perMinute: 100_000, perHour: 1_000_000, perDay: 10_000_000, concurrent: 20 },
        grants: datasets.map((datasetCode) => ({ datasetCode, operations: ['read', 'create', 'update'] })),
      },
    ],
    datasets: datasets.map((datasetCode) => ({
      appCode: APP.appCode,
      datasetCode,
      fields: [{ name: 'n', type: 'integer' }],
    })),
    webhooks: datasets.map((datasetCode) => ({
      id: datasetCode,
      appCode: APP.appCode,
      url: `${base}/${datasetCode}`,
      datasets: [datasetCode],
      secret: SECRET,
    })),
  };
  const configFile = path.join(mkdtempSync(path.join(tmpdir(), 'das-webhook-isolation-')), 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  harness = new ServiceHarness(configFile, { changeSettleMs: 100 });
  await harness.start();
});

afterAll(async () => {
  // The hanging receiver's attempts are in hand until their 15 s are over: closing them ends them now.
  receiver.closeAllConnections();
  await harness.stop();
  await new Promise((resolve) => receiver.close(resolve));
}, 30_000);

/** Creates `count` records of a dataset, a few at a time; their ids. */
async function createAll(datasetCode: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n += AT_ONCE) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(AT_ONCE, count - n) }, (_, i) =>
        harness.create(datasetCode, { n: n + i }, { app: APP }),
      ),
    );
    for (const created of batch) {
      expect(created.body).toMatchObject({ success: true });
      ids.push(created.body.data.id as string);
    }
  }
  return ids;
}

it('a hanging and a failing receiver use only their own share: the healthy one gets every event, in order', async () => {
  // The failing dataset's creates first, then the hanging one's, until the hanging receiver holds its share.
  await createAll('failing', RECORDS);
  await createAll('hanging', RECORDS);
  while (seen.hangingOpen < SUBSCRIPTION_SHARE) await new Promise((resolve) => setTimeout(resolve, 20));
  const heldOpen = new Set(open);

  // Then the healthy dataset's: every event arrives while those attempts are still held (each for its 15 s).
  const healthyIds = await createAll('healthy', HEALTHY_RECORDS);
  const first = healthyIds[0] as string;
  for (let n = 1; n <= UPDATES; n += 1) {
    expect((await harness.update('healthy', { id: first, n: 100 + n }, { app: APP })).body).toMatchObject({
      success: true,
    });
  }
  const expected = HEALTHY_RECORDS + UPDATES;
  const held = () => [...heldOpen].filter((attempt) => open.has(attempt)).length;
  while (seen.healthy.length < expected && held() === heldOpen.size) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  expect(seen.healthy).toHaveLength(expected);
  expect(held()).toBe(SUBSCRIPTION_SHARE);
  expect(new Set(seen.healthy.map((event) => event.id))).toEqual(new Set(healthyIds));
  expect(seen.healthy.filter((event) => event.id === first).map((event) => event.revision)).toEqual([1, 2, 3, 4, 5, 6]);
  // The hanging receiver never held more than its subscription's share; the failing one was tried for each record.
  expect(seen.hangingMostOpen).toBe(SUBSCRIPTION_SHARE);
  expect(new Set(seen.failing.map((event) => event.id)).size).toBe(RECORDS);
}, 90_000);
