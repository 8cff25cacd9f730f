/**
 * Folds of per-value totals beside the writes, over HTTP: after a batch-create load of 4,000 records, once its
 * change items have settled (the server's clock driven past the settle window, as the handlers' is), the local
 * twin of the fold queue has folded them into count pages, so a list of one indexed condition reads a few pages
 * and no claims: its exact total at the cost of a folded list, a range over thousands of values included (the
 * pages inside it counted from their sums in the page list). Before they settle, the same list counts them from
 * the change items, exactly too.
 */
import path from 'node:path';
import { createHandler } from '../../../../shared/composition/pipeline';
import type { Operation } from '../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../shared/operations/batch-create';
import { createOperation } from '../../../../shared/operations/create';
import { getListOperation } from '../../../../shared/operations/get-list-operation';
import { SETTLE_MS } from '../../../../shared/storage/record-counter';
import { FIXTURES_DIR } from '../../../support/paths';
import { ServiceHarness } from '../../../support/service-harness';

const OPERATIONS: Record<string, Operation> = {
  'batch-create': batchCreateOperation,
  create: createOperation,
  'get-list': getListOperation,
};
/**
 * The clock of the handlers and of the folds beside them: it moves a millisecond each time it is read, and by what a
 * test adds to `offset`, never by itself. So the load and the first list fall within the load's settle window however
 * long the machine takes over them (on real time, a load that outlasts `SETTLE_MS` lets the folds beside the writes
 * fold its first batches before the first list runs), and the tests after it move past the window when they say so.
 */
const start = Date.now();
let ticks = 0;
let offset = 0;
const clock = () => start + offset + ++ticks;
const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'), {
  clock,
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation, { now: clock }) : undefined;
  },
});
const STATUSES = ['new', 'paid', 'new', 'shipped'];

beforeAll(async () => {
  await harness.start();
  for (let batch = 0; batch < 4; batch++) {
    const paramList = Array.from({ length: 1000 }, (_, k) => {
      const i = batch * 1000 + k;
      return { name: `item-${i}`, qty: i % 7, price: i, status: STATUSES[i % 4] };
    });
    const res = await harness.batchCreate('items', paramList, { timeStamp: clock() });
    expect(res.body.success).toBe(true);
  }
}, 120_000);
afterAll(() => harness.stop());

function lastList(): { readUnits: number; writeUnits: number } {
  const line = harness.logLines.filter((l) => l.operation === 'get-list').at(-1);
  return { readUnits: line?.readUnits as number, writeUnits: line?.writeUnits as number };
}

const newOnes = () => harness.getList('items', { status: 'new', pageSize: 5 }, { timeStamp: clock() });
const onePercent = () =>
  harness.getList(
    'items',
    { price_start: 1000, price_end: 1039, ytSortList: [{ price: 'asc' }], pageSize: 5 },
    { timeStamp: clock() },
  );

it('before the load settles, a list counts its change items: exact, at the cost of reading them', async () => {
  // The load and this list fall within the settle window of the load's first change item: nothing is folded yet.
  expect(clock() - start).toBeLessThan(SETTLE_MS);
  const res = await newOnes();
  expect(res.body.data.paging.totalCount).toBe(2000);
  // The four batches' claims carry their counts per status, so none of their values items is read (9.5 units with
  // them). 1 WU for the slot's head, made by its first list, and the quota's admission (one write, or none when the
  // environment held a token and a live slot).
  expect(lastList().readUnits).toBe(8.5);
  expect([1, 2]).toContain(lastList().writeUnits);
  expect(harness.logLines.filter((l) => l.operation === 'value-fold')).toEqual([]);
});

it('once it has settled, the fold beside the writes has folded it: the list reads a few pages', async () => {
  offset += SETTLE_MS + 2_000;
  await harness.changesSettled();
  const folds = harness.logLines.filter((l) => l.operation === 'value-fold');
  // One turn, or several when a turn's 20 s ran out on a busy machine, the last one leaving nothing.
  expect(folds.reduce((sum, l) => sum + (l.valueFoldRecords as number), 0)).toBeGreaterThanOrEqual(4000);
  expect(folds.every((l) => l.datasetCode === 'items' && l.level === 'INFO')).toBe(true);
  expect(folds.at(-1)?.left).toBe(false);

  const res = await newOnes();
  expect(res.status).toBe(200);
  expect(res.body.data.paging.totalCount).toBe(2000);
  expect(res.body.data.tableData).toHaveLength(5);
  const range = await onePercent();
  expect(range.body.data.paging.totalCount).toBe(40);
  expect(range.body.data.tableData.map((r: { price: number }) => r.price)).toEqual([1000, 1001, 1002, 1003, 1004]);
  // The page of price keys and the records read with it fill 5 or 6 read units, as their random ids fall.
  expect(lastList().readUnits).toBeLessThanOrEqual(6);
  // The quota's admission alone: one write, or none when the environment held a token and a live slot.
  expect([0, 1]).toContain(lastList().writeUnits);
}, 120_000);

it('once folded, a range over 3,000 distinct values counts its inside pages from their sums: a few read units', async () => {
  const res = await harness.getList(
    'items',
    { price_start: 500, price_end: 3499, ytSortList: [{ price: 'asc' }], pageSize: 5 },
    { timeStamp: clock() },
  );
  expect(res.status).toBe(200);
  expect(res.body.data.paging.totalCount).toBe(3000);
  expect(res.body.data.tableData.map((r: { price: number }) => r.price)).toEqual([500, 501, 502, 503, 504]);
  // The page list's parts over the range, its edge pages and the records read: 9 read units, or 10 as the records'
  // random ids fall. The same list reading every count page the range covers whole takes 31.
  expect(lastList().readUnits).toBeLessThanOrEqual(10);
}, 60_000);

it('a write after the load is folded on its own once it settles, and the total stays exact', async () => {
  const created = await harness.create(
    'items',
    { name: 'late', qty: 1, price: 9999, status: 'new' },
    { timeStamp: clock() },
  );
  expect(created.body.success).toBe(true);
  expect((await newOnes()).body.data.paging.totalCount).toBe(2001);
  const before = harness.logLines.filter((l) => l.operation === 'value-fold').length;
  offset += SETTLE_MS + 2_000;
  await harness.changesSettled();
  const folds = harness.logLines.filter((l) => l.operation === 'value-fold').slice(before);
  expect(folds.map((l) => l.valueFoldRecords)).toEqual([1]);
  expect((await newOnes()).body.data.paging.totalCount).toBe(2001);
  expect(lastList().readUnits).toBe(5);
  expect([0, 1]).toContain(lastList().writeUnits);
}, 60_000);
