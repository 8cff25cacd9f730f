/**
 * A dropped index leaves nothing of its totals behind (docs/totals-and-changes.md, "What the store keeps"): orders
 * with an indexed enum (`status`) and an indexed field of one value per record (`amount`), their totals folded into
 * count pages, lists answering exact totals; then a configuration without `amount`'s index. After the job, a scan of
 * the records table finds no item of `amount`'s totals (head, pages, page list, a batch's values in its slot), and
 * the records and `status`'s items exactly as before; lists on `status` are still exact, and indexing `amount` again
 * builds an index of its own that answers exactly; `status` dropped and indexed again is counted afresh by its job,
 * under a slot of its own. A job whose end dies part-way through the removal finishes it when it runs again (here
 * `npm start`'s runner). Over HTTP, the index job driven step by step, with a batch of deletes per step.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchWriteCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type AppliedIndex, parseIndexRegistry } from '../../../../../shared/catalog/index-registry';
import type { CatalogConfig } from '../../../../../shared/catalog/schema';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { LocalIndexRunner } from '../../../../../shared/indexing/local-index-runner';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { readCatalogItem } from '../../../../../shared/storage/catalog-item';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { countSlotKey, indexSlot } from '../../../../../shared/storage/index-attributes';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { foldDatasetTotals } from '../../../../../shared/storage/value-fold';
import { interceptSend, type SentCommand } from '../../../../support/intercept-send';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';

const STATUSES = ['new', 'paid', 'shipped'];
const RECORDS = 2_400;

/** The fixture's `orders` with two indexed fields: `status` (three values) and `amount` (one value per record). */
function configWith(indexed: readonly string[]): CatalogConfig {
  const config = structuredClone(loadConfigFile(path.join(FIXTURES_DIR, 'live-configuration-config.json')));
  for (const field of config.datasets[0]?.fields ?? []) field.indexed = indexed.includes(field.name);
  return config;
}

const dir = mkdtempSync(path.join(tmpdir(), 'drop-totals-'));
const configFile = path.join(dir, 'config.json');
writeFileSync(configFile, JSON.stringify(configWith(['status', 'amount'])));

