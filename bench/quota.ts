/**
 * What the quota costs per request, measured against dynalite (the local DynamoDB-compatible store): DynamoDB
 * calls, write and read units, and latency of an admission, a refusal and a release, with a plain UpdateItem
 * on the same table as the baseline. Goal (docs/performance.md, "The quota under production traffic"): one write per admitted request plus one to
 * release its lease, one failed write per refused request.
 *
 * Capacity is what the store puts in the request's meter: DynamoDB's reported ConsumedCapacity for successful
 * writes, and an estimate (by item size) for failed conditional writes, which DynamoDB bills but does not
 * report. dynalite does not return the old item with a failed condition (DynamoDB does, with
 * ReturnValuesOnConditionCheckFailure), so here every refusal also costs one consistent read; it is shown
 * apart, as it does not happen against DynamoDB.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { createDocumentClient } from '../shared/aws/dynamodb';
import type { Quota } from '../shared/catalog/catalog';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import type { LeaseRef } from '../shared/quota/admission';
import { shareCount } from '../shared/quota/shares';
import { currentWindows } from '../shared/quota/windows';
import { quotaKey } from '../shared/storage/item-keys';
import { decodeQuotaItem, estimateItemBytes } from '../shared/storage/quota-item';
import { QuotaStore } from '../shared/storage/quota-store';
import { ensureTables, localTableNames } from '../shared/storage/table-setup';

const ITERATIONS = 500;
const NOW = Date.parse('2026-11-22T04:10:05Z');
/** Roomy limits that still fit one quota item (one share: shared/quota/shares.ts). */
const ROOMY: Quota = { perMinute: 12_000, perHour: 1_000_000, perDay: 1_000_000, concurrent: 32 };

interface Sample {
  ms: number;
  writeUnits: number;
  readUnits: number;
  writes: number;
  reads: number;
}

/** Counts the DynamoDB calls a client sends, by kind. */
class CallCounter {
  writes = 0;
  reads = 0;
  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (/^(Update|Put|Delete)Item/.test(context.commandName ?? '')) this.writes += 1;
        else this.reads += 1;
        return next(args);
      },
      { step: 'initialize', name: 'benchCallCounter' },
    );
  }
}

