/**
 * `npm run bench -- quota`: what the quota writes per admitted request at steady load (docs/performance.md, "The
 * quota under production traffic"), against dynalite with the service's own quota store.
 *
 * Each function environment is a quota store of its own (its own holder, as a Lambda container has), all on one
 * quota table. The application sends a steady rate, spread evenly over the environments in turn; time runs on a
 * simulated clock (each request takes 20 ms of it), so a two-minute run takes a few seconds and nothing depends
 * on how busy the machine is. Write units are what the stores put in the requests' meters: DynamoDB's reported
 * ConsumedCapacity for successful writes, an estimate by item size for failed conditional writes.
 *
 * Then the refusals: a burst of concurrent requests past the minute's limit, and what each refusal wrote.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { DEFAULT_QUOTA, type Quota } from '../shared/catalog/catalog';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { quotaKey } from '../shared/storage/item-keys';
import { decodeQuotaItem, estimateItemBytes } from '../shared/storage/quota-item';
import { QuotaStore } from '../shared/storage/quota-store';
import { ensureTables, localTableNames } from '../shared/storage/table-setup';

/** Mid-minute, so that a run crosses minute boundaries at known points. */
const START = Date.parse('2026-11-22T04:10:05Z');
const RUN_MS = 120_000;
const REQUEST_MS = 20;

interface Steady {
  label: string;
  perMinute: number;
  environments: number;
}

const STEADY: Steady[] = [
  { label: '600/min over 1 environment', perMinute: 600, environments: 1 },
  { label: '600/min over 5 environments', perMinute: 600, environments: 5 },
  { label: '600/min over 20 environments', perMinute: 600, environments: 20 },
  { label: '60/min over 5 environments', perMinute: 60, environments: 5 },
];

interface SteadyResult {
  admitted: number;
  refused: number;
  writeUnits: number;
  readUnits: number;
  writes: number;
}

/** Counts the DynamoDB writes a client sends. */
function countWrites(client: DynamoDBClient): { writes: number } {
  const counter = { writes: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (/^(Update|Put|Delete)Item/.test(context.commandName ?? '')) counter.writes += 1;
      return next(args);
    },
    { step: 'initialize', name: 'benchWriteCounter' },
  );
  return counter;
}

async function steady(
  client: DynamoDBClient,
  counter: { writes: number },
  table: string,
  scenario: Steady,
  appCode: string,
) {
  const stores = Array.from({ length: scenario.environments }, () => new QuotaStore(client, table));
  const interval = 60_000 / scenario.perMinute;
  const result: SteadyResult = { admitted: 0, refused: 0, writeUnits: 0, readUnits: 0, writes: 0 };
  const before = counter.writes;
  let now = START;
  const clock = () => now;
  for (let k = 0; now < START + RUN_MS; k += 1) {
    now = START + k * interval;
    const store = stores[k % stores.length] as QuotaStore;
    const capacity = new CapacityMeter();
    const decision = await store.admit({ appCode, quota: DEFAULT_QUOTA, now, clock, capacity });
    result.writeUnits += capacity.writeUnits;
    result.readUnits += capacity.readUnits;
    if (decision.admitted) {
      result.admitted += 1;
      now += REQUEST_MS;
      await decision.grant.end();
    } else {
      result.refused += 1;
    }
  }
  result.writes = counter.writes - before;
  return result;
}

async function refusals(client: DynamoDBClient, table: string, appCode: string) {
  const limits: Quota = { ...DEFAULT_QUOTA, perMinute: 20, concurrent: 50 };
  const store = new QuotaStore(client, table);
  const now = START;
  // The application's first request (it creates the lease map), a minute before.
  await store.admit({ appCode, quota: limits, now: now - 60_000, capacity: new CapacityMeter() });
  const answers = await Promise.all(
    Array.from({ length: 60 }, async () => {
      const capacity = new CapacityMeter();
      const decision = await store.admit({ appCode, quota: limits, now, capacity });
      if (decision.admitted) await decision.grant.end();
      return { admitted: decision.admitted, units: capacity.writeUnits };
    }),
  );
  // Once an environment has seen the minute full, its refusals write nothing until the minute ends.
  const again: number[] = [];
  for (let k = 0; k < 10; k += 1) {
    const capacity = new CapacityMeter();
    await store.admit({ appCode, quota: limits, now: now + 1_000, capacity });
    again.push(capacity.writeUnits);
  }
  return {
    admitted: answers.filter((a) => a.admitted).length,
    refusedUnits: answers.filter((a) => !a.admitted).map((a) => a.units),
    again,
  };
}

function histogram(units: number[]): string {
  const counts = new Map<number, number>();
  for (const unit of units) counts.set(unit, (counts.get(unit) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([unit, n]) => `${n}×${unit} WCU`)
    .join(', ');
}

export async function run(): Promise<void> {
  const dynamo = await startEmbeddedDynamo();
  try {
    const tables = localTableNames('bench');
    await ensureTables(dynamo.client, tables);
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const table = tables.Quota as string;
    const counter = countWrites(client);
    const lines = [
      `steady load for ${RUN_MS / 1000} s of simulated time, default limits (600/min, 10 in flight), ${REQUEST_MS} ms a request`,
      `${'load'.padEnd(30)} ${'admitted'.padStart(8)} ${'refused'.padStart(8)} ${'writes'.padStart(7)} ${'WCU/admitted'.padStart(13)}`,
    ];
    let largest = 0;
    for (const [k, scenario] of STEADY.entries()) {
      const appCode = `app-steady-${k}`;
      const result = await steady(client, counter, table, scenario, appCode);
      lines.push(
        `${scenario.label.padEnd(30)} ${String(result.admitted).padStart(8)} ${String(result.refused).padStart(8)} ` +
          `${String(result.writes).padStart(7)} ${(result.writeUnits / Math.max(1, result.admitted)).toFixed(3).padStart(13)}`,
      );
      const item = await createDocumentClient(client).send(
        new GetCommand({ TableName: table, Key: quotaKey(appCode) }),
      );
      largest = Math.max(largest, estimateItemBytes(appCode, decodeQuotaItem(item.Item)));
    }
    const refused = await refusals(client, table, 'app-refusals');
    lines.push(
      `largest quota item ${largest} bytes`,
      `burst of 60 at once past a minute's limit of 20: ${refused.admitted} admitted; refusals ${histogram(refused.refusedUnits)}`,
      `then 10 more from an environment that saw the minute full: ${histogram(refused.again)}`,
      '',
    );
    process.stdout.write(lines.join('\n'));
    client.destroy();
  } finally {
    await dynamo.close();
  }
}
