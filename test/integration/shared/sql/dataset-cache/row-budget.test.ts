/**
 * Custom SQL's row budget over HTTP: a query whose dataset holds more rows than the budget is refused (2001, naming
 * the budget) from the dataset's count, for a couple of read units, cold and warm, without the operation asking
 * for the engine (so a container that only refuses starts no SQL worker); a query under the budget then runs.
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHandler } from '../../../../../shared/composition/pipeline';
import type { Operation } from '../../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../../shared/operations/batch-create';
import { createOperation } from '../../../../../shared/operations/create';
import {
  createExecuteSqlOperation,
  ENGINE_LOAD_LIMIT_MS,
  recordStoreRows,
} from '../../../../../shared/operations/execute-sql';
import { DatasetCache } from '../../../../../shared/sql/dataset-cache';
import { SqlJsEngine } from '../../../../../shared/sql/sqljs-engine';
import { expectFailure } from '../../../../support/failure-envelope';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const APP: AppCredentials = { appCode: 'app-budget', accessKey: 'ak-budget-000000001', secret: 'sk-budget-secret' };

const config = {
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      grants: [
        { datasetCode: 'orders', operations: ['read', 'create'] },
        { datasetCode: 'notes', operations: ['read', 'create'] },
      ],
    },
  ],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      fields: [
        { name: 'status', type: 'enum', options: ['new', 'paid'] },
        { name: 'amount', type: 'number' },
      ],
    },
    { appCode: APP.appCode, datasetCode: 'notes', fields: [{ name: 'text', type: 'string' }] },
  ],
  queries: [
    {
      appCode: APP.appCode,
      sqlCode: 'orders-by-status',
      sql: 'SELECT status, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY status ORDER BY status',
      datasets: ['orders'],
    },
    { appCode: APP.appCode, sqlCode: 'note-count', sql: 'SELECT COUNT(*) AS n FROM notes' },
  ],
};

/** The row budget of the tests' container: `orders` gets more records than this, `notes` fewer. */
const ROW_BUDGET = 5;

const configFile = path.join(os.tmpdir(), `sql-row-budget-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(config));
const engine = new SqlJsEngine({ loadTimeoutMs: ENGINE_LOAD_LIMIT_MS });
/** How many statements asked the operation for its engine (as deployed, the first one makes it). */
let engineAsked = 0;
const executeSql = createExecuteSqlOperation({
  engine: () => {
    engineAsked += 1;
    return engine;
  },
  cache: new DatasetCache({ rowBudget: ROW_BUDGET }),
  rowSource: recordStoreRows,
});
/** The operations the tests call, as deployed, but execute-sql with this test's row budget and engine. */
const OPERATIONS: Record<string, Operation> = {
  create: createOperation,
  'batch-create': batchCreateOperation,
  'execute-sql': executeSql,
};
const harness = new ServiceHarness(configFile, {
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation) : undefined;
  },
});

function query(sqlCode: string) {
  return harness.call('/api/custom/executeSql', { sqlCode }, { app: APP, datasetCode: null });
}

function readUnitsOfLastSql(): number {
  return Number(harness.logLines.filter((line) => line.operation === 'execute-sql').at(-1)?.readUnits);
}

beforeAll(async () => {
  await harness.start();
  const orders = Array.from({ length: ROW_BUDGET + 3 }, (_, i) => ({ status: i % 2 ? 'paid' : 'new', amount: 10 }));
  expect((await harness.batchCreate('orders', orders, { app: APP })).body.success).toBe(true);
  for (const text of ['one', 'two']) {
    expect((await harness.create('notes', { text }, { app: APP })).body.success).toBe(true);
  }
}, 60_000);
afterAll(async () => {
  await harness.stop();
  await engine.close();
  rmSync(configFile, { force: true });
});

it('refuses a dataset over the row budget from its count, without asking for the engine, then runs one under it', async () => {
  const message =
    `the query's datasets hold more than ${ROW_BUDGET} rows, the most the embedded engine loads at once; the mysql ` +
    'engine runs it at any size (docs/interface.md §20), or narrow the data (a smaller dataset or a row filter) or ' +
    'read it page by page with get-list';
  expectFailure(await query('orders-by-status'), 2001, message);
  expect(readUnitsOfLastSql()).toBeLessThanOrEqual(2);
  // Refused again, warm: from the count again, and still no engine.
  expectFailure(await query('orders-by-status'), 2001, message);
  expect(readUnitsOfLastSql()).toBeLessThanOrEqual(2);
  expect(engineAsked).toBe(0);

  const answered = await query('note-count');
  expect(answered.body.data).toEqual({ execSuccess: true, execResult: [{ n: 2 }] });
  expect(engineAsked).toBe(1);
});