async function measure(counter: CallCounter, action: (meter: CapacityMeter) => Promise<unknown>): Promise<Sample> {
  const meter = new CapacityMeter();
  const [writes, reads] = [counter.writes, counter.reads];
  const started = process.hrtime.bigint();
  await action(meter);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    ms,
    writeUnits: meter.writeUnits,
    readUnits: meter.readUnits,
    writes: counter.writes - writes,
    reads: counter.reads - reads,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function summarise(label: string, samples: Sample[], baselineP50?: number): string {
  const mean = (pick: (s: Sample) => number) => samples.reduce((sum, s) => sum + pick(s), 0) / samples.length;
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const p50 = percentile(ms, 50);
  const ratio = baselineP50 ? `${(p50 / baselineP50).toFixed(2)}x` : '1.00x';
  return [
    label.padEnd(34),
    mean((s) => s.writes)
      .toFixed(2)
      .padStart(7),
    mean((s) => s.writeUnits)
      .toFixed(2)
      .padStart(7),
    mean((s) => s.reads)
      .toFixed(2)
      .padStart(7),
    mean((s) => s.readUnits)
      .toFixed(2)
      .padStart(7),
    p50.toFixed(2).padStart(8),
    percentile(ms, 99).toFixed(2).padStart(8),
    ratio.padStart(8),
  ].join(' ');
}

export async function run(): Promise<void> {
  const dynamo = await startEmbeddedDynamo();
  try {
    const tables = localTableNames('bench');
    await ensureTables(dynamo.client, tables);
    const raw = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const counter = new CallCounter();
    counter.attach(raw);
    const client = createDocumentClient(raw);
    const table = tables.Quota as string;
    const store = new QuotaStore(raw, table);
    const repeat = async (n: number, action: (meter: CapacityMeter, k: number) => Promise<unknown>) => {
      const samples: Sample[] = [];
      for (let k = 0; k < n; k += 1) samples.push(await measure(counter, (meter) => action(meter, k)));
      return samples;
    };

    // Baseline: one unconditional UpdateItem on an item of the same table.
    const baseline = await repeat(ITERATIONS, async (meter) => {
      const result = await client.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: 'baseline' },
          UpdateExpression: 'ADD #n :one',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addWrite(result.ConsumedCapacity);
    });
    const baseP50 = percentile(
      baseline.map((s) => s.ms).sort((a, b) => a - b),
      50,
    );

    // An application's very first request creates the lease map (once per application).
    const first = await measure(counter, (meter) =>
      store.admit({ appCode: 'bench-first', quota: ROOMY, now: NOW, capacity: meter }),
    );

    // Admitted requests, each released before the next, as requests that end do: the item stays small.
    await store.admit({ appCode: 'bench-ok', quota: ROOMY, now: NOW, capacity: new CapacityMeter() });
    const admitted: Sample[] = [];
    const released: Sample[] = [];
    for (let k = 0; k < ITERATIONS; k += 1) {
      let lease: LeaseRef = { id: '', share: 0 };
      admitted.push(
        await measure(counter, async (meter) => {
          const decision = await store.admit({ appCode: 'bench-ok', quota: ROOMY, now: NOW, capacity: meter });
          if (!decision.admitted) throw new Error('benchmark setup: an admission was refused');
          lease = decision.lease;
        }),
      );
      released.push(await measure(counter, (meter) => store.release({ appCode: 'bench-ok', lease, capacity: meter })));
    }

    // Refusals: the minute's allowance is used up.
    const full: Quota = { ...ROOMY, perMinute: 1 };
    await store.admit({ appCode: 'bench-full', quota: full, now: NOW, capacity: new CapacityMeter() });
    const refused = await repeat(ITERATIONS, async (meter) => {
      const decision = await store.admit({ appCode: 'bench-full', quota: full, now: NOW, capacity: meter });
      if (decision.admitted) throw new Error('benchmark setup: a request over the limit was admitted');
    });

    // Recovery after a crash: two leases never released fill the map (limit 2); once they have expired, the
    // next admission finds the map full, sees no live lease in the failure, and retries purging them.
    const crashed: Quota = { ...ROOMY, concurrent: 2 };
    const crashes = 50;
    for (let k = 0; k < crashes; k += 1) {
      for (let j = 0; j < 2; j += 1) {
        await store.admit({ appCode: `bench-crash-${k}`, quota: crashed, now: NOW, capacity: new CapacityMeter() });
      }
    }
    const recovered = await repeat(crashes, async (meter, k) => {
      const later = NOW + 31_000; // the default lease: the longest function timeout (28 s) plus the 2 s margin
      const decision = await store.admit({ appCode: `bench-crash-${k}`, quota: crashed, now: later, capacity: meter });
      if (!decision.admitted) throw new Error('benchmark setup: expired leases were not purged');
    });

    // The same, seen by a container that never saw the item (a cold one, or the crash was elsewhere).
    for (let k = 0; k < crashes; k += 1) {
      for (let j = 0; j < 2; j += 1) {
        await store.admit({ appCode: `bench-cold-${k}`, quota: crashed, now: NOW, capacity: new CapacityMeter() });
      }
    }
    const coldContainer = new QuotaStore(raw, table);
    const recoveredCold = await repeat(crashes, async (meter, k) => {
      const later = NOW + 31_000; // the default lease: the longest function timeout (28 s) plus the 2 s margin
      const appCode = `bench-cold-${k}`;
      const decision = await coldContainer.admit({ appCode, quota: crashed, now: later, capacity: meter });
      if (!decision.admitted) throw new Error('benchmark setup: expired leases were not purged');
    });

    // A burst on one item: 4N concurrent admissions at a per-minute limit of N admit exactly N (4N = 32, the
    // most requests one item holds in flight).
    const burstLimit = 8;
    const burstQuota: Quota = { ...ROOMY, perMinute: burstLimit };
    await admitBurst(store, 'bench-burst', burstQuota, 4 * burstLimit, NOW - 60_000);
    const burst = await admitBurst(store, 'bench-burst', burstQuota, 4 * burstLimit, NOW);

    // Bursts over 4 and 8 shares (an application with 128 or 256 requests in flight: 32 leases a share).
    const sharded = [];
    for (const [shares, limit] of [
      [4, 100],
      [8, 200],
    ] as const) {
      const quota: Quota = { ...ROOMY, perMinute: limit, concurrent: shares * 32 };
      const appCode = `bench-shards-${shares}`;
      // The lease maps exist (an application's first minute), then a fresh minute.
      await admitBurst(store, appCode, quota, 2 * shares, NOW - 60_000);
      const result = await admitBurst(store, appCode, quota, 4 * limit, NOW);
      const counts: number[] = [];
      for (let share = 0; share < shareCount(quota); share += 1) {
        const item = await client.send(
          new GetCommand({ TableName: table, Key: quotaKey(appCode, share), ConsistentRead: true }),
        );
        counts.push(Number(item.Item?.[currentWindows(NOW)[0]?.attribute as string] ?? 0));
      }
      sharded.push({ shares: shareCount(quota), limit, result, counts });
    }

    // 50 requests in flight at once (limit 64: two shares of 32 leases), then all released: the WCU of every
    // admission and release, and the largest item, with the lease maps at their fullest.
    const wide: Quota = { ...ROOMY, concurrent: 64 };
    await admitBurst(store, 'bench-wide', wide, 4, NOW - 60_000);
    const inFlight = await admitBurst(store, 'bench-wide', wide, 50, NOW, false);
    let largestItem = 0;
    for (let share = 0; share < shareCount(wide); share += 1) {
      const item = await client.send(
        new GetCommand({ TableName: table, Key: quotaKey('bench-wide', share), ConsistentRead: true }),
      );
      largestItem = Math.max(largestItem, estimateItemBytes('bench-wide', decodeQuotaItem(item.Item), share));
    }
    const releaseUnits = await Promise.all(
      inFlight.leases.map(async (lease) => {
        const meter = new CapacityMeter();
        await store.release({ appCode: 'bench-wide', lease, capacity: meter });
        return meter.writeUnits;
      }),
    );

    const header = [
      'per request'.padEnd(34),
      'writes'.padStart(7),
      'WCU'.padStart(7),
      'reads'.padStart(7),
      'RCU'.padStart(7),
      'p50 ms'.padStart(8),
      'p99 ms'.padStart(8),
      'vs base'.padStart(8),
    ].join(' ');
    process.stdout.write(
      [
        `dynalite, ${ITERATIONS} sequential requests per row (capacity: units the request's meter records)`,
        header,
        summarise('baseline: plain UpdateItem', baseline),
        summarise('admitted: conditional update', admitted, baseP50),
        summarise('release of its lease', released, baseP50),
        summarise('refused (per-minute limit)', refused, baseP50),
        summarise('after a crash, container knew', recovered, baseP50),
        summarise('after a crash, cold container', recoveredCold, baseP50),
        summarise("an application's first request", [first], baseP50),
        '',
        `admitted request, total: ${(mean(admitted, 'writes') + mean(released, 'writes')).toFixed(2)} writes, ` +
          `${(mean(admitted, 'writeUnits') + mean(released, 'writeUnits')).toFixed(2)} WCU, 0 reads`,
        `refused request: ${mean(refused, 'writes').toFixed(2)} failed write (${mean(refused, 'writeUnits').toFixed(2)} WCU); ` +
          `the ${mean(refused, 'reads').toFixed(2)} read (${mean(refused, 'readUnits').toFixed(2)} RCU) is dynalite's only: ` +
          'DynamoDB returns the old item with the failure',
        `burst, one item: ${4 * burstLimit} concurrent admissions at a limit of ${burstLimit}: ` +
          `${burst.admitted} admitted in ${burst.ms.toFixed(0)} ms; ${describeUnits(burst)}`,
        ...sharded.map(
          ({ shares, limit, result, counts }) =>
            `burst, ${shares} shares: ${4 * limit} concurrent admissions at a limit of ${limit}: ${result.admitted} admitted ` +
            `in ${result.ms.toFixed(0)} ms (per share: ${counts.join(', ')}); ${describeUnits(result)}`,
        ),
        `50 in flight at once (2 shares): ${describeUnits(inFlight)}; releases: ${histogram(releaseUnits)}; ` +
          `largest item ${largestItem} bytes`,
        '',
      ].join('\n'),
    );
    raw.destroy();
  } finally {
    await dynamo.close();
  }
}

