/**
 * The dataset row source over the record store: what custom SQL loads into its engine. Built per request, so
 * that the reads count against that request's capacity (its log line and metrics).
 *
 * - `readRows` reads the dataset's partition with the grant's row filter (as the permissions read it) as the
 *   query's FilterExpression, so the engine only ever holds the rows get-list would show this caller; it stops
 *   at the load deadline.
 * - `changes` is the change log of the dataset's bookkeeping: every create and update of a dataset some query
 *   reads records the ids it wrote, so a loaded copy catches up by reading the recent change items
 *   (consistently) and the changed records (one consistent BatchGetItem), each narrowed to the caller's view
 *   like a load.
 */
import { rowFilterScope, rowInScope } from '../access/permissions';
import type { Catalog } from '../catalog/catalog';
import { DatasetNotFoundError, QueryTimeoutError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { toApiRecord } from '../records/record-codec';
import { CHANGE_REREAD_MS, EVENTUAL_READ_LAG_MS } from '../storage/change-items';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { compileFilterExpression } from '../storage/filter-expression';
import type { ListReader } from '../storage/list-reader';
import { estimateRecordCount } from '../storage/record-counter';
import type {
  DatasetChange,
  DatasetChangeFeed,
  DatasetRecord,
  DatasetRowSource,
  ReadRowsRequest,
} from './dataset-cache';

export class RecordStoreRowSource implements DatasetRowSource {
  readonly changes: DatasetChangeFeed;

  constructor(
    private readonly reader: ListReader,
    private readonly bookkeeping: DatasetBookkeeping,
    private readonly catalog: Catalog,
    private readonly meter: CapacityMeter,
    private readonly now: () => number = Date.now,
  ) {
    this.changes = {
      rereadMs: CHANGE_REREAD_MS,
      settledMs: EVENTUAL_READ_LAG_MS,
      changesSince: (datasetCode: string, sinceMs: number): Promise<DatasetChange[]> =>
        this.bookkeeping.changes.since(datasetCode, sinceMs, this.meter),
      readRowsById: (datasetCode, ids, request) => this.readRowsById(datasetCode, ids, request),
      // Custom SQL writes nothing: the count a list starts from, read only.
      countRecords: (datasetCode) => estimateRecordCount(this.bookkeeping, datasetCode, this.meter),
    };
  }

  async readRows(datasetCode: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]> {
    const dataset = this.catalog.dataset(datasetCode);
    if (!dataset) throw new DatasetNotFoundError(datasetCode);
    const scope = rowFilterScope(request.rowFilter, dataset);
    const filter = scope ? compileFilterExpression(scope) : undefined;
    const { deadline } = request;
    const { items } = await this.reader.queryPartition(
      datasetCode,
      {
        direction: 'asc',
        limit: request.limit,
        ...(filter?.expression
          ? { filter: { expression: filter.expression, names: filter.names, values: filter.values } }
          : {}),
      },
      this.meter,
      deadline
        ? () => {
            if (this.now() > deadline.at) throw new QueryTimeoutError(deadline.message);
          }
        : undefined,
    );
    // An inexact expression selects a superset; the matcher has the last word (a row filter compiles exactly).
    const rows = filter && !filter.exact ? items.filter((item) => rowInScope(scope, item)) : items;
    const visible = new Set(request.fields);
    return rows.map((item) => toApiRecord(dataset, item, visible));
  }

  private async readRowsById(
    datasetCode: string,
    ids: readonly string[],
    request: Omit<ReadRowsRequest, 'limit' | 'deadline'>,
  ): Promise<readonly DatasetRecord[]> {
    const dataset = this.catalog.dataset(datasetCode);
    if (!dataset) throw new DatasetNotFoundError(datasetCode);
    const scope = rowFilterScope(request.rowFilter, dataset);
    const found = await this.reader.batchGet(datasetCode, ids, this.meter, undefined, true);
    const visible = new Set(request.fields);
    return [...found.values()]
      .filter((item) => rowInScope(scope, item))
      .map((item) => toApiRecord(dataset, item, visible));
  }
}
