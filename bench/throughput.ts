/**
 * `npm run bench -- throughput`: local get-one throughput of the service against a minimal server, both at
 * 10 connections. The minimal server is what the service cannot do with less: it checks an HMAC-SHA256
 * signature over the same headers and answers one GetItem from its own embedded store (dynalite, like the
 * service's). The service does everything else a request needs: envelope, body checks, authentication in
 * contract order, the quota (admission beside the read), permissions and the log line.
 *
 * A third server is the minimal one plus the quota's admission through the service's own quota store on the
 * same store: HMAC, admission beside the GetItem (on what the process's environments hold, or one write), the
 * slot handed back, then the answer. Its ratio to the minimal server is what the exact quota costs, and the
 * service's ratio to it is what the rest of the service costs.
 *
 * The servers run in this process, each over its own dynalite, and are measured alternately (service,
 * minimal, minimal with the quota, service, …) for the same time each, so that a busy machine slows all alike;
 * the ratios are those of the medians.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { QuotaStore } from '../shared/storage/quota-store';

const CONNECTIONS = 10;
const ROUNDS = 5;
const ROUND_MS = 4_000;
const WARMUP_MS = 1_500;
const RECORDS = 200;
export const APP = { appCode: 'app-bench', accessKey: 'ak-bench-0001', secret: 'sk-bench-secret' };
export const DATASET = 'items';

/** The service's configuration: the contract's default concurrency, windows roomy enough for the run. */
export const CONFIG = {
  timeZone: 'UTC',
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      quota: { perMinute: 100_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: CONNECTIONS },
      grants: [{ datasetCode: DATASET, operations: ['read', 'create'] }],
    },
  ],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: DATASET,
      fields: [
        { name: 'name', type: 'string', required: true, indexed: true },
        { name: 'amount', type: 'number' },
        { name: 'status', type: 'enum', options: ['new', 'paid'] },
      ],
    },
  ],
};

export function record(k: number): Record<string, unknown> {
  return { name: `Item ${k}`, amount: k * 1.5, status: k % 2 ? 'paid' : 'new' };
}

export function signedHeaders(): Record<string, string> {
  const timeStamp = String(Date.now());
  return {
    'Content-Type': 'application/json',
    'X-Time-Stamp': timeStamp,
    'X-App-Code': APP.appCode,
    'X-Dataset-Code': DATASET,
    'X-Token': signRequest({ ...APP, datasetCode: DATASET, timeStamp }, APP.secret),
  };
}

/**
 * A server that verifies the signature and answers one GetItem: the floor of what a signed read costs. With
 * `withQuota`, it also takes the quota's admission (beside the read), as the service's quota store does it, under
 * the service's limits.
 */
