/**
 * Runs a list plan against the record store: reads the access path, applies the residual filter, orders,
 * counts and cuts the page. Costs, per plan kind:
 *
 * - unfiltered: the total from the record counter (`record-counter.ts`); only the page is read — from the
 *   base table in id order, starting at a cached page start when there is one (`page-start-cache.ts`), or
 *   from the sort field's index (keys up to the page, then BatchGetItem of the page).
 * - index path with per-value totals (one indexed condition, nothing else to check; `countPath`): the total
 *   from the slot's counts (`storage/value-counter.ts`), and only the page's keys, up to the page: in the
 *   index's order, or per value merged by id; a range listed in id order reads the partition newest first
 *   through the range's FilterExpression when that costs less than its keys. Conditions on several indexed
 *   fields start from the one the counts say matches fewest, or answer 2001 before reading when even that one
 *   matches more than the budget reads.
 * - index path otherwise: every matching key is read (keys only, which is what an exact total costs anyway),
 *   then BatchGetItem of the page's records only; of all candidates only when a residual filter or an
 *   in-memory sort needs their values. A sort on another indexed field (`sortPath`) reads that index in order,
 *   keeping the keys whose ids matched, until the page is complete, under a cap of what reading the candidates'
 *   items would cost (past it, the items are read after all).
 * - partition path: the partition (or an id range of it) with the residual as a FilterExpression.
 *
 * Every read that can grow with the dataset runs under the read budget; crossing it answers 2001 and names
 * the fields an index would serve. Totals' own reads (the record counter's, per-value counts') are not the
 * plan's and are not charged to it.
 */
