/**
 * The dataset row source over the record store: what custom SQL loads into its engine. Built per request, so
 * that the reads count against that request's capacity (its log line and metrics).
 *
 * - `readRows` reads the dataset's partition with the grant's row filter (as the permissions read it) as the
 *   query's FilterExpression, so the engine only ever holds the rows get-list would show this caller; it stops
 *   at the load deadline.
 * - `changes` is the dataset's change items (storage/change-items.ts): every write claims one naming its records
 *   before it writes them, so a loaded copy catches up by reading the recent change items (consistently) and
 *   the records they name (consistently: by id, or a batch's id range), each narrowed to the caller's view like
 *   a load. A record's revision says whether the write a change item claims has landed yet.
 */
import { rowFilterScope, rowInScope } from '../access/permissions';
import type { Catalog } from '../catalog/catalog';
import { DatasetNotFoundError, QueryTimeoutError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { toApiRecord } from '../records/record-codec';
import { CLAIM_REREAD_MS, type StoredClaim } from '../storage/change-items';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { compileFilterExpression } from '../storage/filter-expression';
import type { ListReader } from '../storage/list-reader';
import { estimateRecordCount, lastIdAt, SETTLE_MS } from '../storage/record-counter';
import { revisionOf } from '../storage/record-revisions';
import { RecordAttr } from '../storage/table-definitions';
import type {
  ChangedRecord,
  DatasetChange,
  DatasetChangeFeed,
  DatasetRecord,
  DatasetRowSource,
  ReadRowsRequest,
} from './dataset-cache';

/** A change naming more records than this is read as its id range (one query) rather than by id. */
const READ_BY_RANGE_FROM = 8;

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
      rereadMs: CLAIM_REREAD_MS,
      settleMs: SETTLE_MS,
      changesSince: async (datasetCode: string, sinceMs: number): Promise<DatasetChange[]> =>
        (await this.bookkeeping.changes.after(datasetCode, lastIdAt(sinceMs), this.meter, true)).map(datasetChange),
      changesWithin: async (datasetCode, sinceMs, allowance) => {
        const changes: DatasetChange[] = [];
        const { complete } = await this.bookkeeping.changes.afterWithin(
          datasetCode,
          lastIdAt(sinceMs),
          this.meter,
          (read) => {
            for (const claim of read.slice(changes.length)) changes.push(datasetChange(claim));
            return allowance(changes);
          },
        );
        return { changes, complete };
      },
      readChanged: (datasetCode, changes, request) => this.readChanged(datasetCode, changes, request),
      // Custom SQL writes nothing: the count a list starts from, read only, and no further than the budget.
      countRecords: (datasetCode, atMost) => estimateRecordCount(this.bookkeeping, datasetCode, this.meter, atMost),
      unitsRead: () => this.meter.readUnits,
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
    if (request.watch && request.seen) {
      for (const item of items) {
        const id = item[RecordAttr.sortKey] as string;
        if (request.watch.has(id)) request.seen(id, revisionOf(item));
      }
    }
    // An inexact expression selects a superset; the matcher has the last word (a row filter compiles exactly).
    const rows = filter && !filter.exact ? items.filter((item) => rowInScope(scope, item)) : items;
    const visible = new Set(request.fields);
    return rows.map((item) => toApiRecord(dataset, item, visible));
  }

  private async readChanged(
    datasetCode: string,
    changes: readonly DatasetChange[],
    request: Omit<ReadRowsRequest, 'limit' | 'deadline'>,
  ): Promise<readonly ChangedRecord[]> {
    const dataset = this.catalog.dataset(datasetCode);
    if (!dataset) throw new DatasetNotFoundError(datasetCode);
    const scope = rowFilterScope(request.rowFilter, dataset);
    const byId = new Set<string>();
    const ranges: DatasetChange[] = [];
    for (const change of changes) {
      if (change.ids.length >= READ_BY_RANGE_FROM) ranges.push(change);
      else for (const id of change.ids) byId.add(id);
    }
    const found = await this.reader.batchGet(datasetCode, [...byId], this.meter, undefined, true);
    await Promise.all(
      ranges.map(async (change) => {
        const wanted = new Set(change.ids);
        const { items } = await this.reader.queryPartition(
          datasetCode,
          { direction: 'asc', idRange: { lower: change.ids[0], upper: change.ids.at(-1) }, consistent: true },
          this.meter,
        );
        for (const item of items) {
          const id = item[RecordAttr.sortKey] as string;
          if (wanted.has(id)) found.set(id, item);
        }
      }),
    );
    const visible = new Set(request.fields);
    return [...found.entries()].map(([id, item]) => ({
      id,
      revision: revisionOf(item),
      ...(rowInScope(scope, item) ? { row: toApiRecord(dataset, item, visible) } : {}),
    }));
  }
}

/** A change item as custom SQL's copies need it. */
function datasetChange(claim: StoredClaim): DatasetChange {
  const base = { position: claim.position, time: claim.time };
  switch (claim.kind) {
    case 'create':
      return { ...base, ids: [claim.id], revision: 1, created: 1 };
    case 'update':
      return { ...base, ids: [claim.id], revision: claim.revision, created: 0 };
    case 'batch': {
      const ids = claim.landed ? claim.ids.filter((id) => claim.landed?.has(id)) : claim.ids;
      return { ...base, ids, revision: 1, created: ids.length };
    }
  }
}
