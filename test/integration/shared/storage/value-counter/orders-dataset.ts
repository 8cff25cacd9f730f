/**
 * The `orders` dataset the per-value totals tests load (text `customer`, number `amount`, enum `status`, all
 * indexed) over dynalite: its ports on a given document client (a test may wrap it to count or fail calls), a
 * batch-create context on a clock the test moves, and each field's count slot.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { applicationCaller } from '../../../../../shared/access/caller';
import { grantView } from '../../../../../shared/access/permissions';
import { type Application, Catalog, type Dataset } from '../../../../../shared/catalog/catalog';
import type { CatalogConfig, GrantConfig } from '../../../../../shared/catalog/schema';
import { CapacityMeter } from '../../../../../shared/observability/capacity-meter';
import type { OperationPorts } from '../../../../../shared/operation/operation';
import { batchCreateOperation } from '../../../../../shared/operations/batch-create';
import type { KeyInterval } from '../../../../../shared/records/value-encoding';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { CHECK_SLACK_MS } from '../../../../../shared/storage/fold-limits';
import { IdempotencyStore } from '../../../../../shared/storage/idempotency-store';
import { countSlotKey, indexLayout } from '../../../../../shared/storage/index-attributes';
import { IndexBuildStore } from '../../../../../shared/storage/index-build-store';
import { ListReader } from '../../../../../shared/storage/list-reader';
import { RecordBatchStore } from '../../../../../shared/storage/record-batch-store';
import { SETTLE_MS } from '../../../../../shared/storage/record-counter';
import { RecordStore } from '../../../../../shared/storage/record-store';
import { countSlotValues } from '../../../../../shared/storage/value-counter';
import { type DatasetFoldOutcome, foldDatasetTotals } from '../../../../../shared/storage/value-fold';

export const ORDERS_FIELDS = ['customer', 'amount', 'status'] as const;
export type OrdersField = (typeof ORDERS_FIELDS)[number];
export interface OrderValues {
  customer: string;
  amount: number;
  status: string;
}

export interface OrdersDataset {
  ports: OperationPorts;
  /** The time the operations see (ms); the test moves it. */
  clock: { now: number };
  /** Create the records through batch-create, `chunk` per request. */
  load(rows: readonly OrderValues[], chunk?: number): Promise<void>;
  /** The count slot (`countSlotKey`) of a field's index. */
  slotOf(field: OrdersField): string;
  /** The exact total of a field's index over one key interval, now (`countSlotValues`; undefined: none kept yet). */
  total(field: OrdersField, interval: KeyInterval): Promise<number | undefined>;
  /** Move the clock past the claims' check, then fold every field's claims as the folds beside the writes do. */
  foldSettled(): Promise<DatasetFoldOutcome>;
}

export function ordersDataset(
  client: DynamoDBDocumentClient,
  names: Record<string, string>,
  label: string,
): OrdersDataset {
  const table = names.Records as string;
  const ports: OperationPorts = {
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
        accessKey: `ak-${label}-01`,
        signingSecret: `sk-${label}-secret`,
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
  const clock = { now: Date.now() };
  const context = {
    requestId: label,
    operation: 'batch-create' as const,
    caller: applicationCaller(application),
    catalog,
    dataset,
    grant,
    view: grantView(grant, dataset),
    ports,
    telemetry: { capacity: new CapacityMeter(), metric: () => {}, detail: () => {} },
    now: () => clock.now,
  };
  const layout = indexLayout(dataset);
  const slotOf = (field: OrdersField) => countSlotKey(layout.get(field) as NonNullable<ReturnType<typeof layout.get>>);
  return {
    ports,
    clock,
    async load(rows, chunk = 1000) {
      for (let first = 0; first < rows.length; first += chunk) {
        clock.now += 10;
        await batchCreateOperation.run(context, { paramList: rows.slice(first, first + chunk) });
      }
    },
    slotOf,
    total: (field, interval) =>
      countSlotValues(ports.bookkeeping, {
        datasetCode: 'orders',
        slot: slotOf(field),
        intervals: [interval],
        now: clock.now,
        meter: new CapacityMeter(),
      }),
    foldSettled() {
      clock.now += SETTLE_MS + CHECK_SLACK_MS + 1_000;
      return foldDatasetTotals(ports.bookkeeping, {
        datasetCode: 'orders',
        slots: ORDERS_FIELDS.map(slotOf),
        now: clock.now,
        meter: new CapacityMeter(),
        until: Number.POSITIVE_INFINITY,
      });
    },
  };
}