async function startMinimalServer(withQuota = false): Promise<{ url: string; ids: string[]; close(): Promise<void> }> {
  const dynamo = await startEmbeddedDynamo();
  const client = createDocumentClient(dynamo.client);
  await dynamo.client.send(
    new CreateTableCommand({
      TableName: 'minimal',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  await dynamo.client.send(
    new CreateTableCommand({
      TableName: 'quota',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  const quota = new QuotaStore(dynamo.client, 'quota');
  const limits = CONFIG.applications[0]?.quota as NonNullable<(typeof CONFIG.applications)[0]>['quota'];
  const ids = Array.from({ length: RECORDS }, (_, k) => `id-${String(k).padStart(6, '0')}`);
  for (const [k, id] of ids.entries()) {
    await client.send(new PutCommand({ TableName: 'minimal', Item: { pk: DATASET, sk: id, ...record(k) } }));
  }
  const secret = Buffer.from(APP.secret);
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { paramMap: { id: string } };
    const header = (name: string) => String(req.headers[name] ?? '');
    const expected = createHmac('sha256', secret)
      .update(
        `accessKey=${APP.accessKey}&appCode=${header('x-app-code')}&datasetCode=${header('x-dataset-code')}&timeStamp=${header('x-time-stamp')}`,
      )
      .digest();
    const token = Buffer.from(header('x-token'), 'base64');
    if (token.length !== expected.length || !timingSafeEqual(token, expected)) {
      res.writeHead(401).end();
      return;
    }
    const read = client.send(
      new GetCommand({ TableName: 'minimal', Key: { pk: header('x-dataset-code'), sk: body.paramMap.id } }),
    );
    if (!withQuota) {
      const result = await read;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ success: true, msg: null, data: result.Item ?? null }));
      return;
    }
    const capacity = new CapacityMeter();
    const [decision, result] = await Promise.all([
      quota.admit({ appCode: APP.appCode, quota: limits, now: Date.now(), clock: Date.now, capacity }),
      read,
    ]);
    if (!decision.admitted) {
      res.writeHead(429).end();
      return;
    }
    // Handed back before the answer, as the service does: a client's next request finds its environment idle.
    await decision.grant.end();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ success: true, msg: null, data: result.Item ?? null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ids,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await dynamo.close();
    },
  };
}

/** Requests answered with 200 in `ms` by `CONNECTIONS` clients that each send the next as soon as one answers. */
export async function load(
  url: string,
  ids: string[],
  ms: number,
): Promise<{ ok: number; failed: number; cpuMs: number }> {
  const headers = signedHeaders();
  const until = Date.now() + ms;
  const cpu = process.cpuUsage();
  let ok = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let k = c; Date.now() < until; k += CONNECTIONS) {
        const id = ids[k % ids.length] as string;
        const response = await fetch(`${url}/openapi/data/get-one`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ appCode: APP.appCode, datasetCode: DATASET, paramMap: { id } }),
        });
        await response.arrayBuffer();
        if (response.status === 200) ok += 1;
        else failed += 1;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { ok, failed, cpuMs: (used.user + used.system) / 1000 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export async function run(): Promise<void> {
  const configFile = path.join(os.tmpdir(), `das-bench-throughput-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const service = await startLocalServer({ configFile, port: 0, logSink: () => undefined });
  const minimal = await startMinimalServer();
  const quotaFloor = await startMinimalServer(true);
  try {
    const serviceIds: string[] = [];
    for (let k = 0; k < RECORDS; k += 1) {
      const response = await fetch(`${service.url}/openapi/data/create`, {
        method: 'POST',
        headers: signedHeaders(),
        body: JSON.stringify({ appCode: APP.appCode, datasetCode: DATASET, paramMap: record(k) }),
      });
      const created = (await response.json()) as { data: { id: string } | null };
      if (!created.data) throw new Error(`creating the bench's records failed: ${JSON.stringify(created)}`);
      serviceIds.push(created.data.id);
    }
    await load(service.url, serviceIds, WARMUP_MS);
    await load(minimal.url, minimal.ids, WARMUP_MS);
    await load(quotaFloor.url, quotaFloor.ids, WARMUP_MS);

    const servers = [
      ['service', service.url, serviceIds],
      ['minimal', minimal.url, minimal.ids],
      ['quotaFloor', quotaFloor.url, quotaFloor.ids],
    ] as const;
    const rates = { service: [] as number[], minimal: [] as number[], quotaFloor: [] as number[] };
    // Process CPU per answered request (this process runs the server, its store and the load alike): steadier
    // than requests/s on a shared machine.
    const cpu = { service: [] as number[], minimal: [] as number[], quotaFloor: [] as number[] };
    const notOk = { service: 0, minimal: 0, quotaFloor: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, url, ids] of servers) {
        const measured = await load(url, ids, ROUND_MS);
        notOk[name] += measured.failed;
        rates[name].push((measured.ok * 1000) / ROUND_MS);
        cpu[name].push(measured.cpuMs / Math.max(1, measured.ok));
      }
    }
    const rate = (name: keyof typeof rates) => median(rates[name]);
    const cpuOf = (name: keyof typeof cpu) => median(cpu[name]);
    const fmt = (values: number[]) => values.map((v) => v.toFixed(0)).join(', ');
    process.stdout.write(
      [
        `get-one at ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_MS / 1000} s each (requests/s)`,
        `service (signature, quota, permissions, log):    ${fmt(rates.service)}; median ${rate('service').toFixed(0)}`,
        `minimal (HMAC + GetItem):                        ${fmt(rates.minimal)}; median ${rate('minimal').toFixed(0)}`,
        `minimal with the quota (lease admission):        ${fmt(rates.quotaFloor)}; median ${rate('quotaFloor').toFixed(0)}`,
        `ratio service / minimal: ${(rate('service') / rate('minimal')).toFixed(2)}x`,
        `ratio minimal with the quota / minimal: ${(rate('quotaFloor') / rate('minimal')).toFixed(2)}x (what the exact quota costs)`,
        `ratio service / minimal with the quota: ${(rate('service') / rate('quotaFloor')).toFixed(2)}x`,
        `answers other than 200: service ${notOk.service}, minimal ${notOk.minimal}, minimal with the quota ${notOk.quotaFloor}`,
        `CPU per request: service ${cpuOf('service').toFixed(2)} ms, minimal ${cpuOf('minimal').toFixed(2)} ms, ` +
          `minimal with the quota ${cpuOf('quotaFloor').toFixed(2)} ms; throughput the CPU allows, service / minimal: ` +
          `${(cpuOf('minimal') / cpuOf('service')).toFixed(2)}x, minimal with the quota / minimal: ` +
          `${(cpuOf('minimal') / cpuOf('quotaFloor')).toFixed(2)}x`,
        '',
      ].join('\n'),
    );
  } finally {
    await service.close();
    await minimal.close();
    await quotaFloor.close();
  }
}
