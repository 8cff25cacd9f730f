/**
 * docs/interface.md §18 across a crash of `npm start`: the server is killed with SIGKILL while a batch create is
 * being written, started again on the same store, and the batch is sent again with the same Idempotency-Key. The
 * change feed then holds exactly one record.created per record of the batch, and a record updated around the
 * crash has its events in revision order, none missing, none twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signRequest } from '../../../../packages/client/src/signature';
import { freePort } from '../../../support/free-port';
import { REPO_ROOT } from '../../../support/paths';
import { FIXTURE_CONFIG, MAIN_APP } from '../../../support/service-harness';

const dataDir = mkdtempSync(path.join(tmpdir(), 'das-crash-'));
/** How often the feed is read again while the change log catches up. */
const SETTLE_WAIT_MS = 2_000;

interface Running {
  url: string;
  process: ChildProcess;
}

async function startServer(): Promise<Running> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'bin/local-server.ts',
      '--config',
      FIXTURE_CONFIG,
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--quiet',
    ],
    {
      cwd: REPO_ROOT,
      detached: true,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}: ${out}`)));
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}

function killHard(running: Running): Promise<void> {
  return new Promise((resolve) => {
    running.process.once('exit', () => resolve());
    process.kill(-(running.process.pid as number), 'SIGKILL');
  });
}

async function call(url: string, route: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const timeStamp = String(Date.now());
  const datasetCode = body.datasetCode as string | undefined;
  const token = signRequest(
    { accessKey: MAIN_APP.accessKey, appCode: MAIN_APP.appCode, datasetCode, timeStamp },
    MAIN_APP.secret,
  );
  const response = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': MAIN_APP.appCode,
      'X-Token': token,
      ...(datasetCode ? { 'X-Dataset-Code': datasetCode } : {}),
      ...headers,
    },
    body: JSON.stringify({ appCode: MAIN_APP.appCode, ...body }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the envelope as JSON
  return { status: response.status, body: (await response.json()) as any };
}

let server: Running | undefined;
afterAll(async () => {
  if (server) await killHard(server);
});

it('keeps one event per record change across a kill -9 mid-batch and a retry with the same Idempotency-Key', async () => {
  server = await startServer();
  const updated = await call(server.url, '/openapi/data/create', { datasetCode: 'notes', paramMap: { title: 'v1' } });
  const id = updated.body.data.id as string;
  await call(server.url, '/openapi/data/update', { datasetCode: 'notes', paramMap: { id, title: 'v2' } });

  const records = Array.from({ length: 1000 }, (_, i) => ({ title: `crash ${i}` }));
  const batch = { datasetCode: 'notes', paramList: records };
  const key = { 'Idempotency-Key': 'crash-batch-0001' };
  const inFlight = call(server.url, '/openapi/data/batch-create', batch, key).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 400));
  await killHard(server);
  await inFlight;

  server = await startServer();
  await call(server.url, '/openapi/data/update', { datasetCode: 'notes', paramMap: { id, title: 'v3' } });
  // The killed attempt still holds its key for a while (4001, Retry-After): the caller retries as told.
  let retried = await call(server.url, '/openapi/data/batch-create', batch, key);
  for (let tries = 0; retried.status === 429 && tries < 60; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    retried = await call(server.url, '/openapi/data/batch-create', batch, key);
  }
  expect(retried.status).toBe(200);
  const ids = retried.body.data as string[];
  expect(ids).toHaveLength(1000);

  // The change log catches up in the background: read the feed until every change is there (or a minute passed).
  const batchIds = new Set(ids);
  const events: { eventId: string; type: string; id: string; revision: number }[] = [];
  let after: string | undefined;
  const until = Date.now() + 60_000;
  const batchEventIds = () => new Set(events.filter((e) => batchIds.has(e.id)).map((e) => e.eventId)).size;
  while (Date.now() < until && batchEventIds() < 1000) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_WAIT_MS));
    for (;;) {
      const page = await call(server.url, '/openapi/data/changes', {
        datasetCode: 'notes',
        paramMap: { limit: 500, ...(after ? { after } : {}) },
      });
      expect(page.status).toBe(200);
      events.push(...page.body.data.events);
      after = page.body.data.cursor;
      if (!page.body.data.hasMore) break;
    }
  }
  // The feed is at least once (docs/interface.md §18): an event written after its position had settled is listed
  // again, later, with the same eventId. A reader keeps one per eventId, and a repeat is the same event.
  const byEventId = new Map<string, (typeof events)[number]>();
  for (const event of events) {
    const seen = byEventId.get(event.eventId);
    if (seen) expect(event).toEqual(seen);
    else byEventId.set(event.eventId, event);
  }
  const distinct = [...byEventId.values()];
  const batchEvents = distinct.filter((e) => batchIds.has(e.id));
  expect(batchEvents).toHaveLength(1000);
  expect(new Set(batchEvents.map((e) => e.id)).size).toBe(1000);
  expect(batchEvents.every((e) => e.type === 'record.created' && e.revision === 1)).toBe(true);
  expect(distinct.filter((e) => e.id === id).map((e) => `${e.type} ${e.revision}`)).toEqual([
    'record.created 1',
    'record.updated 2',
    'record.updated 3',
  ]);
}, 120_000);