import { QueryTimeoutError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { matchesFilter, sortItems } from '../records/filter-matcher';
import { allOf, type Filter, type ListQuery } from '../records/list-query';
import type { RecordItem } from '../records/record-codec';
import { compareCodePoints, fullInterval, isOneValueInterval, isTruncatedKey } from '../records/value-encoding';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { compileFilterExpression } from '../storage/filter-expression';
import { type IndexKey, type ListReader, ReadCapExceeded, type ReadGuard } from '../storage/list-reader';
import { countRecords, estimateRecordCount } from '../storage/record-counter';
import type { PageStartCache } from './page-start-cache';
import type { IndexPath, Intersection, ListPlan } from './query-planner';

export interface ListExecution {
  /** Where the list's reads go. */
  store: ListReader;
  /** Where the record count's checkpoint is kept. */
  bookkeeping: DatasetBookkeeping;
  datasetCode: string;
  meter: CapacityMeter;
  now: number;
  /** Read units this list may spend. */
  readBudget: number;
  pageStarts: PageStartCache;
  /**
   * Fields an error message may name: those of the caller's own filter. A grant's row filter is part of the
   * query but never named to the caller (docs/interface.md §6). Undefined: every field may be named.
   */
  nameable?: ReadonlySet<string>;
  /** The exact number of records an index path's intervals hold, from per-value totals (undefined: not kept). */
  countPath?: (path: IndexPath) => Promise<number | undefined>;
}

export interface ListResult {
  items: RecordItem[];
  totalCount: number;
}

/** Execute `plan` (made by `planListQuery` for `query`). */
export async function executeListPlan(plan: ListPlan, query: ListQuery, run: ListExecution): Promise<ListResult> {
  const budget = { start: run.meter.readUnits };
  const guard: ReadGuard = () => {
    if (run.meter.readUnits - budget.start > run.readBudget) throw budgetExceeded(plan, run.readBudget, run.nameable);
  };
  const executor = new PlanExecutor(plan, query, run, guard, budget);
  return plan.unfiltered ? executor.unfiltered() : executor.filtered();
}

/** 2001 for conditions on several indexed fields of which even the narrowest matches too many records. */
function tooBroad(
  candidates: readonly Intersection[],
  narrowest: number,
  matches: number,
  budget: number,
  nameable?: ReadonlySet<string>,
): QueryTimeoutError {
  const fields = [...new Set(candidates.map((candidate) => candidate.path.field))].filter(
    (name) => !nameable || nameable.has(name),
  );
  const field = (candidates[narrowest] as Intersection).path.field;
  const named = fields.map((name) => `'${name}'`).join(' and ');
  const which = !nameable || nameable.has(field) ? `the narrowest, on '${field}', ` : 'the narrowest ';
  return new QueryTimeoutError(
    `the query would read more than ${budget} capacity units: no index serves ${named || 'these conditions'} together, and ` +
      `${which}matches ${matches} records; add a narrower condition on an indexed field`,
  );
}

/** A list read past its budget (2001); names the fields without a complete index that the caller may see. */
export class ListBudgetExceeded extends QueryTimeoutError {
  constructor(
    readonly budget: number,
    readonly unindexedFields: readonly string[],
    message = ListBudgetExceeded.advise(budget, unindexedFields),
  ) {
    super(message);
  }

  static advise(budget: number, fields: readonly string[]): string {
    const named = fields.map((name) => `'${name}'`).join(', ');
    const advice = named
      ? `no index serves ${named}: mark ${fields.length > 1 ? 'one of them' : 'it'} as indexed in the dataset, or add a condition on an indexed field`
      : 'add a narrower condition on an indexed field';
    return `the query would read more than ${budget} capacity units; ${advice}`;
  }
}

function budgetExceeded(plan: ListPlan, budget: number, nameable?: ReadonlySet<string>): ListBudgetExceeded {
  return new ListBudgetExceeded(
    budget,
    plan.unindexedFields.filter((name) => !nameable || nameable.has(name)),
  );
}

/** What BatchGetItem charges per record of up to 4 KB (eventually consistent). */
const ITEM_READ_UNITS = 0.5;
/** Index keys one read unit returns, about (keys of 70 bytes, 8 KB per unit eventually consistent). */
const KEYS_PER_UNIT = 110;
/** What a record read through a FilterExpression is assumed to cost when choosing a way (records up to 1 KB). */
const SCANNED_ITEM_UNITS = 1 / 8;

class PlanExecutor {
  /** The plan's residual, plus the conditions of intersections that were given up. */
  private residual: Filter;

  constructor(
    private readonly plan: ListPlan,
    private readonly query: ListQuery,
    private readonly run: ListExecution,
    private readonly guard: ReadGuard,
    /** Where the budget's count starts: the record count's tail read is not the plan's and is not charged. */
    private readonly budget: { start: number },
  ) {
    this.residual = plan.residual;
  }

  private page<T>(all: T[]): T[] {
    return all.slice(this.query.offset, this.query.offset + this.query.limit);
  }

  private async fetchInOrder(ids: string[], guard?: ReadGuard): Promise<RecordItem[]> {
    if (ids.length === 0) return [];
    const found = await this.run.store.batchGet(this.run.datasetCode, ids, this.run.meter, guard);
    return ids.map((id) => found.get(id)).filter((item): item is RecordItem => item !== undefined);
  }

  /** No filter: count from the counter, read only up to the page. */
  async unfiltered(): Promise<ListResult> {
    const { store, bookkeeping, datasetCode, meter, now } = this.run;
    const totalCount = await countRecords(bookkeeping, datasetCode, now, meter);
    this.budget.start = meter.readUnits;
    if (this.query.offset >= totalCount) return { items: [], totalCount };
    const { path, order } = this.plan;
    if (path.kind === 'partition' && order === 'path') {
      return { items: await this.partitionPage(totalCount, path.direction), totalCount };
    }
    if (path.kind === 'index' && order === 'path') {
      const keys = await store.queryIndexKeys(
        datasetCode,
        path,
        fullInterval(),
        path.direction,
        { limit: this.query.offset + this.query.limit, guard: this.guard },
        meter,
      );
      if (!keys.some((k) => isTruncatedKey(k.key, k.id))) {
        return { items: await this.fetchInOrder(this.page(keys).map((k) => k.id)), totalCount };
      }
      // Long values share a truncated key prefix and are ordered by id there: sort the real values.
    }
    const { items } = await store.queryPartition(datasetCode, { direction: 'asc' }, meter, this.guard);
    return { items: this.page(sortItems(items, this.plan.sort)), totalCount };
  }

  /** The page of an id-ordered unfiltered list, from the cached start of the page when there is one. */
  private async partitionPage(totalCount: number, direction: 'asc' | 'desc'): Promise<RecordItem[]> {
    const { store, datasetCode, meter, pageStarts } = this.run;
    const { offset, limit } = this.query;
    const start = offset === 0 ? undefined : pageStarts.get(datasetCode, direction, offset, totalCount);
    const read = await store.queryPartition(
      datasetCode,
      start ? { direction, limit, startAfter: start } : { direction, limit: offset + limit },
      meter,
      this.guard,
    );
    if (read.next) pageStarts.set(datasetCode, direction, offset + limit, totalCount, read.next);
    return start ? read.items : read.items.slice(offset);
  }

  async filtered(): Promise<ListResult> {
    const { path } = this.plan;
    if (path.kind === 'ids') {
      const items = await this.fetchInOrder(path.ids, this.guard);
      return this.finish(
        items.filter((item) => matchesFilter(item, this.plan.residual)),
        false,
      );
    }
    if (path.kind === 'partition') {
      const compiled = compileFilterExpression(this.plan.residual);
      const read = await this.run.store.queryPartition(
        this.run.datasetCode,
        {
          direction: path.direction,
          ...(path.idRange ? { idRange: path.idRange } : {}),
          ...(compiled.expression
            ? { filter: { expression: compiled.expression, names: compiled.names, values: compiled.values } }
            : {}),
        },
        this.run.meter,
        this.guard,
      );
      const items = compiled.exact ? read.items : read.items.filter((item) => matchesFilter(item, this.plan.residual));
      return this.finish(items, this.plan.order === 'path');
    }
    if (this.run.countPath) {
      const counted = await this.countedIndexList(path);
      if (counted) return counted;
    }
    const keys = await this.narrowByIntersections(await this.indexKeys(path));
    const truncated = keys.some((k) => isTruncatedKey(k.key, k.id));
    const ordered = this.plan.order === 'path' && !truncated;
    const residual = this.residual.op !== 'and' || this.residual.items.length > 0;
    if (!residual && ordered) {
      return { items: await this.fetchInOrder(this.page(keys).map((k) => k.id)), totalCount: keys.length };
    }
    if (!residual && this.plan.sortPath && !ordered) {
      const page = await this.pageInSortOrder(this.plan.sortPath, keys);
      if (page) return { items: await this.fetchInOrder(page), totalCount: keys.length };
    }
    if (!residual && this.plan.order === 'ids') {
      // The order is the id alone: the last key of the complete sort.
      const idDirection = this.plan.sort[this.plan.sort.length - 1]?.direction === 'asc' ? 1 : -1;
      const ids = keys.map((k) => k.id).sort((a, b) => idDirection * compareCodePoints(a, b));
      return { items: await this.fetchInOrder(this.page(ids)), totalCount: keys.length };
    }
    const items = await this.fetchInOrder(
      keys.map((k) => k.id),
      this.guard,
    );
    return this.finish(
      items.filter((item) => matchesFilter(item, this.residual)),
      ordered,
    );
  }

  /**
   * An index path's list with its total from per-value totals, reading only up to the page; undefined when the
   * totals cannot answer (not kept, a residual to check, an order only the items give).
   */
  private async countedIndexList(path: IndexPath): Promise<ListResult | undefined> {
    const residual = this.plan.residual.op !== 'and' || this.plan.residual.items.length > 0;
    const countPath = this.run.countPath;
    if (residual || !countPath) return undefined;
    if (this.plan.intersections.length > 0) return this.fromNarrowest(path, countPath);
    const totalCount = await countPath(path);
    if (totalCount === undefined) return undefined;
    this.budget.start = this.run.meter.readUnits;
    const want = this.query.offset + this.query.limit;
    if (totalCount === 0 || this.query.offset >= totalCount) return { items: [], totalCount };
    if (this.plan.order === 'path') {
      const keys: IndexKey[] = [];
      const intervals = path.direction === 'asc' ? path.intervals : [...path.intervals].reverse();
      for (const interval of intervals) {
        if (keys.length >= want) break;
        keys.push(
          ...(await this.run.store.queryIndexKeys(
            this.run.datasetCode,
            path,
            interval,
            path.direction,
            { limit: want - keys.length, guard: this.guard },
            this.run.meter,
          )),
        );
      }
      // Long values share a truncated key prefix and are ordered by id there: their order needs their items.
      if (keys.some((k) => isTruncatedKey(k.key, k.id))) return undefined;
      return { items: await this.fetchInOrder(this.page(keys).map((k) => k.id)), totalCount };
    }
    if (this.plan.order !== 'ids') return undefined;
    const direction = this.plan.sort[this.plan.sort.length - 1]?.direction === 'asc' ? 'asc' : 'desc';
    if (path.intervals.every(isOneValueInterval)) {
      // Each value's keys are in id order: the first `want` of each, merged, hold the page.
      const lists = await Promise.all(
        path.intervals.map((interval) =>
          this.run.store.queryIndexKeys(
            this.run.datasetCode,
            path,
            interval,
            direction,
            { limit: want, guard: this.guard },
            this.run.meter,
          ),
        ),
      );
      const sign = direction === 'asc' ? 1 : -1;
      const ids = lists
        .flat()
        .map((k) => k.id)
        .sort((a, b) => sign * compareCodePoints(a, b));
      return { items: await this.fetchInOrder(this.page(ids)), totalCount };
    }
    return this.scannedIdOrder(totalCount, direction);
  }

  /**
   * A range listed in id order: the partition in that order through the range's FilterExpression, when the
   * records it would read before filling the page cost less than the range's keys; undefined otherwise.
   */
  private async scannedIdOrder(totalCount: number, direction: 'asc' | 'desc'): Promise<ListResult | undefined> {
    const { store, bookkeeping, datasetCode, meter } = this.run;
    const want = this.query.offset + this.query.limit;
    const records = await estimateRecordCount(bookkeeping, datasetCode, meter);
    this.budget.start = meter.readUnits;
    const scanned = Math.ceil((want * Math.max(records, totalCount)) / totalCount);
    const compiled = compileFilterExpression(allOf(...this.plan.served));
    if (!compiled.exact || !compiled.expression || scanned * SCANNED_ITEM_UNITS >= totalCount / KEYS_PER_UNIT) {
      return undefined;
    }
    const read = await store.queryPartition(
      datasetCode,
      {
        direction,
        limit: want,
        itemsPerCall: Math.min(1000, Math.ceil(scanned * 1.5)),
        filter: { expression: compiled.expression, names: compiled.names, values: compiled.values },
      },
      meter,
      this.guard,
    );
    return { items: this.page(read.items), totalCount };
  }

  /**
   * Conditions on several indexed fields: the counts say which matches fewest; its keys are read and the others
   * narrow them, each by its keys or on the candidates' items, whichever costs less. 2001 before anything is read
   * when even that costs more than the budget.
   */
  private async fromNarrowest(
    path: IndexPath,
    countPath: (path: IndexPath) => Promise<number | undefined>,
  ): Promise<ListResult | undefined> {
    const candidates: Intersection[] = [{ path, served: this.plan.served }, ...this.plan.intersections];
    const counts = await Promise.all(candidates.map((candidate) => countPath(candidate.path)));
    if (counts.some((count) => count === undefined)) return undefined;
    let narrowest = 0;
    counts.forEach((count, i) => {
      if ((count as number) < (counts[narrowest] as number)) narrowest = i;
    });
    const fewest = counts[narrowest] as number;
    this.budget.start = this.run.meter.readUnits;
    if (fewest === 0) return { items: [], totalCount: 0 };
    // The narrowest's keys, then each other condition checked by its keys or by the candidates' items, the cheaper.
    const others = counts.filter((_, i) => i !== narrowest) as number[];
    const cost =
      fewest / KEYS_PER_UNIT +
      others.reduce((sum, count) => sum + Math.min(count / KEYS_PER_UNIT, fewest * ITEM_READ_UNITS), 0);
    if (cost > this.run.readBudget) {
      throw tooBroad(candidates, narrowest, fewest, this.run.readBudget, this.run.nameable);
    }
    // The others narrow the narrowest's keys by their own keys where that is the cheaper check, else on the items.
    const driver = candidates[narrowest] as Intersection;
    const rest = candidates.filter((_, i) => i !== narrowest);
    const byKeys = rest.filter((_, i) => (others[i] as number) / KEYS_PER_UNIT <= fewest * ITEM_READ_UNITS);
    const onItems = rest.filter((candidate) => !byKeys.includes(candidate)).flatMap((candidate) => candidate.served);
    const plan: ListPlan = {
      ...this.plan,
      path: driver.path,
      served: driver.served,
      intersections: byKeys,
      residual: allOf(this.plan.residual, ...onItems),
      // Another path's order is not this one's: unless the ids alone decide it, the items do.
      order: narrowest === 0 || this.plan.order !== 'path' ? this.plan.order : 'items',
    };
    const run = { ...this.run };
    delete run.countPath;
    return new PlanExecutor(plan, this.query, run, this.guard, this.budget).filtered();
  }

  /**
   * Keep the keys whose ids the other indexed conditions also find. Each such read is capped at what
   * fetching the remaining candidates' items would cost (0.5 units each); past that cap its conditions are
   * checked on the items instead, so a broad condition never costs more than twice the cheaper way.
   */
  private async narrowByIntersections(keys: IndexKey[]): Promise<IndexKey[]> {
    let remaining = keys;
    for (const intersection of this.plan.intersections) {
      if (remaining.length === 0) break;
      try {
        const other = await this.indexKeys(intersection.path, remaining.length * ITEM_READ_UNITS);
        const ids = new Set(other.map((k) => k.id));
        remaining = remaining.filter((k) => ids.has(k.id));
      } catch (error) {
        if (!(error instanceof ReadCapExceeded)) throw error;
        this.residual = allOf(this.residual, ...intersection.served);
      }
    }
    return remaining;
  }

  /**
   * The page's ids in the list's order: the sort field's index read in order, keeping the ids the filter found,
   * until the page is complete. Undefined when that would cost more than reading every candidate's item (0.5
   * units each), or when long values share a truncated key (their group is not in value order).
   */
  private async pageInSortOrder(sortPath: IndexPath, keys: IndexKey[]): Promise<string[] | undefined> {
    const matching = new Set(keys.map((k) => k.id));
    const wanted = Math.min(this.query.offset + this.query.limit, matching.size);
    if (wanted <= this.query.offset) return [];
    try {
      const ordered = await this.run.store.queryIndexKeys(
        this.run.datasetCode,
        sortPath,
        fullInterval(),
        sortPath.direction,
        {
          keep: (id) => matching.has(id),
          limit: wanted,
          guard: this.guard,
          maxUnits: matching.size * ITEM_READ_UNITS,
        },
        this.run.meter,
      );
      if (ordered.some((k) => isTruncatedKey(k.key, k.id))) return undefined;
      return this.page(ordered).map((k) => k.id);
    } catch (error) {
      if (error instanceof ReadCapExceeded) return undefined;
      throw error;
    }
  }

  /** All keys of the index path's intervals, in the path's order; the intervals are read in parallel. */
  private async indexKeys(path: IndexPath, maxUnits?: number): Promise<IndexKey[]> {
    const intervals = path.direction === 'asc' ? path.intervals : [...path.intervals].reverse();
    const lists = await Promise.all(
      intervals.map((interval) =>
        this.run.store.queryIndexKeys(
          this.run.datasetCode,
          path,
          interval,
          path.direction,
          maxUnits === undefined ? { guard: this.guard } : { guard: this.guard, maxUnits },
          this.run.meter,
        ),
      ),
    );
    return lists.flat();
  }

  /** Count the matches, order them unless the read already did, and cut the page. */
  private finish(items: RecordItem[], alreadyOrdered: boolean): ListResult {
    const ordered = alreadyOrdered ? items : sortItems(items, this.plan.sort);
    return { items: this.page(ordered), totalCount: items.length };
  }
}
