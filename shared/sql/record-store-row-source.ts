/**
 * The dataset row source over the record store: what custom SQL loads into its engine. Built per request, so
 * that the reads count against that request's capacity (its log line and metrics).
 *
 * - `version` is the dataset's write count, bumped by every create and update of a dataset some query reads;
 *   the cache reuses a loaded table while it is unchanged.
 * - `readRows` reads the dataset's partition with the grant's row filter (as the permissions read it) as the
 *   query's FilterExpression, so the engine only ever holds the rows get-list would show this caller.
 */
import type { Catalog } from '../catalog/catalog';
import { DatasetNotFoundError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { rowFilterScope, rowInScope } from '../permissions/permissions';
import type { DatasetBookkeeping } from '../records/dataset-bookkeeping';
import { compileFilterExpression } from '../records/filter-expression';
import type { ListReader } from '../records/list-reader';
import { toApiRecord } from '../records/record-codec';
import type { DatasetRecord, DatasetRowSource, ReadRowsRequest } from './dataset-cache';

export class RecordStoreRowSource implements DatasetRowSource {
  constructor(
    private readonly reader: ListReader,
    private readonly bookkeeping: DatasetBookkeeping,
    private readonly catalog: Catalog,
    private readonly meter: CapacityMeter,
  ) {}

  version(datasetCode: string): Promise<number> {
    return this.bookkeeping.readVersion(datasetCode, this.meter);
  }

  async readRows(datasetCode: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]> {
    const dataset = this.catalog.dataset(datasetCode);
    if (!dataset) throw new DatasetNotFoundError(datasetCode);
    const scope = rowFilterScope(request.rowFilter, dataset);
    const filter = scope ? compileFilterExpression(scope) : undefined;
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
    );
    // An inexact expression selects a superset; the matcher has the last word (a row filter compiles exactly).
    const rows = filter && !filter.exact ? items.filter((item) => rowInScope(scope, item)) : items;
    const visible = new Set(request.fields);
    return rows.map((item) => toApiRecord(dataset, item, visible));
  }
}
