/**
 * docs/batch-update.md across crashes of `npm start`: rounds of one batch update beside concurrent single updates
 * of the same records, the server killed with SIGKILL at a random moment of each round and started again on the
 * same store. After each restart (and the first write of the dataset, which finishes what the killed process left)
 * the batch is applied to all of its records or to none, and to all of them when it was acknowledged; per-value
 * totals equal the records as read one by one; and, at the end, every record has exactly one change event per
 * revision, from 1 to the one it is at.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { signRequest } from '../../../../packages/client/src/signature';
import { freePort } from '../../../support/free-port';
import { REPO_ROOT } from '../../../support/paths';

const CONFIG = path.join(__dirname, '..', '..', '..', 'fixtures', 'batch-update-config.json');
const APP = { appCode: 'app-batch', accessKey: 'ak-batch-0000001', secret: 'sk-batch-secret' };
const STATUSES = ['new', 'paid', 'shipped'] as const;
const POOL = 24;
const dataDir = mkdtempSync(path.join(tmpdir(), 'das-batch-crash-'));

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
      CONFIG,
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
    if (running.process.exitCode !== null || running.process.signalCode !== null) return resolve();
    running.process.once('exit', () => resolve());
    process.kill(-(running.process.pid as number), 'SIGKILL');
  });
}

async function call(
  url: string,
  operation: string,
  body: Record<string, unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: the envelope as JSON
): Promise<{ status: number; body: any }> {
  const timeStamp = String(Date.now());
  const datasetCode = 'orders';
  const token = signRequest({ accessKey: APP.accessKey, appCode: APP.appCode, datasetCode, timeStamp }, APP.secret);
  const response = await fetch(`${url}/openapi/data/${operation}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': APP.appCode,
      'X-Dataset-Code': datasetCode,
      'X-Token': token,
    },
    body: JSON.stringify({ appCode: APP.appCode, datasetCode, ...body }),
  });
  return { status: response.status, body: await response.json() };
}

let server: Running | undefined;
afterAll(async () => {
  if (server) await killHard(server);
});

it('applies every batch whole or not at all across kill -9, with exact totals and exactly one event per revision', async () => {
  server = await startServer();
  const created = await call(server.url, 'batch-create', {
    paramList: Array.from({ length: POOL + 1 }, (_, i) => ({ customer: `c${i}`, status: 'new', region: 'EU' })),
  });
  expect(created.status).toBe(200);
  const [sentinel, ...pool] = created.body.data as string[];
  let round = 0;

  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 0, max: POOL - 1 }), { minLength: 1, maxLength: POOL }),
      fc.constantFrom(...STATUSES),
      fc.array(fc.tuple(fc.integer({ min: 0, max: POOL - 1 }), fc.integer({ min: 1, max: 999 })), {
        minLength: 3,
        maxLength: 12,
      }),
      fc.integer({ min: 0, max: 2500 }),
      async (members, status, singles, killAfterMs) => {
        round += 1;
        const running = server as Running;
        const ids = members.map((i) => pool[i] as string);
        const note = `round ${round}`;
        const batch = call(running.url, 'update', { paramMap: { id: ids, status, note } }).catch(() => undefined);
        const others = singles.map(([i, amount]) =>
          call(running.url, 'update', { paramMap: { id: pool[i], amount } }).catch(() => undefined),
        );
        await new Promise((resolve) => setTimeout(resolve, killAfterMs));
        await killHard(running);
        const answered = await batch;
        await Promise.all(others);
        server = await startServer();
        const url = server.url;

        // The first write of the dataset finishes what the killed process left (docs/batch-update.md).
        const finisher = await call(url, 'update', { paramMap: { id: [sentinel], note } });
        expect(finisher.status).toBe(200);
        const records = await Promise.all(pool.map((id) => call(url, 'get-one', { paramMap: { id } })));
        const withNote = ids.filter((id) => records[pool.indexOf(id)]?.body.data.note === note);
        expect([0, ids.length]).toContain(withNote.length);
        if (answered?.status === 200) expect(withNote).toHaveLength(ids.length);
        if (withNote.length > 0) {
          for (const id of ids) expect(records[pool.indexOf(id)]?.body.data.status).toBe(status);
        }
        for (const value of STATUSES) {
          const expected = records.filter((record) => record.body.data.status === value).length;
          const list = await call(url, 'get-list', { paramMap: { status: value, id_in: pool } });
          expect([value, list.body.data.paging.totalCount]).toEqual([value, expected]);
        }
      },
    ),
    { numRuns: 6 },
  );

  // Every record has one event per revision: read the feed until the change log has caught up.
  const url = (server as Running).url;
  const revisions = new Map<string, number>();
  for (const id of pool) {
    const read = await fetchRevision(url, id);
    revisions.set(id, read);
  }
  const wanted = [...revisions.values()].reduce((sum, revision) => sum + revision, 0);
  const seen = new Map<string, { id: string; revision: number }>();
  const until = Date.now() + 60_000;
  let after: string | undefined;
  while (Date.now() < until) {
    for (;;) {
      const page = await call(url, 'changes', { paramMap: { limit: 500, ...(after ? { after } : {}) } });
      for (const event of page.body.data.events) if (revisions.has(event.id)) seen.set(event.eventId, event);
      after = page.body.data.cursor;
      if (!page.body.data.hasMore) break;
    }
    if (seen.size >= wanted) break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  // Exactly one event per revision: 1, 2, ... up to the record's revision, none missing, none twice.
  for (const [id, revision] of revisions) {
    const mine = [...seen.values()]
      .filter((event) => event.id === id)
      .map((event) => event.revision)
      .sort((a, b) => a - b);
    expect([id, mine]).toEqual([id, Array.from({ length: revision }, (_, i) => i + 1)]);
  }
}, 600_000);

async function fetchRevision(url: string, id: string): Promise<number> {
  const timeStamp = String(Date.now());
  const token = signRequest(
    { accessKey: APP.accessKey, appCode: APP.appCode, datasetCode: 'orders', timeStamp },
    APP.secret,
  );
  const response = await fetch(`${url}/openapi/data/get-one`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': APP.appCode,
      'X-Dataset-Code': 'orders',
      'X-Token': token,
    },
    body: JSON.stringify({ appCode: APP.appCode, datasetCode: 'orders', paramMap: { id } }),
  });
  return Number(JSON.parse(response.headers.get('etag') as string));
}