/** When set, the jobs' first delete batch of totals items lands, then its step dies. */
let crashFirstDelete = false;
let totalsDeletes = 0;
function isTotalsDelete(command: SentCommand): boolean {
  if (!(command instanceof BatchWriteCommand)) return false;
  const [first] = Object.values(command.input.RequestItems ?? {})[0] ?? [];
  const sortKey = first?.DeleteRequest?.Key?.['@sk'];
  return typeof sortKey === 'string' && /^(value-|change-slot#)/.test(sortKey);
}
function crashing(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return interceptSend(client, async (command, send) => {
    if (!isTotalsDelete(command)) return send();
    totalsDeletes += 1;
    const answer = await send();
    if (crashFirstDelete && totalsDeletes === 1) throw new Error('the job died after its deletes landed');
    return answer;
  });
}

const live = new LiveConfiguration(configFile, { pageSize: 150, recordsPerSegment: 300, jobsClient: crashing });
const rows: { status: string; amount: number }[] = [];

async function registryOf(): Promise<AppliedIndex[]> {
  const { client, tables } = live.harness.dynamo();
  const registry = parseIndexRegistry((await readCatalogItem(client, tables.catalog))?.indexes);
  return registry?.orders?.indexes ?? [];
}

/** The count slot of the registry's index of `field`. */
async function slotOf(field: string): Promise<string> {
  const index = (await registryOf()).find((i) => i.field === field && i.slot !== undefined);
  if (!index || index.slot === undefined) throw new Error(`no index of ${field}`);
  return countSlotKey(indexSlot({ field, slot: index.slot, build: index.build }));
}

/** Fold every settled claim of these slots into their pages (as the fold beside the writes does 31 s later). */
async function fold(slots: string[]): Promise<void> {
  const { client, tables } = live.harness.dynamo();
  const bookkeeping = new DatasetBookkeeping(client, tables.records);
  const outcome = await foldDatasetTotals(bookkeeping, {
    datasetCode: 'orders',
    slots,
    now: Date.now() + SETTLE_MS + 5_000,
    meter: new CapacityMeter(),
    until: performance.now() + 60_000,
  });
  expect(outcome.left).toBe(false);
}

/** Every item of the records table: its sort key, in the partition it is in (a record, or `meta`). */
async function scanKeys(): Promise<{ records: number; meta: string[] }> {
  const { client, tables } = live.harness.dynamo();
  const meta: string[] = [];
  let records = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tables.records, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) {
      if (String(item['@pk']).startsWith('ds#')) records += 1;
      else if (String(item['@pk']).startsWith('meta#')) meta.push(String(item['@sk']));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { records, meta: meta.sort() };
}

/** The sort keys of a slot's items, by kind. */
function itemsOf(slot: string, meta: readonly string[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const key of meta) {
    const kind = ['change-slot#', 'value-page#', 'value-list#', 'value-pages#', 'value-head#'].find(
      (prefix) => key === `${prefix}${slot}` || key.startsWith(`${prefix}${slot}#`),
    );
    if (kind) kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

async function total(paramMap: Record<string, unknown>): Promise<number> {
  const answer = await live.harness.getList('orders', { ...paramMap, pageSize: 5 });
  expect([answer.status, answer.body.errorMsg]).toEqual([200, undefined]);
  return answer.body.data.paging.totalCount as number;
}

const expected = (match: (row: { status: string; amount: number }) => boolean) => rows.filter(match).length;

beforeAll(async () => {
  await live.start();
  for (let batch = 0; batch < RECORDS / 600; batch++) {
    const paramList = Array.from({ length: 600 }, (_, k) => {
      const i = batch * 600 + k;
      return { customer: `c-${i}`, status: STATUSES[i % 3] as string, amount: i * 1.25 };
    });
    const created = await live.harness.batchCreate('orders', paramList);
    expect(created.body.success).toBe(true);
    rows.push(...paramList.map(({ status, amount }) => ({ status, amount })));
  }
}, 120_000);
afterAll(async () => {
  await live.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('removes every item of a dropped index, keeps the others, and indexes it afresh when it is indexed again', async () => {
  const status = await slotOf('status');
  const amount = await slotOf('amount');
  await fold([status, amount]);
  expect(await total({ status: 'paid' })).toBe(800);
  expect(await total({ amount_start: 100, amount_end: 199.99 })).toBe(80);

  const before = await scanKeys();
  expect(before.records).toBe(RECORDS);
  // Both slots hold a head, a list part, count pages and the two batches' values.
  expect(itemsOf(status, before.meta)).toEqual({
    'change-slot#': 4,
    'value-head#': 1,
    'value-list#': 1,
    'value-page#': 1,
  });
  const amountItems = itemsOf(amount, before.meta);
  expect(amountItems).toEqual({ 'change-slot#': 4, 'value-head#': 1, 'value-list#': 1, 'value-page#': 60 });

  const plan = await live.apply(configWith(['status']));
  expect(plan.datasets[0]?.indexesToDrop).toEqual([{ field: 'amount', records: RECORDS }]);
  crashFirstDelete = true;
  await expect(live.runIndexJobs()).rejects.toThrow('the job died after its deletes landed');
  crashFirstDelete = false;
  // Killed after its first batch of 25 deletes: the index is still being dropped, 41 of its 66 items are left.
  const cut = await scanKeys();
  expect(Object.values(itemsOf(amount, cut.meta)).reduce((a, b) => a + b, 0)).toBe(41);
  expect((await registryOf()).map((i) => [i.field, i.state])).toEqual([
    ['amount', 'dropping'],
    ['status', 'complete'],
  ]);
  // `npm start`'s runner takes the job over, in turns of one batch (25, then 16): it finishes the removal.
  const errors: unknown[] = [];
  const runner = new LocalIndexRunner(live.jobs(), {
    concurrency: 1,
    segmentBudgetMs: 0,
    retryAfterMs: 0,
    onError: (error) => errors.push(error),
  });
  const deletesBefore = totalsDeletes;
  await runner.start();
  expect(errors).toEqual([]);
  expect(totalsDeletes - deletesBefore).toBe(2);

  const after = await scanKeys();
  expect(after.records).toBe(RECORDS);
  expect(itemsOf(amount, after.meta)).toEqual({});
  expect(after.meta.filter((key) => key.includes(amount))).toEqual([]);
  // Everything else is as it was: the 66 items of `amount` fewer.
  expect(after.meta).toEqual(before.meta.filter((key) => !key.includes(amount)));
  expect(after.meta.length).toBe(before.meta.length - 66);
  expect((await registryOf()).map((i) => [i.field, i.state])).toEqual([['status', 'complete']]);

  for (const value of STATUSES) expect(await total({ status: value })).toBe(800);

  // Indexed again: a new build under a slot of its own (a field of one value per record is not counted by its job:
  // its totals count its index keys).
  await live.apply(configWith(['status', 'amount']));
  await live.runIndexJobs();
  const again = await slotOf('amount');
  expect(again).not.toBe(amount);
  expect(await total({ amount_start: 100, amount_end: 199.99 })).toBe(80);
  expect(await total({ amount: 250 })).toBe(1);
  expect(await total({ amount_start: 1000 })).toBe(expected((row) => row.amount >= 1000));
  expect(await total({ status: 'new' })).toBe(800);
  expect(itemsOf(amount, (await scanKeys()).meta)).toEqual({});
}, 180_000);

it('drops an enum whose totals its rebuild counts afresh', async () => {
  const status = await slotOf('status');
  const before = await scanKeys();
  expect(itemsOf(status, before.meta)).toEqual({
    'change-slot#': 4,
    'value-head#': 1,
    'value-list#': 1,
    'value-page#': 1,
  });

  await live.apply(configWith(['amount']));
  await live.runIndexJobs();
  const after = await scanKeys();
  expect(after.records).toBe(RECORDS);
  expect(after.meta).toEqual(before.meta.filter((key) => !key.includes(status)));
  expect(after.meta.length).toBe(before.meta.length - 7);

  await live.apply(configWith(['status', 'amount']));
  await live.runIndexJobs();
  const again = await slotOf('status');
  expect(again).not.toBe(status);
  // Counted by its job over the 1,200 records: its totals answer from its own pages.
  expect((await registryOf()).find((i) => i.field === 'status')?.totalsFrom).toMatch(/^[0-9A-Z]{26}$/);
  expect(itemsOf(again, (await scanKeys()).meta)).toEqual({ 'value-head#': 1, 'value-list#': 1, 'value-page#': 1 });
  expect(itemsOf(status, (await scanKeys()).meta)).toEqual({});
  for (const value of STATUSES) expect(await total({ status: value })).toBe(800);
  expect(await total({ status_in: ['new', 'paid'] })).toBe(1_600);
}, 180_000);
