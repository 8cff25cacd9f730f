/**
 * `das webhooks status` and `das webhooks replay` against `das serve` (what npm start runs), as an operator meets
 * them: a receiver that answers 500 to every attempt gets the event ten times (the schedule, scaled down by the
 * documented option), after which status shows it parked; the receiver is fixed, a replay queues the event again,
 * and status shows it delivered, with the same webhook-id as before.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DasServer, runDas, startDasServe } from '../../../support/run-das';

const scratch = mkdtempSync(path.join(tmpdir(), 'das-webhooks-command-'));
const record = path.join(scratch, 'local-service.json');
const ENV = { DAS_LOCAL_SERVICE_FILE: record };
const KEYS = ['--app', 'app-full', '--key', 'ak-full-00000001', '--secret', 'sk-full-secret'];
const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;

const received: { status: number; headers: IncomingHttpHeaders; body: string }[] = [];
let failing = true;
let receiver: Server;
let server: DasServer;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = failing ? 500 : 204;
      received.push({ status, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const config = JSON.parse(
    readFileSync(path.join(__dirname, '..', '..', '..', 'fixtures', 'permissions-config.json'), 'utf8'),
  );
  config.webhooks = [
    {
      id: 'crm',
      appCode: 'app-full',
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/crm`,
      datasets: ['orders'],
      secret: SECRET,
    },
  ];
  const configFile = path.join(scratch, 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  // 0.00001: the schedule's nine waits (5 s ... 24 h, about 78 h in all) take about 3 s.
  server = await startDasServe(
    [
      ...['--port', '0', '--data-dir', path.join(scratch, 'data'), '--config', configFile, '--quiet'],
      ...['--webhook-retry-scale', '0.00001'],
    ],
    ENV,
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

async function status(): Promise<Record<string, unknown>[]> {
  const run = await runDas(['webhooks', 'status', '--json'], ENV);
  expect([run.code, run.stderr]).toEqual([0, '']);
  return JSON.parse(run.stdout);
}

/** Status, once `done` holds for it (or the wait is over: the expectations after say what differs). */
async function statusWhen(done: (crm: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const until = Date.now() + 30_000;
  for (;;) {
    const [crm] = await status();
    if ((crm && done(crm)) || Date.now() > until) return crm as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

it('shows an event parked after its last attempt, and delivered after the receiver is fixed and it is replayed', async () => {
  const created = await runDas(
    ['call', 'create', '--dataset', 'orders', '--param', 'customer=Ann', '--param', 'amount:=3', ...KEYS],
    ENV,
  );
  expect(created.code).toBe(0);
  const id = JSON.parse(created.stdout).data.id as string;

  const parked = await statusWhen((crm) => crm.parked === 1);
  expect(received.map((r) => r.status)).toEqual(Array(10).fill(500));
  expect(parked).toEqual({
    id: 'crm',
    appCode: 'app-full',
    url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/crm$/),
    datasets: ['orders'],
    state: 'active',
    deliveries: 0,
    failures: 10,
    retrying: 0,
    parked: 1,
    oldestUndeliveredAgeMs: expect.any(Number),
    lastFailure: { at: expect.any(Number), status: 500, error: 'the receiver answered 500' },
  });
  expect(parked.oldestUndeliveredAgeMs as number).toBeLessThan(60_000);

  const text = await runDas(['webhooks', 'status'], ENV);
  const lines = text.stdout.split('\n');
  expect(lines[0]).toBe('subscription  state   deliveries  failures  retrying  parked  oldest undelivered');
  expect(lines[1]).toMatch(/^crm {11}active {2}0 {11}10 {8}0 {9}1 {7}\d+s$/);
  expect(lines[3]).toMatch(/^crm: last failure \S+Z: the receiver answered 500$/);

  failing = false;
  const replay = await runDas(['webhooks', 'replay', '--id', 'crm', '--since', '10m'], ENV);
  expect([replay.code, replay.stderr]).toEqual([0, '']);
  expect(replay.stdout).toMatch(/^1 event since \S+Z queued again for crm \(1 of them parked before\)\.\n$/);

  const delivered = await statusWhen((crm) => crm.deliveries === 1);
  expect(delivered).toMatchObject({
    state: 'active',
    deliveries: 1,
    failures: 10,
    retrying: 0,
    parked: 0,
    oldestUndeliveredAgeMs: null,
  });
  expect(received.map((r) => r.status)).toEqual([...Array(10).fill(500), 204]);
  // The same event: its webhook-id, and the record it is about.
  expect(received[10]?.headers['webhook-id']).toBe(received[0]?.headers['webhook-id']);
  expect(JSON.parse(received[10]?.body ?? '{}')).toMatchObject({ type: 'record.created', id, revision: 1 });
}, 90_000);

it('names what is wrong: an unknown subscription, a time it cannot read, a name that cannot be a stage, no local service', async () => {
  const unknown = await runDas(['webhooks', 'replay', '--id', 'erp', '--since', '1h'], ENV);
  expect([unknown.code, unknown.stderr]).toEqual([
    1,
    "das webhooks: no webhook subscription 'erp' in the deployed configuration (it has: crm)\n",
  ]);
  const since = await runDas(['webhooks', 'replay', '--id', 'crm', '--since', 'yesterday'], ENV);
  expect(since.code).toBe(2);
  expect(since.stderr).toContain(
    "--since must be an ISO 8601 time (2026-11-26T09:00:00Z) or a duration (90s, 15m, 2h, 7d), not 'yesterday'",
  );
  const stage = await runDas(['webhooks', 'status', '--stage', 'prod/eu'], ENV);
  expect([stage.code, stage.stderr]).toEqual([
    2,
    'das webhooks: --stage must be 1 to 64 letters, digits, "_" or "-"\nSee: das webhooks --help\n',
  ]);
  const none = await runDas(['webhooks', 'status']);
  expect([none.code, none.stderr]).toEqual([
    1,
    'das webhooks: no local service runs in this checkout. Start it (npm start), or name a deployment with --stage.\n',
  ]);
}, 60_000);
