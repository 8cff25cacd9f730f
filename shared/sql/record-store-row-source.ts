/**
 * The dataset row source over the record store: what custom SQL loads into its engine. Built per request, so
 * that the reads count against that request's capacity (its log line and metrics).
 *
 * Two things the record store cannot do yet shape this adapter, and both fail safe:
 * - it keeps no per-dataset version that writes bump, so `version` answers "unknown" and every query reads
 *   its datasets afresh (correct, never stale, but uncached: the cost of a partition read per query);
 * - it cannot apply a grant's row filter, so a dataset reached through a grant with a `rowFilter` is refused
 *   (1006) rather than loaded whole, which would show the query rows get-list hides.
 */
import type { Catalog } from '../catalog/catalog';
import { AccessDeniedError, DatasetNotFoundError } from '../http/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { toApiRecord } from '../records/record-codec';
import type { RecordStore } from '../records/record-store';
import type { DatasetRecord, DatasetRowSource, ReadRowsRequest } from './dataset-cache';

export class RecordStoreRowSource implements DatasetRowSource {
  constructor(
    private readonly records: RecordStore,
    private readonly catalog: Catalog,
    private readonly meter: CapacityMeter,
  ) {}

  async version(): Promise<undefined> {
    return undefined;
  }

  async readRows(datasetCode: string, request: ReadRowsRequest): Promise<readonly DatasetRecord[]> {
    if (request.rowFilter && Object.keys(request.rowFilter).length > 0) {
      throw new AccessDeniedError(
        `custom SQL cannot read dataset '${datasetCode}' through a grant with a row filter; use get-list`,
      );
    }
    const dataset = this.catalog.dataset(datasetCode);
    if (!dataset) throw new DatasetNotFoundError(datasetCode);
    const items = await this.records.listNewestFirst(datasetCode, { offset: 0, limit: request.limit }, this.meter);
    const visible = new Set(request.fields);
    return items.map((item) => toApiRecord(dataset, item, visible));
  }
}
