/**
 * docs/performance.md "Units per request under concurrency": 50 clients at once mixing get-one, get-list and
 * create on a demo-like dataset (orders: 4 indexed fields, records of about 300 bytes), over HTTP through the real
 * pipeline, on a clock that crosses a minute boundary mid-run. Every request's log line stays within its
 * operation's stated maximum.
 */
import path from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createHandler } from '../../../../shared/composition/pipeline';
import type { Operation } from '../../../../shared/operation/operation';
import { createOperation } from '../../../../shared/operations/create';
import { getListOperation } from '../../../../shared/operations/get-list-operation';
import { getOneOperation } from '../../../../shared/operations/get-one';
import { FIXTURES_DIR } from '../../../support/paths';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../support/service-harness';

const OPERATIONS: Record<string, Operation> = {
  'get-list': getListOperation,
  'get-one': getOneOperation,
  create: createOperation,
};
const APP: AppCredentials = { appCode: 'app-busy', accessKey: 'ak-app-busy-0001', secret: 'sk-app-busy-secret' };

// The service's clock runs at real speed from two seconds before a minute ends, and moves on to the next minute
// when half of the requests have been sent if it has not reached it yet (the other half in flight around it).
const START = Date.parse('2026-11-22T04:10:58Z');
const BOUNDARY = Date.parse('2026-11-22T04:11:00Z');
let offset = 0;
const clock = () => Date.now() + offset;

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'capacity-config.json'), {
  clock,
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation, { now: clock }) : undefined;
  },
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

/**
 * The stated maxima (docs/performance.md). Reads: get-one the record (1, consistent); get-list the page of 20
 * (1), the count's checkpoint (0.5) and its entries of the last 30 s (0.5 per about 70 creates: this run makes
 * 200 requests, fewer than 70 creates). Writes: the quota's admission (0-1); create its change claim (1) and its record (1); get-list
 * the count's checkpoint when it moves (0-1).
 */
const MAXIMA: Record<string, { readUnits: number; writeUnits: number }> = {
  'get-one': { readUnits: 1, writeUnits: 1 },
  'get-list': { readUnits: 4, writeUnits: 2 },
  create: { readUnits: 0, writeUnits: 3 },
};

/**
 * What a request that runs long may write beyond its maximum: its slot lease renewed once per 1.5 s it runs
 * (shared/quota/leases.ts), and for a create, a change claim that landed more than 2 s after its position
 * withdrawn and made again (2 writes per 2 s of delay, at most twice; storage/change-items.ts `claimChange`).
 */
function slowAllowance(operation: string, durationMs: number): number {
  const renewals = Math.floor(durationMs / 1_500);
  return operation === 'create' ? renewals + Math.min(5, Math.floor(durationMs / 1_000)) : renewals;
}

let serial = 0;
function order(): Record<string, unknown> {
  serial += 1;
  return {
    customer_id: `c-${serial % 7}`,
    amount: 10 + (serial % 90),
    items: 1 + (serial % 4),
    status: ['new', 'paid', 'shipped', 'cancelled'][serial % 4],
    region: ['EU', 'US', 'APAC'][serial % 3],
    placed_at: '2026-11-20 10:00:00',
    shipping: { carrier: 'dhl', days: 2 },
    internal_note: 'call before delivery',
  };
}

const kinds = ['get-one', 'get-list', 'create'] as const;

let sent = 0;
function send(kind: (typeof kinds)[number], ids: string[], k: number): Promise<CallResult> {
  sent += 1;
  if (sent === 101 && clock() < BOUNDARY) offset = BOUNDARY - Date.now();
  const options = { app: APP, timeStamp: clock() };
  if (kind === 'get-one') return harness.getOne('orders', ids[k % ids.length], options);
  if (kind === 'get-list') return harness.getList('orders', undefined, options);
  return harness.create('orders', order(), options);
}

it('keeps every get-one, get-list and create within its stated units at 50 concurrent, across a minute boundary', async () => {
  // 30 orders in the minute before (their count entries are settled by the time the run lists them).
  offset = START - 90_000 - Date.now();
  const ids: string[] = [];
  for (let k = 0; k < 30; k += 1) {
    const res = await harness.create('orders', order(), { app: APP, timeStamp: clock() });
    expect(res.status).toBe(200);
    ids.push(res.body.data.id);
  }

  offset = START - Date.now();
  sent = 0;
  const before = harness.logLines.length;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: 50 }, async (_, worker) => {
      for (let k = 0; k < 4; k += 1) {
        statuses.push(
          (await send(kinds[(worker + k) % kinds.length] as (typeof kinds)[number], ids, worker * 31 + k)).status,
        );
      }
    }),
  );

  expect(statuses).toHaveLength(200);
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  // Requests were admitted on both sides of the boundary.
  const { client, tables } = harness.dynamo();
  const quota = (await client.send(new GetCommand({ TableName: tables.quota, Key: { pk: 'app#app-busy' } }))).Item;
  expect(quota?.['m#2026-11-22T04:10']).toBeGreaterThanOrEqual(1);
  expect(quota?.['m#2026-11-22T04:11']).toBeGreaterThanOrEqual(1);

  const lines = harness.logLines.slice(before).filter((line) => (line.operation as string) in OPERATIONS);
  expect(lines).toHaveLength(statuses.length);
  expect(lines.filter((line) => line.operation === 'create').length).toBeLessThan(70);
  const over = lines
    .map((line) => {
      const operation = line.operation as string;
      const max = MAXIMA[operation] as { readUnits: number; writeUnits: number };
      return {
        operation,
        durationMs: line.durationMs as number,
        readUnits: line.readUnits as number,
        writeUnits: line.writeUnits as number,
        readMax: max.readUnits,
        writeMax: max.writeUnits + slowAllowance(operation, line.durationMs as number),
      };
    })
    .filter((seen) => seen.readUnits > seen.readMax || seen.writeUnits > seen.writeMax);
  expect(over).toEqual([]);
}, 60_000);
