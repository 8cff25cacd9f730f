/**
 * `npm run bench -- webhooks`: what webhooks cost the API and the store (docs/interface.md §18), in one run through
 * the real local service (npm start's change log and deliveries, in its process, on the deployment's schedule):
 *
 * - create p50/p99 with no subscription (a dataset no webhook receives) and with a subscription whose receiver is
 *   healthy (204), hangs (never answers: each attempt waits its 15 s) or fails (500, retried after about 5 s),
 *   side by side: the modes take turns in rounds, so the machine's load falls on each alike;
 * - delivery lag p50/p99: from the change to the healthy receiver's answer (the delivery's own `lagMs`), of one
 *   subscription on its own, then beside two others on datasets of their own whose receivers hang and answer 500,
 *   in the same run (receivers are isolated: contract §22);
 * - the capacity each write now costs beside the record's: the event's write units as the change log's writer
 *   counts them from ReturnConsumedCapacity (`changeEventWriteUnits`), for a small record and one of ~3 KB, and
 *   a delivery's own writes (its counter). The local store leaves index writes out of what it reports; the feed
 *   index holds each event whole, so DynamoDB bills the same units once more for it (shown apart).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import { createDocumentClient, endpointClientConfig } from '../shared/aws/dynamodb';
import { eventIdOf } from '../shared/changes/change-events';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { WebhookStateStore } from '../shared/storage/webhook-state';
import { writeSection } from './report';

const APP = { appCode: 'app-bench', accessKey: 'ak-bench-0000001', secret: 'sk-bench-secret' };
const MODES = ['none', 'healthy', 'hanging', 'failing'] as const;
type Mode = (typeof MODES)[number];
const ROUNDS = 6;
const PER_TURN = 60;
const LARGE_CREATES = 30;
/** Creates per dataset for the delivery lag, and the time between them (one of each dataset beside the others). */
const LAG_CREATES = 150;
const LAG_GAP_MS = 40;
const DATASETS = ['orders', 'plain', 'stalled', 'refused'];

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};
const ms = (value: number) => value.toFixed(1);

