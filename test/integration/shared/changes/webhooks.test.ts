/**
 * docs/interface.md §18, webhooks as `npm start` delivers them: every event a subscription's application may see is
 * POSTed to its URL, signed per Standard Webhooks (verified here with the `standardwebhooks` package), narrowed
 * through that application's grant, in revision order per record; a receiver that fails is tried again on the
 * schedule (shortened here by the documented option) with the same webhook-id; a 410 disables the subscription; a
 * receiver that hangs changes nothing in the API's answers.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../../../packages/client/src/webhooks';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const FULL: AppCredentials = { appCode: 'app-full', accessKey: 'ak-full-00000001', secret: 'sk-full-secret' };
const SECRET_LIMITED = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const SECRET_FULL = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const received: Received[] = [];
/**
 * How many more times /flaky answers 500 before it answers 204, for deliveries about the record whose customer is
 * `flakyCustomer` only: deliveries of the other tests' records may still be arriving.
 */
let flakyFailures = 0;
let flakyCustomer = '';
let receiver: Server;
let harness: ServiceHarness;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = request.url ?? '';
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ path: url, headers: request.headers, body });
      if (url === '/hang') return; // never answers
      if (url === '/gone') response.writeHead(410).end();
      else if (url === '/flaky' && flakyFailures > 0 && body.includes(`"customer":"${flakyCustomer}"`)) {
        flakyFailures -= 1;
        response.writeHead(500).end('not now');
      } else response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const fixture = JSON.parse(
    readFileSync(path.join(__dirname, '..', '..', '..', 'fixtures', 'permissions-config.json'), 'utf8'),
  );
  fixture.webhooks = [
    { id: 'limited', appCode: 'app-limited', url: `${base}/limited`, datasets: ['orders'], secret: SECRET_LIMITED },
    { id: 'flaky', appCode: 'app-full', url: `${base}/flaky`, datasets: ['orders'], secret: SECRET_FULL },
    { id: 'hang', appCode: 'app-full', url: `${base}/hang`, datasets: ['orders'], secret: SECRET_FULL },
    {
      id: 'gone',
      appCode: 'app-full',
      url: `${base}/gone`,
      datasets: ['orders'],
      types: ['record.created'],
      secret: SECRET_FULL,
    },
  ];
  const configFile = path.join(mkdtempSync(path.join(tmpdir(), 'das-webhooks-')), 'config.json');
  writeFileSync(configFile, JSON.stringify(fixture));
  // 0.001: the schedule's 5 s, 5 min, 30 min... become 5 ms, 300 ms, 1.8 s...
  harness = new ServiceHarness(configFile, { changeSettleMs: 100, webhookRetryScale: 0.001 });
  await harness.start();
});

afterAll(async () => {
  // A delivery to /hang is in hand until its 15 s are over: the server stops once it is.
  receiver.closeAllConnections();
  await harness.stop();
  await new Promise((resolve) => receiver.close(resolve));
}, 30_000);

/** What a path has received (about record `id`, when given), once that is `count` requests or the wait is over. */
async function receivedAt(where: string, count: number, waitMs = 15_000, id?: string): Promise<Received[]> {
  const until = Date.now() + waitMs;
  for (;;) {
    const got = received.filter((r) => r.path === where && (id === undefined || r.body.includes(id)));
    if (got.length >= count || Date.now() > until) return got;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function verified(request: Received, secret: string): Record<string, unknown> {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as Record<string, unknown>;
}

describe('webhooks from npm start', () => {
  it('sends each event signed per Standard Webhooks, narrowed through the grant, in revision order', async () => {
    const created = await harness.create('orders', { customer: 'Ann', amount: 3, region: 'EU' }, { app: FULL });
    const id = created.body.data.id as string;
    await harness.update('orders', { id, status: 'paid' }, { app: FULL });
    await harness.update('orders', { id, amount: 4 }, { app: FULL }); // amount: hidden from app-limited
    await harness.update('orders', { id, status: 'shipped' }, { app: FULL });

    const got = await receivedAt('/limited', 3, 15_000, id);
    const bodies = got.map((r) => verified(r, SECRET_LIMITED));
    expect(bodies.map((b) => [b.type, b.revision, b.changed ?? null])).toEqual([
      ['record.created', 1, null],
      ['record.updated', 2, ['status']],
      ['record.updated', 4, ['status']],
    ]);
    expect(bodies[0]?.record).toEqual({
      id,
      customer: 'Ann',
      status: null,
      region: 'EU',
      gmt_create: created.body.data.gmt_create,
      gmt_modified: created.body.data.gmt_modified,
    });
    for (const [index, request] of got.entries()) {
      expect(request.headers['webhook-id']).toBe(bodies[index]?.eventId);
      expect(request.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    // The client package's verifyWebhook says the same, and answers the event.
    expect(verifyWebhook(SECRET_LIMITED, got[0]?.headers ?? {}, got[0]?.body ?? '')).toEqual(bodies[0]);
    expect(() => verifyWebhook(SECRET_FULL, got[0]?.headers ?? {}, got[0]?.body ?? '')).toThrow(
      WebhookVerificationError,
    );
    // Signed with this subscription's secret only.
    expect(() => verified(got[0] as Received, SECRET_FULL)).toThrow();
  });

  it('tries a failing receiver again with the same webhook-id, and keeps the record order behind it', async () => {
    flakyFailures = 2;
    flakyCustomer = 'Flo';
    const created = await harness.create('orders', { customer: 'Flo', region: 'US' }, { app: FULL });
    const id = created.body.data.id as string;
    await harness.update('orders', { id, status: 'new' }, { app: FULL });

    const got = await receivedAt('/flaky', 4, 15_000, id);
    const ids = got.map((r) => String(r.headers['webhook-id']));
    const revisions = got.map((r) => (JSON.parse(r.body) as { revision: number }).revision);
    // Two failed attempts of revision 1, its success, then revision 2: never 2 before 1 is acknowledged.
    expect(revisions).toEqual([1, 1, 1, 2]);
    expect(new Set(ids.slice(0, 3)).size).toBe(1);
    expect(ids[3]).not.toBe(ids[0]);
  });

  it('disables a subscription whose receiver answers 410 until the configuration is deployed again', async () => {
    // The first test's creation reached /gone, which answered 410; every creation since is parked, not sent.
    const first = await receivedAt('/gone', 1);
    expect(first).toHaveLength(1);
    const g1 = await harness.create('orders', { customer: 'G1', region: 'US' }, { app: FULL });
    await receivedAt('/flaky', Number.POSITIVE_INFINITY, 1_000); // time for a delivery that should not come
    expect(received.filter((r) => r.path === '/gone')).toHaveLength(1);
    expect(received.some((r) => r.path === '/flaky' && r.body.includes(g1.body.data.id))).toBe(true);
  });

  it('answers the API at once while a receiver hangs', async () => {
    const started = performance.now();
    const created = await harness.create('orders', { customer: 'Hal', region: 'US' }, { app: FULL });
    expect(created.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((await receivedAt('/hang', 1)).length).toBeGreaterThanOrEqual(1);
  });
});
