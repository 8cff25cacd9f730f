/**
 * `npx tsx bench/profile-get-one.ts [seconds] [profile.cpuprofile]`: the service alone under the throughput
 * bench's get-one load (10 connections), after a warm-up, so that the hot path can be profiled without the
 * minimal server, start-up or record creation in the profile. Prints requests/s and process CPU per request;
 * with a file name, writes the CPU profile of the measured load there (open it in Chrome's DevTools).
 *
 * Then the store calls alone, through the service's own ports and clients at the same concurrency: the quota's
 * admission and release of one request against the record read, in process CPU per call (the store's included),
 * which bounds what the service can reach against a server that makes the read only.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { startLocalServer } from '../bin/local-server';
import { runtimePorts } from '../shared/composition/ports';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { APP, CONFIG, DATASET, load, record, signedHeaders } from './throughput';

async function main(seconds: number, profileFile: string | undefined): Promise<void> {
  const configFile = path.join(os.tmpdir(), `das-bench-profile-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const service = await startLocalServer({ configFile, port: 0, logSink: () => undefined });
  try {
    const ids: string[] = [];
    for (let k = 0; k < 200; k += 1) {
      const response = await fetch(`${service.url}/openapi/data/create`, {
        method: 'POST',
        headers: signedHeaders(),
        body: JSON.stringify({ appCode: APP.appCode, datasetCode: DATASET, paramMap: record(k) }),
      });
      ids.push(((await response.json()) as { data: { id: string } }).data.id);
    }
    await load(service.url, ids, 1_500);
    const session = new Session();
    if (profileFile) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    }
    const result = await load(service.url, ids, seconds * 1000);
    if (profileFile) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileFile, JSON.stringify(profile));
      session.disconnect();
    }
    process.stdout.write(
      `get-one: ${(result.ok / seconds).toFixed(0)} requests/s, ${(result.cpuMs / Math.max(1, result.ok)).toFixed(2)} ms CPU per request, ${result.failed} not 200\n`,
    );
    const { quota, records } = runtimePorts();
    const limits = { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 10 };
    const admitAndEnd = async () => {
      const capacity = new CapacityMeter();
      const decision = await quota.admit({ appCode: 'bench-store-calls', quota: limits, now: Date.now(), capacity });
      if (!decision.admitted) throw new Error('the quota refused a bench request');
      await decision.grant.end();
    };
    const read = () => records.get(DATASET, ids[0] as string, new CapacityMeter());
    const calls = { 'quota admission': [] as number[], 'record read (GetItem)': [] as number[] };
    for (let round = 0; round < 3; round += 1) {
      calls['quota admission'].push(await cpuPerCall(admitAndEnd, 1_000));
      calls['record read (GetItem)'].push(await cpuPerCall(read, 1_000));
    }
    for (const [name, values] of Object.entries(calls)) {
      process.stdout.write(`${name}: ${values.map((v) => v.toFixed(2)).join(', ')} ms CPU per call\n`);
    }
  } finally {
    await service.close();
  }
}

/** Process CPU per call of `call`, made `count` times by 10 callers that each make the next as one answers. */
async function cpuPerCall(call: () => Promise<unknown>, count: number): Promise<number> {
  let made = 0;
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (made < count) {
        made += 1;
        await call();
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / count;
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
main(Number(process.argv[2] ?? 10), process.argv[3]).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
