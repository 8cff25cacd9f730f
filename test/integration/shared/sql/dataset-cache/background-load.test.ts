/**
 * docs/interface.md §20 over HTTP: a dataset's load that cannot finish within a query's time limit goes on in the
 * background. The query answers 2001 with `Retry-After` and how far the load is; a retry succeeds, and the calls
 * together pay for one load (the request log's read units), however many came while it ran. Measured against a
 * fresh container's single load of the same dataset with time enough to finish.
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHandler } from '../../../../../shared/composition/pipeline';
import type { Operation } from '../../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../../shared/operations/batch-create';
import {
  createExecuteSqlOperation,
  ENGINE_LOAD_LIMIT_MS,
  recordStoreRows,
} from '../../../../../shared/operations/execute-sql';
import { DatasetCache } from '../../../../../shared/sql/dataset-cache';
import type { DatasetChangeFeed, DatasetRowSource } from '../../../../../shared/sql/dataset-source';
import { SqlJsEngine } from '../../../../../shared/sql/sqljs-engine';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const APP: AppCredentials = { appCode: 'app-background', accessKey: 'ak-background-00001', secret: 'sk-background' };
const RECORDS = 4_000;
const KINDS = ['a', 'b', 'c', 'd'];
const GROUP_BY = 'SELECT kind, COUNT(*) AS n, SUM(n) AS total FROM events GROUP BY kind ORDER BY kind';

const config = {
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      grants: [{ datasetCode: 'events', operations: ['read', 'create'] }],
    },
  ],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'events',
      fields: [
        { name: 'kind', type: 'enum', options: KINDS },
        { name: 'n', type: 'integer' },
        { name: 'label', type: 'string' },
      ],
    },
  ],
  queries: [
    // Reading 4,000 records takes dynalite far longer than 50 ms.
    { appCode: APP.appCode, sqlCode: 'by-kind', sql: GROUP_BY, timeoutMs: 50 },
    { appCode: APP.appCode, sqlCode: 'by-kind-patient', sql: GROUP_BY, timeoutMs: 25_000 },
  ],
};

const configFile = path.join(os.tmpdir(), `sql-background-load-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(config));
const engine = new SqlJsEngine({ loadTimeoutMs: ENGINE_LOAD_LIMIT_MS });
/** The container's cache: replaced by a fresh one to measure a single load, as another container would make it. */
let cache = new DatasetCache();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type FeedSource = DatasetRowSource & { readonly changes: DatasetChangeFeed };
/**
 * The record store with each read of rows held back a second, so that a load outlasts the first calls' 50 ms
 * however busy the machine (the background load reads through `detached()`, held back the same way).
 */
function heldBack(source: FeedSource): FeedSource {
  return {
    readRows: async (datasetCode, request) => {
      const rows = await source.readRows(datasetCode, request);
      await pause(1_000);
      return rows;
    },
    changes: {
      ...source.changes,
      apart: () => heldBack(source.changes.apart()),
      detached: () => heldBack(source.changes.detached()),
    },
  };
}
const executeSql = createExecuteSqlOperation({
  engine: () => engine,
  get cache() {
    return cache;
  },
  rowSource: (context) => heldBack(recordStoreRows(context)),
});
const OPERATIONS: Record<string, Operation> = { 'batch-create': batchCreateOperation, 'execute-sql': executeSql };
const harness = new ServiceHarness(configFile, {
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation) : undefined;
  },
});

const query = (sqlCode: string) => harness.call('/api/custom/executeSql', { sqlCode }, { app: APP, datasetCode: null });

/** The read units of the execute-sql calls logged from `from` on. */
function sqlReadUnits(from: number): number[] {
  return harness.logLines
    .slice(from)
    .filter((line) => line.operation === 'execute-sql')
    .map((line) => Number(line.readUnits));
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

const EXPECTED = {
  execSuccess: true,
  execResult: KINDS.map((kind, k) => ({
    kind,
    n: RECORDS / KINDS.length,
    // Records i = k, k + 4, ...: n is i.
    total: Array.from({ length: RECORDS / KINDS.length }, (_, j) => j * KINDS.length + k).reduce((a, b) => a + b, 0),
  })),
};

beforeAll(async () => {
  await harness.start();
  for (let start = 0; start < RECORDS; start += 1_000) {
    const batch = Array.from({ length: 1_000 }, (_, j) => {
      const i = start + j;
      return { kind: KINDS[i % KINDS.length], n: i, label: `event number ${i} of the background load test` };
    });
    expect((await harness.batchCreate('events', batch, { app: APP })).body.success).toBe(true);
  }
}, 120_000);
afterAll(async () => {
  await harness.stop();
  await engine.close();
  rmSync(configFile, { force: true });
});

it('answers 2001 with Retry-After and the progress while the load goes on, then the answer; one load paid in all', async () => {
  const from = harness.logLines.length;
  // Three calls at once: each answers 2001 within its own 50 ms, and one load runs for them all. (A process busy
  // elsewhere may run a call's timer only after the load is done: that call answers the statement's own 2001, or
  // the answer itself when the call reached the cache after the load.)
  const first = await Promise.all([query('by-kind'), query('by-kind'), query('by-kind')]);
  const answered = first.filter((res) => res.status === 200);
  const refused = first.filter((res) => res.status !== 200);
  const loading = refused.filter(
    (res) => !/^the query ran longer than its limit of 50 ms/.test(String(res.body.errorMsg)),
  );
  expect(loading.length).toBeGreaterThanOrEqual(1);
  for (const res of answered) expect(res.body.data).toEqual(EXPECTED);
  for (const res of refused) {
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ success: false, errorCode: 2001 });
  }
  for (const res of loading) {
    expect(res.body.errorMsg).toMatch(
      /^loading events: [\d,]+ of 4,000 rows; retry in \d+ s \(the load goes on meanwhile, and a retry does not read again what it has read\)$/,
    );
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(res.body.errorMsg).toContain(`retry in ${retryAfter} s`);
  }

  // Retries, as a client honouring Retry-After makes them (at most 2 s apart here), until the answer comes.
  let answer = loading[0];
  for (let attempt = 0; attempt < 60 && answer?.status !== 200; attempt += 1) {
    await pause(Math.min(2_000, 1_000 * Number(answer?.headers.get('retry-after') ?? 1)));
    answer = await query('by-kind');
  }
  expect(answer?.body.data).toEqual(EXPECTED);
  const waited = sqlReadUnits(from);

  // Another container's single load, with time enough to finish it in one call.
  cache = new DatasetCache();
  const single = harness.logLines.length;
  expect((await query('by-kind-patient')).body.data).toEqual(EXPECTED);
  const [oneLoad = 0] = sqlReadUnits(single);
  expect(oneLoad).toBeGreaterThan(20);
  // The calls together paid one load (each call also reads the dataset's count and the recent changes: a unit or
  // two), not one per call.
  expect(sum(waited)).toBeGreaterThanOrEqual(oneLoad * 0.9);
  expect(sum(waited)).toBeLessThanOrEqual(oneLoad * 1.1 + 2 * waited.length);
}, 180_000);