export async function run(): Promise<void> {
  let mode: Mode = 'healthy';
  /** The stalled subscription's attempts held open, and whether its receiver now answers 410 (the run is over). */
  const stalledOpen = new Set<ServerResponse>();
  let stalledGone = false;
  let stalledAttempts = 0;
  let stalledMostOpen = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url === '/stalled') {
        if (stalledGone) {
          response.writeHead(410).end();
          return;
        }
        // Never answers: each attempt waits its 15 s.
        stalledAttempts += 1;
        stalledOpen.add(response);
        stalledMostOpen = Math.max(stalledMostOpen, stalledOpen.size);
        response.on('close', () => stalledOpen.delete(response));
        return;
      }
      if (request.url === '/refused') {
        response.writeHead(500).end();
        return;
      }
      if (mode === 'hanging') return; // the delivery gives up after its 15 s
      response.writeHead(mode === 'failing' ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(path.join(tmpdir(), 'webhooks-bench-'));
  const configFile = path.join(dir, 'config.json');
  const fields = [
    { name: 'customer', type: 'string' },
    { name: 'note', type: 'string' },
  ];
  writeFileSync(
    configFile,
    JSON.stringify({
      applications: [
        {
          appCode: APP.appCode,
          accessKey: APP.accessKey,
          signingSecret: APP.secret,
          quota: { perMinute: 100000, perHour: 1000000, perDay: 10000000, concurrent: 10 },
          grants: DATASETS.map((datasetCode) => ({ datasetCode, operations: ['read', 'create'] })),
        },
      ],
      datasets: DATASETS.map((datasetCode) => ({ appCode: APP.appCode, datasetCode, fields })),
      // `bench` on orders (its receiver's mode changes by turns), and two that never succeed, on datasets of their own.
      webhooks: [
        ['bench', 'orders', 'hook'],
        ['stalled', 'stalled', 'stalled'],
        ['refused', 'refused', 'refused'],
      ].map(([id, datasetCode, where]) => ({
        id,
        appCode: APP.appCode,
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/${where}`,
        datasets: [datasetCode],
        secret: `whsec_${randomBytes(32).toString('base64')}`,
      })),
    }),
  );
  const lines: Record<string, unknown>[] = [];
  const server = await startLocalServer({
    configFile,
    port: 0,
    dataDir: dir,
    logSink: (line) => lines.push(JSON.parse(line)),
  });
  const create = async (datasetCode: string, record: Record<string, unknown>) => {
    const timeStamp = String(Date.now());
    const token = signRequest({ accessKey: APP.accessKey, appCode: APP.appCode, datasetCode, timeStamp }, APP.secret);
    const started = performance.now();
    const response = await fetch(`${server.url}/openapi/data/create`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': APP.appCode,
        'X-Token': token,
        'X-Dataset-Code': datasetCode,
      },
      body: JSON.stringify({ appCode: APP.appCode, datasetCode, paramMap: record }),
    });
    const body = (await response.json()) as { success: boolean; errorMsg?: string; data: { id: string } };
    const elapsed = performance.now() - started;
    if (!body.success) throw new Error(`create refused: ${body.errorMsg}`);
    return { elapsed, eventId: eventIdOf(datasetCode, body.data.id, 1) };
  };
  /** The delivery lag of these events' first successful deliveries. */
  const lagOf = (eventIds: ReadonlySet<string>) =>
    lines
      .filter((l) => l.operation === 'webhook-delivery' && l.outcome === 'delivered' && eventIds.has(String(l.eventId)))
      .map((l) => Number(l.webhookLagMs));

  try {
    const load = loadavg();
    // Warm-up: the handlers, the catalog cache, the stream reader.
    for (let i = 0; i < 50; i += 1) await create(i % 2 ? 'orders' : 'plain', { customer: `warm-${i}` });
    await server.changesSettled();
    lines.length = 0;

    // Delivery lag to the healthy subscription, on its own, then beside a subscription whose receiver hangs and one
    // whose receiver answers 500, in the same run: one create of each dataset every 40 ms.
    const aloneEvents = new Set<string>();
    for (let i = 0; i < LAG_CREATES; i += 1) {
      aloneEvents.add((await create('orders', { customer: `alone-${i}` })).eventId);
      await new Promise((resolve) => setTimeout(resolve, LAG_GAP_MS));
    }
    await server.changesSettled();
    const besideEvents = new Set<string>();
    for (let i = 0; i < LAG_CREATES; i += 1) {
      await create('stalled', { customer: `stalled-${i}` });
      await create('refused', { customer: `refused-${i}` });
      besideEvents.add((await create('orders', { customer: `beside-${i}` })).eventId);
      await new Promise((resolve) => setTimeout(resolve, LAG_GAP_MS));
    }
    const lastBesideAt = Date.now();
    while (lagOf(besideEvents).length < besideEvents.size && Date.now() - lastBesideAt < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const aloneLagMs = lagOf(aloneEvents);
    const besideLagMs = lagOf(besideEvents);
    // The stalled receiver answers 410 from now on (its subscription is disabled, the rest of its events parked),
    // so that the rest of the run does not wait for its attempts.
    stalledGone = true;
    for (const response of stalledOpen) response.destroy();
    await server.changesSettled();
    lines.length = 0;

    const timings: Record<Mode, number[]> = { none: [], healthy: [], hanging: [], failing: [] };
    const healthyTurnEvents = new Set<string>();
    let n = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const turn of MODES) {
        mode = turn === 'none' ? 'healthy' : turn;
        for (let i = 0; i < PER_TURN; i += 1) {
          n += 1;
          const made = await create(turn === 'none' ? 'plain' : 'orders', { customer: `c-${n}`, note: 'n' });
          timings[turn].push(made.elapsed);
          if (turn === 'healthy') healthyTurnEvents.add(made.eventId);
        }
      }
    }
    const smallBatches = lines.filter((l) => l.operation === 'change-log');
    const smallUnits = smallBatches.reduce((sum, l) => sum + Number(l.changeEventWriteUnits), 0);
    const smallEvents = smallBatches.reduce((sum, l) => sum + Number(l.changeEventsLogged), 0);
    const createUnits = lines.filter((l) => l.operation === 'create').map((l) => Number(l.writeUnits));

    const mixedLagMs = lagOf(healthyTurnEvents);

    // A record of about 3 KB (random text: it compresses little), then its event's units.
    mode = 'healthy';
    await server.changesSettled();
    const before = lines.length;
    for (let i = 0; i < LARGE_CREATES; i += 1) {
      await create('orders', { customer: `large-${i}`, note: randomBytes(2300).toString('base64') });
    }
    await server.changesSettled();
    const largeBatches = lines.slice(before).filter((l) => l.operation === 'change-log');
    const largeUnits = largeBatches.reduce((sum, l) => sum + Number(l.changeEventWriteUnits), 0);
    const largeEvents = largeBatches.reduce((sum, l) => sum + Number(l.changeEventsLogged), 0);

    // A delivery's own write: its subscription's counter (the same call the delivery makes).
    const meter = new CapacityMeter();
    const documents = createDocumentClient(
      new DynamoDBClient(endpointClientConfig(server.store.endpoint, server.store.region, false)),
    );
    await new WebhookStateStore(documents, server.store.tables.events).noteDelivered('bench', meter);

    const rows = MODES.map((turn) => {
      const label = {
        none: 'no subscription (a dataset no webhook receives)',
        healthy: 'healthy receiver (204)',
        hanging: 'hanging receiver (no answer; 15 s per attempt)',
        failing: 'failing receiver (500, retried)',
      }[turn];
      return `| ${label} | ${timings[turn].length} | ${ms(pct(timings[turn], 0.5))} | ${ms(pct(timings[turn], 0.99))} |`;
    });
    const perSmall = smallUnits / smallEvents;
    const perLarge = largeUnits / largeEvents;
    const markdown = `
## Webhooks: what they cost the API and the store (\`npm run bench -- webhooks\`)

One run, one local service (npm start's change log and deliveries in its process, the deployment's retry
schedule), creates one at a time, the four cases taking turns in ${ROUNDS} rounds of ${PER_TURN} creates each.
Load average when the run started: ${load.map((v) => v.toFixed(1)).join(', ')} on ${cpus().length} cores${load[0] !== undefined && load[0] > 2 ? ' (the machine was loaded by other work: compare the rows with each other, not with other sections)' : ''}.

| create, with | creates | p50 ms | p99 ms |
|---|---:|---:|---:|
${rows.join('\n')}

Delivery lag to a healthy receiver, from the change to its 2xx answer (the delivery's \`webhookLagMs\`), measured
before the rounds above, in the same run:

| the healthy subscription's ${LAG_CREATES} creates, ${LAG_GAP_MS} ms apart | delivered | p50 ms | p99 ms |
|---|---:|---:|---:|
| on its own | ${aloneLagMs.length} of ${aloneEvents.size} | ${ms(pct(aloneLagMs, 0.5))} | ${ms(pct(aloneLagMs, 0.99))} |
| beside a subscription whose receiver hangs and one whose receiver answers 500 (${LAG_CREATES} creates each, interleaved) | ${besideLagMs.length} of ${besideEvents.size} | ${ms(pct(besideLagMs, 0.5))} | ${ms(pct(besideLagMs, 0.99))} |

Each subscription has its own share of the deliveries in flight (8): the hanging receiver was sent
${stalledAttempts} attempts meanwhile, at most ${stalledMostOpen} open at once, each held for its 15 s, and delayed
only its own subscription's events. During the rounds above, the \`bench\` subscription's own receiver took turns
hanging and failing: its healthy turns' ${mixedLagMs.length} events waited behind its own earlier events (p50
${ms(pct(mixedLagMs, 0.5))} ms, p99 ${ms(pct(mixedLagMs, 0.99))} ms), since a subscription's share is its own to fill.
A receiver never delays the API (the table above).

Capacity, counted from ReturnConsumedCapacity (the change log writer's \`changeEventWriteUnits\`, the request log's
\`writeUnits\`):

| write | write units |
|---|---:|
| the create itself (quota 2, record, count bookkeeping; no index on these datasets) | ${ms(pct(createUnits, 0.5))} |
| its event, record of a few bytes (${smallEvents} events) | ${perSmall.toFixed(2)} |
| its event, record of ~3 KB of random text (${largeEvents} events, stored compressed) | ${perLarge.toFixed(2)} |
| the feed index's copy of the event (projection ALL: the same units again; the local store does not report index writes) | ${perSmall.toFixed(2)} / ${perLarge.toFixed(2)} |
| each delivery made (its subscription's counter, for \`das webhooks status\`; a failed attempt's one update records the failure and counts it) | ${meter.writeUnits.toFixed(2)} |

None of these writes is on the request's path: the change log's writer reads the records table's stream.
`;
    process.stdout.write(markdown);
    writeSection('webhooks', markdown);
  } finally {
    receiver.closeAllConnections();
    await server.close();
    await new Promise((resolve) => receiver.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
