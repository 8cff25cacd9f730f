/**
 * The dataset row source over the record store: what custom SQL loads into its engine. Built per request, so
 * that the reads count against that request's capacity (its log line and metrics).
 *
 * - `readRows` reads the dataset's partition with the grant's row filter (as the permissions read it) as the
 *   query's FilterExpression, so the engine only ever holds the rows get-list would show this caller; it stops
 *   at the load deadline.
 * - `changes` is the dataset's change items (storage/change-items.ts): every write claims one naming its records
 *   before it writes them, so a loaded copy catches up by reading the recent change items (consistently) and
 *   the records they name (consistently), each narrowed to the caller's view like a load. Records created close
 *   in time (a burst of creates, a batch) are read as their id range, one Query paying by the bytes it reads
 *   (ids are ULIDs of their creation time, so the range holds the records created meanwhile: the changes name
 *   them too, or a copy applied them a moment ago); the Query stops after twice the records wanted (and a few),
 *   and what it did not reach, like ids older than their changes (a retried create) and updated records, is read
 *   by id. Either read shows each record as it is now, so a record updated or created again after its change
 *   comes out as it is. A record's revision says whether the write a change item claims has landed yet.
 * - `changes.apart()` is the same source over a meter of its own that adds into the request's: the datasets of
 *   one query are planned and loaded at once, and each weighs what its own reads cost. `changes.detached()` is the
 *   same over a meter that does not: a load that may outlive the request (background-load.ts), whose units the
 *   cache charges to the requests that wait for it (`changes.charge`).
 */
import { rowFilterScope, rowInScope } from '../access/permissions';
import type { Catalog } from '../catalog/catalog';
import { DatasetNotFoundError, QueryTimeoutError } from '../contract/errors';
import { CapacityMeter } from '../observability/capacity-meter';
import { type RecordItem, toApiRecord } from '../records/record-codec';
import { recordIdTime } from '../records/record-ids';
import { compareCodePoints } from '../records/value-encoding';
import { CLAIM_REREAD_MS, type StoredClaim } from '../storage/change-items';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { compileFilterExpression } from '../storage/filter-expression';
import type { ListReader } from '../storage/list-reader';
import { estimateRecordCount, lastIdAt, SETTLE_MS } from '../storage/record-counter';
import { revisionOf } from '../storage/record-revisions';
import { RecordAttr } from '../storage/table-definitions';
import { changedRecordReads } from './catch-up-plan';
import type {
  ChangedRecord,
  DatasetChange,
  DatasetChangeFeed,
  DatasetRecord,
  DatasetRowSource,
  ReadRowsRequest,
} from './dataset-source';

/** A range's Query reads at most this many records per record wanted in it, and `RANGE_SLACK` more. */
const RANGE_READS_PER_RECORD = 2;
const RANGE_SLACK = 16;

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
      changesSince: async (datasetCode, sinceMs, known): Promise<DatasetChange[]> => {
        const { changes } = this.bookkeeping;
        const since = lastIdAt(sinceMs);
        if (!known) return (await changes.after(datasetCode, since, this.meter, true)).map(datasetChange);
        // Before what the caller read (when the window starts earlier), and after it.
        const knownFrom = lastIdAt(known.fromMs);
        const tailAfter = [since, knownFrom, known.through ?? ''].sort(compareCodePoints).at(-1);
        const [before, after] = await Promise.all([
          sinceMs < known.fromMs ? changes.after(datasetCode, since, this.meter, true, knownFrom) : [],
          changes.after(datasetCode, tailAfter, this.meter, true),
        ]);
        return [...before, ...after].map(datasetChange);
      },
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
      apart: () =>
        new RecordStoreRowSource(this.reader, this.bookkeeping, this.catalog, new CapacityMeter(this.meter), this.now),
      detached: () =>
        new RecordStoreRowSource(this.reader, this.bookkeeping, this.catalog, new CapacityMeter(), this.now),
      charge: (units) => this.meter.addRead({ CapacityUnits: units }),
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
      (kept) => {
        request.progress?.(kept);
        if (deadline && this.now() > deadline.at) throw new QueryTimeoutError(deadline.message);
      },
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
    const plan = changedRecordReads(changes);
    const found = new Map<string, RecordItem>();
    // The records read by id are read beside the ranges; the ids a range leaves (`byId`) are read by id after them.
    const byId = new Set<string>();
    const [direct] = await Promise.all([
      this.reader.batchGet(datasetCode, plan.byId, this.meter, undefined, true),
      ...plan.ranges.map(async (range) => {
        // An id older than its changes (a create retried with the id of an earlier attempt) would stretch the range
        // over records created long before: it is read by id.
        const near = range.ids.filter((id) => {
          const recent = createdSince(id, range.fromMs - SETTLE_MS);
          if (!recent) byId.add(id);
          return recent;
        });
        const lower = near[0];
        const upper = near.at(-1);
        if (lower === undefined || upper === undefined) return;
        const limit = near.length * RANGE_READS_PER_RECORD + RANGE_SLACK;
        const wanted = new Set(near);
        const { items } = await this.reader.queryPartition(
          datasetCode,
          { direction: 'asc', idRange: { lower, upper }, consistent: true, limit },
          this.meter,
        );
        for (const item of items) {
          const id = item[RecordAttr.sortKey] as string;
          if (wanted.has(id)) found.set(id, item);
        }
        // Stopped before the range's end: the ids it did not reach are read by id.
        const reached = items.length < limit ? upper : (items.at(-1)?.[RecordAttr.sortKey] as string);
        for (const id of near) if (compareCodePoints(id, reached) > 0) byId.add(id);
      }),
    ]);
    for (const [id, item] of direct) found.set(id, item);
    if (byId.size > 0) {
      for (const [id, item] of await this.reader.batchGet(datasetCode, [...byId], this.meter, undefined, true)) {
        found.set(id, item);
      }
    }
    const visible = new Set(request.fields);
    return [...found.entries()].map(([id, item]) => ({
      id,
      revision: revisionOf(item),
      ...(rowInScope(scope, item) ? { row: toApiRecord(dataset, item, visible) } : {}),
    }));
  }
}

/** Whether a record id is a ULID of a time at or after `ms`. */
function createdSince(id: string, ms: number): boolean {
  try {
    return recordIdTime(id) >= ms;
  } catch {
    return false;
  }
}

/** A change item as custom SQL's copies need it. */
function datasetChange(claim: StoredClaim): DatasetChange {
  const base = { position: claim.position, time: claim.time };
  switch (claim.kind) {
    case 'create':
      return { ...base, ids: [claim.id], revision: 1, created: 1 };
    case 'update':
      // A direct update whose writer has not said its revision yet: its record is read again until it settles.
      return { ...base, ids: [claim.id], revision: claim.revision ?? Number.MAX_SAFE_INTEGER, created: 0 };
    case 'batch': {
      const ids = claim.landed ? claim.ids.filter((id) => claim.landed?.has(id)) : claim.ids;
      return { ...base, ids, revision: 1, created: ids.length };
    }
  }
}