interface Burst {
  admitted: number;
  ms: number;
  /** WCU each admitted request's admission took, and each refused request's refusal. */
  admittedUnits: number[];
  refusedUnits: number[];
  leases: LeaseRef[];
}

/** `count` concurrent admissions, each released as soon as it is admitted (as a request that ends) unless `release` is off. */
async function admitBurst(
  store: QuotaStore,
  appCode: string,
  quota: Quota,
  count: number,
  now: number,
  release = true,
): Promise<Burst> {
  const started = process.hrtime.bigint();
  const answers = await Promise.all(
    Array.from({ length: count }, async () => {
      const meter = new CapacityMeter();
      const decision = await store.admit({ appCode, quota, now, capacity: meter });
      const units = meter.writeUnits;
      if (release && decision.admitted) {
        await store.release({ appCode, lease: decision.lease, capacity: new CapacityMeter() });
      }
      return { decision, units };
    }),
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const leases = answers.flatMap(({ decision }) => (decision.admitted ? [decision.lease] : []));
  return {
    admitted: leases.length,
    ms,
    admittedUnits: answers.filter((a) => a.decision.admitted).map((a) => a.units),
    refusedUnits: answers.filter((a) => !a.decision.admitted).map((a) => a.units),
    leases,
  };
}

/** `3×1 WCU, 1×2 WCU`: how many requests took how many write units. */
function histogram(units: number[]): string {
  const counts = new Map<number, number>();
  for (const unit of units) counts.set(unit, (counts.get(unit) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([unit, n]) => `${n}×${unit} WCU`)
    .join(', ');
}

function describeUnits(burst: Burst): string {
  const refused = burst.refusedUnits.length ? `; refusals ${histogram(burst.refusedUnits)}` : '';
  return `admissions ${histogram(burst.admittedUnits)}${refused}`;
}

function mean(samples: Sample[], key: keyof Sample): number {
  return samples.reduce((sum, s) => sum + s[key], 0) / samples.length;
}
