/**
 * `npm run bench -- hardening`: what the hardening measures cost, in one run against the local service.
 * - A 1,000-condition `where` (refused, 1001) and how long `/health` and a get-one wait while ten of them are in
 *   flight, against each alone (and the get-one beside ten ordinary lists); in process, refusing the `where`
 *   against parsing the JSON body it came in.
 * - Custom SQL: one application's quick query while another's slow statement runs, on the engine's pool and on
 *   one worker (a single queue, as every application shared before queues per application).
 * - Signature version 2 against version 1 on the same get-one: latency and the nonce's write unit.
 * - The key store during a Secrets Manager outage (a client that never answers, like a network partition):
 *   a warm lookup with stale keys, a cold lookup during the back-off, and the first cold lookup (one timeout).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type LocalServer, startLocalServer } from '../bin/local-server';
import { bodySha256Hex, signRequest, signRequestV2 } from '../packages/client/src/signature';
import { newNonce } from '../packages/client/src/signature-v2';
import { SecretsManagerKeyStore } from '../shared/auth/secrets-manager-key-store';
import { toDataset } from '../shared/catalog/catalog';
import { parseListParams } from '../shared/query/list-params';
import { SqlJsEngine } from '../shared/sql/sqljs-engine';

const grants = [{ datasetCode: 'notes', operations: ['read', 'create'] }];
const quota = { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 100 };
const V1 = { appCode: 'app-v1', accessKey: 'ak-bench-v1-key', secret: 'sk-bench-v1' };
const V2 = { appCode: 'app-v2', accessKey: 'ak-bench-v2-key', secret: 'sk-bench-v2' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
const round = (n: number) => Math.round(n * 100) / 100;

export async function run(): Promise<void> {
  const configFile = path.join(os.tmpdir(), `bench-hardening-${process.pid}.json`);
  writeFileSync(
    configFile,
    JSON.stringify({
      applications: [
        { appCode: V1.appCode, accessKey: V1.accessKey, signingSecret: V1.secret, quota, grants },
        { appCode: V2.appCode, accessKey: V2.accessKey, signingSecret: V2.secret, quota, grants, signatureVersion: 2 },
      ],
      datasets: [{ appCode: V1.appCode, datasetCode: 'notes', fields: [{ name: 'text', type: 'string' }] }],
    }),
  );
  const lines: Record<string, unknown>[] = [];
  const server: LocalServer = await startLocalServer({
    configFile,
    port: 0,
    logSink: (l) => lines.push(JSON.parse(l)),
  });
  try {
    const call = async (app: typeof V1, route: string, payload: Record<string, unknown>, version: 1 | 2) => {
      const body = JSON.stringify({ appCode: app.appCode, datasetCode: 'notes', ...payload });
      const timeStamp = String(Date.now());
      const nonce = newNonce();
      const base = { accessKey: app.accessKey, appCode: app.appCode, datasetCode: 'notes', timeStamp };
      const token =
        version === 2
          ? signRequestV2({ ...base, bodySha256: bodySha256Hex(body), method: 'POST', nonce, path: route }, app.secret)
          : signRequest(base, app.secret);
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': app.appCode,
        'X-Dataset-Code': 'notes',
        'X-Token': token,
        ...(version === 2 ? { 'X-Sign-Version': '2', 'X-Nonce': nonce } : {}),
      };
      const started = performance.now();
      const response = await fetch(`${server.url}${route}`, { method: 'POST', headers, body });
      const answer = (await response.json()) as { success: boolean; errorCode?: number; data?: { id?: string } };
      return { ms: performance.now() - started, answer };
    };
    const health = async () => {
      const started = performance.now();
      await (await fetch(`${server.url}/health`)).text();
      return performance.now() - started;
    };

    // ---- 1,000 conditions
    const wide = { paramMap: { where: { $or: Array.from({ length: 1000 }, (_, k) => ({ text: { $ne: `v${k}` } })) } } };
    const one = { paramMap: { where: { text: { $ne: 'v' } } } };
    // Warmed up and then measured in turn, so that neither figure carries the server's first requests.
    for (let i = 0; i < 5; i++) {
      await call(V1, '/openapi/data/get-list', wide, 1);
      await call(V1, '/openapi/data/get-list', one, 1);
    }
    const refused: number[] = [];
    const small: number[] = [];
    for (let i = 0; i < 20; i++) {
      refused.push((await call(V1, '/openapi/data/get-list', wide, 1)).ms);
      small.push((await call(V1, '/openapi/data/get-list', one, 1)).ms);
    }
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) idle.push(await health());
    const busy: number[] = [];
    for (let i = 0; i < 20; i++) {
      const flood = Array.from({ length: 10 }, () => call(V1, '/openapi/data/get-list', wide, 1));
      busy.push(await health());
      await Promise.all(flood);
    }
    // A normal request beside them: a get-one alone, beside ten refused 1,000-condition lists, and beside ten
    // one-condition lists (what ten ordinary requests in flight cost it).
    const note = (await call(V1, '/openapi/data/create', { paramMap: { text: 'bench' } }, 1)).answer.data?.id;
    const getOne = async () => (await call(V1, '/openapi/data/get-one', { paramMap: { id: note } }, 1)).ms;
    const beside = async (payload: Record<string, unknown> | undefined) => {
      const ms: number[] = [];
      for (let i = 0; i < 20; i++) {
        const flood = payload ? Array.from({ length: 10 }, () => call(V1, '/openapi/data/get-list', payload, 1)) : [];
        ms.push(await getOne());
        await Promise.all(flood);
      }
      return median(ms);
    };
    await getOne();
    const alone = await beside(undefined);
    const besideWide = await beside(wide);
    const besideSmall = await beside(one);
    const code = (await call(V1, '/openapi/data/get-list', wide, 1)).answer.errorCode;
    process.stdout.write(
      `1,000-condition where: errorCode ${code}, median ${round(median(refused))} ms over 20 requests ` +
        `(a one-condition get-list of an empty dataset, answered 200: ${round(median(small))} ms)\n` +
        `/health median: alone ${round(median(idle))} ms; with ten 1,000-condition requests in flight ${round(median(busy))} ms\n` +
        `get-one median: alone ${round(alone)} ms; with ten 1,000-condition requests in flight ${round(besideWide)} ms; ` +
        `with ten one-condition get-lists in flight ${round(besideSmall)} ms\n`,
    );

    // ---- the refusal in process: the size check against reading the body it came in
    const text = JSON.stringify({ appCode: V1.appCode, datasetCode: 'notes', ...wide });
    const dataset = toDataset({
      appCode: V1.appCode,
      datasetCode: 'notes',
      fields: [{ name: 'text', type: 'string' }],
    });
    const perCall = (work: () => void, n = 2000) => {
      for (let i = 0; i < 200; i++) work();
      const started = performance.now();
      for (let i = 0; i < n; i++) work();
      return ((performance.now() - started) / n) * 1000;
    };
    const parseUs = perCall(() => JSON.parse(text));
    const refuseUs = perCall(() => {
      try {
        parseListParams(wide.paramMap, dataset);
      } catch {
        // refused, as measured
      }
    });
    process.stdout.write(
      `in process: JSON.parse of its ${text.length}-byte body ${round(parseUs)} µs; ` +
        `refusing its where (parseListParams) ${round(refuseUs)} µs\n`,
    );

    // ---- version 2 against version 1
    const created = await call(V1, '/openapi/data/create', { paramMap: { text: 'bench' } }, 1);
    const id = created.answer.data?.id;
    const measure = async (app: typeof V1, version: 1 | 2) => {
      // Warm-up: the first request on each of the application's quota shares (25 here) creates that share's
      // lease map, a one-time write (docs/performance.md, quota); both applications are measured past it.
      for (let i = 0; i < 100; i++) await call(app, '/openapi/data/get-one', { paramMap: { id } }, version);
      const ms: number[] = [];
      let writeUnits = 0;
      for (let i = 0; i < 50; i++) {
        ms.push((await call(app, '/openapi/data/get-one', { paramMap: { id } }, version)).ms);
        writeUnits += Number((lines.at(-1) as { writeUnits: number }).writeUnits);
      }
      return {
        ms: median(ms),
        writeUnits: writeUnits / 50,
        readUnits: (lines.at(-1) as { readUnits: number }).readUnits,
      };
    };
    const v1 = await measure(V1, 1);
    const v2 = await measure(V2, 2);
    process.stdout.write(
      '\n| get-one | median ms | read units | write units |\n|---|---:|---:|---:|\n' +
        `| signature version 1 | ${round(v1.ms)} | ${v1.readUnits} | ${v1.writeUnits} |\n` +
        `| signature version 2 | ${round(v2.ms)} | ${v2.readUnits} | ${v2.writeUnits} |\n`,
    );
  } finally {
    await server.close();
  }

  // ---- custom SQL: a quick query of one application beside another's slow statement
  const slowSql =
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c';
  const sqlFigures = async (threads: number) => {
    const engine = new SqlJsEngine({ threads });
    const query = (lane: string, sql: string) => engine.run({ tables: [], sql, params: {}, timeoutMs: 60_000, lane });
    try {
      await Promise.all([query('warm-1', 'SELECT 1'), query('warm-2', 'SELECT 1')]);
      const alone: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        await query('app-b', 'SELECT 42 AS n');
        alone.push(performance.now() - started);
      }
      const beside: number[] = [];
      let slowMs = 0;
      for (let i = 0; i < 3; i++) {
        const slowStarted = performance.now();
        const slow = query('app-a', slowSql).then(() => {
          slowMs = performance.now() - slowStarted;
        });
        const started = performance.now();
        await query('app-b', 'SELECT 42 AS n');
        beside.push(performance.now() - started);
        await slow;
      }
      return { alone: median(alone), beside: median(beside), slowMs };
    } finally {
      await engine.close();
    }
  };
  const pooled = await sqlFigures(4);
  const single = await sqlFigures(1);
  process.stdout.write(
    "\n| app-b's quick query (median) | alone | while app-a's slow statement runs | that statement |\n|---|---:|---:|---:|\n" +
      `| queues per application, 4 workers | ${round(pooled.alone)} ms | ${round(pooled.beside)} ms | ${round(pooled.slowMs)} ms |\n` +
      `| one worker (one queue for all) | ${round(single.alone)} ms | ${round(single.beside)} ms | ${round(single.slowMs)} ms |\n`,
  );

  // ---- key store outage
  let healthy = true;
  const secret = JSON.stringify({ accessKey: 'ak-outage-0001', signingSecret: 'sk-outage' });
  const client = {
    send: () => (healthy ? Promise.resolve({ SecretString: secret }) : new Promise(() => undefined)),
  } as unknown as SecretsManagerClient;
  let clock = Date.now();
  const options = { client, secretPrefix: 'das/bench', defaultSecretId: 'das/bench/default', now: () => clock };
  const timeLookups = async (store: SecretsManagerKeyStore, n: number) => {
    const started = performance.now();
    for (let i = 0; i < n; i++) await store.applicationKeys('app-a').catch(() => undefined);
    return (performance.now() - started) / n;
  };
  const warm = new SecretsManagerKeyStore(options);
  await warm.applicationKeys('app-a');
  const cached = await timeLookups(warm, 10_000);
  healthy = false;
  clock += 6 * 60_000; // past the 5-minute cache TTL: every lookup now finds stale keys
  const stale = await timeLookups(warm, 10_000);
  const cold = new SecretsManagerKeyStore({ ...options, callTimeoutMs: 2_000 });
  const first = await timeLookups(cold, 1);
  const backoff = await timeLookups(cold, 10_000);
  process.stdout.write(
    '\n| key lookup (Secrets Manager store) | mean per lookup |\n|---|---:|\n' +
      `| warm, within the cache TTL | ${round(cached * 1000)} µs |\n` +
      `| warm, stale keys, Secrets Manager not answering | ${round(stale * 1000)} µs |\n` +
      `| cold, first lookup, Secrets Manager not answering | ${round(first)} ms |\n` +
      `| cold, during the back-off after that | ${round(backoff * 1000)} µs |\n`,
  );
}
