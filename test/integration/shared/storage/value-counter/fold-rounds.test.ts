/**
 * The cost of folding a bulk load into count pages, over dynalite: 10,000 records through batch-create (a text
 * field of 2,500 values, a number field with one value per record, an enum of four), folded once settled. Each
 * count page is written at most twice (a round's write, a split's mark then its part), not once per round of
 * 5,000 records, and the totals are exact.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../../bin/local/embedded-dynamo';
import { applicationCaller } from '../../../../../shared/access/caller';
import { grantView } from '../../../../../shared/access/permissions';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { type Application, Catalog, type Dataset } from '../../../../../shared/catalog/catalog';
import type { CatalogConfig, GrantConfig } from '../../../../../shared/catalog/schema';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import { batchCreateOperation } from '../../../../../shared/operations/batch-create';
import { equalityInterval, rangeInterval } from '../../../../../shared/records/value-encoding';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { IdempotencyStore } from '../../../../../shared/storage/idempotency-store';
import { countSlotKey, indexLayout } from '../../../../../shared/storage/index-attributes';
import { IndexBuildStore } from '../../../../../shared/storage/index-build-store';
import { ListReader } from '../../../../../shared/storage/list-reader';
import { RecordBatchStore } from '../../../../../shared/storage/record-batch-store';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { RecordStore } from '../../../../../shared/storage/record-store';
import { ensureTables, localTableNames } from '../../../../../shared/storage/table-setup';
import { CHECK_SLACK_MS, countSlotValues, foldDatasetTotals } from '../../../../../shared/storage/value-counter';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
});
afterAll(() => dynamo.close());

/** The client, counting the writes of each count page (by its sort key). */
function countingPageWrites(client: DynamoDBDocumentClient, writes: Map<string, number>): DynamoDBDocumentClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (command: { input: { Item?: Record<string, unknown> } }, ...rest: unknown[]) => {
        const key = command.input.Item?.['@sk'];
        if (typeof key === 'string' && 'counts' in (command.input.Item ?? {})) {
          writes.set(key, (writes.get(key) ?? 0) + 1);
        }
        return (target.send as (...args: unknown[]) => Promise<unknown>).call(target, command, ...rest);
      };
    },
  });
}

it('a fold of 10,000 records writes each count page at most twice, and its totals are exact', async () => {
  const names = localTableNames('fold-rounds');
  await ensureTables(dynamo.client, names);
  const writes = new Map<string, number>();
  const client = countingPageWrites(createDocumentClient(dynamo.client), writes);
  const table = names.Records as string;
  const ports = {
    records: new RecordStore(client, table),
    lists: new ListReader(client, table),
    bookkeeping: new DatasetBookkeeping(client, table),
    recordBatches: new RecordBatchStore(client, table),
    idempotency: new IdempotencyStore(client, table),
    indexBuilds: new IndexBuildStore(client, { records: table, catalog: names.Catalog as string }),
  };
  const catalog = new Catalog({
    applications: [
      {
        appCode: 'app',
        name: 'app',
        accessKey: 'ak-fold-rounds-01',
        signingSecret: 'sk-fold-rounds-secret',
        grants: [{ datasetCode: 'orders', operations: ['read', 'create'] }],
      },
    ],
    datasets: [
      {
        appCode: 'app',
        datasetCode: 'orders',
        name: 'orders',
        fields: [
          { name: 'customer', type: 'string', indexed: true },
          { name: 'amount', type: 'number', indexed: true },
          { name: 'status', type: 'enum', options: ['new', 'paid', 'shipped', 'void'], indexed: true },
        ],
      },
    ],
  } as CatalogConfig);
  const dataset = catalog.dataset('orders') as Dataset;
  const application = catalog.application('app') as Application;
  const grant = application.grants.get('orders') as GrantConfig;
  let clock = Date.now();
  const context = {
    requestId: 'fold-rounds',
    operation: 'batch-create' as const,
    caller: applicationCaller(application),
    catalog,
    dataset,
    grant,
    view: grantView(grant, dataset),
    ports,
    telemetry: { capacity: new CapacityMeter(), metric: () => {}, detail: () => {} },
    now: () => clock,
  };
  for (let first = 0; first < 10_000; first += 1000) {
    clock += 10;
    const paramList = Array.from({ length: 1000 }, (_, k) => {
      const i = first + k;
      return {
        customer: `c${String(i % 2500).padStart(4, '0')}`,
        amount: i,
        status: ['new', 'paid', 'shipped', 'void'][i % 4],
      };
    });
    await batchCreateOperation.run(context, { paramList });
  }
  clock += SETTLE_MS + CHECK_SLACK_MS + 1_000;
  const layout = indexLayout(dataset);
  const slotOf = (field: string) => countSlotKey(layout.get(field) as NonNullable<ReturnType<typeof layout.get>>);
  const meter = new CapacityMeter();
  writes.clear();
  const outcome = await foldDatasetTotals(ports.bookkeeping, {
    datasetCode: 'orders',
    slots: ['customer', 'amount', 'status'].map(slotOf),
    now: clock,
    meter,
    until: Number.POSITIVE_INFINITY,
  });
  expect(outcome).toEqual({ folded: 10_000, left: false });
  // 286 pages over the three fields; with rounds of a fixed 5,000 records some are written 3 times, and a page
  // once more per 5,000 records of a larger load.
  expect(writes.size).toBe(286);
  expect(Math.max(...writes.values())).toBeLessThanOrEqual(2);
  // 10,000 records over three fields: 595 write units, 0.06 per record (0.068 with rounds of 5,000 records).
  expect(meter.writeUnits).toBeLessThanOrEqual(620);

  const total = (field: string, interval: ReturnType<typeof equalityInterval>['interval']) =>
    countSlotValues(ports.bookkeeping, {
      datasetCode: 'orders',
      slot: slotOf(field),
      intervals: [interval],
      now: clock,
      meter: new CapacityMeter(),
    });
  expect(await total('status', equalityInterval('paid').interval)).toBe(2500);
  expect(await total('customer', equalityInterval('c0042').interval)).toBe(4);
  expect(
    await total('amount', rangeInterval({ value: 1000, inclusive: true }, { value: 1999, inclusive: true }).interval),
  ).toBe(1000);
}, 120_000);
