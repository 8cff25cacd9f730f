/**
 * The query planner: a pure function from a parsed list query and the dataset's index layout to a plan that
 * says how to read (which access path and key intervals), what to check on the items afterwards (the
 * residual filter) and where the order comes from (the access path itself, the ids, or an in-memory sort).
 * It does no I/O, so every choice is unit-tested; `list-executor.ts` runs plans.
 *
 * Access paths, cheapest first:
 * - `ids`: `id` equality or `id_in`: BatchGetItem of those records.
 * - `index`: one generic index (keys only) over the key intervals of the conditions on one indexed field;
 *   `_in` is one interval per value, read in parallel and concatenated in key order (the intervals are
 *   disjoint and sorted, so concatenation is a merge). Chosen for the most selective indexed condition
 *   (equality and null < `_in` < two-sided range < one-sided range < not-null), or, with no indexed
 *   condition and nothing else to check, for a sort whose leading key is indexed.
 * - `partition`: the dataset's base-table partition in id order (newest first is a reverse read), with the
 *   residual as a FilterExpression. Serves the default order without any filter cheaply; with unindexed
 *   conditions it reads the whole partition, under the read budget.
 *
 * Order: `path` when the access path's own order is the list order (a single-key sort on the index's field
 * or on id/gmt_create, ties by id in the same direction); `ids` when only the ids decide the order (keys are
 * enough, no item reads); `items` otherwise (all matching items are read and sorted in memory).
 *
 * A list filtered through one index and sorted by another indexed field (`status=new` by `amount` desc) has
 * `items` order, but also a `sortPath`: the sort field's index read in the list's order, keeping only the ids the
 * filter's keys found, gives the page in order without reading any item but the page's (`list-executor.ts`).
 */
import {
  conjuncts,
  effectiveSort,
  type Filter,
  type ListQuery,
  MATCH_ALL,
  type SortDirection,
  type SortKey,
} from '../records/list-query';
import {
  compareCodePoints,
  equalityInterval,
  fullInterval,
  intersectIntervals,
  type KeyInterval,
  nonNullInterval,
  nullInterval,
  rangeInterval,
} from '../records/value-encoding';
import type { IndexSlot } from '../storage/index-attributes';

export type AccessPath =
  | { kind: 'ids'; ids: string[] }
  | { kind: 'partition'; direction: SortDirection; idRange?: { lower?: string; upper?: string } }
  | {
      kind: 'index';
      indexName: string;
      attribute: string;
      /** The build's tag: every key of the index starts with it (the intervals are of what follows). */
      tag: string;
      field: string;
      /** Disjoint, in ascending key order. */
      intervals: KeyInterval[];
      direction: SortDirection;
    };

export type OrderSource = 'path' | 'ids' | 'items';

export type IndexPath = Extract<AccessPath, { kind: 'index' }>;

/**
 * Another indexed condition, answered by reading that index's keys and keeping only the ids found in both.
 * The executor reads it only while that costs less than reading the candidates' items would (it cannot know
 * the sizes beforehand); when it gives up, the `served` conditions are checked on the items instead.
 */
export interface Intersection {
  path: IndexPath;
  served: Filter[];
}

export interface ListPlan {
  path: AccessPath;
  /** The conditions the access path answers exactly (left out of the residual). */
  served: Filter[];
  /**
   * Index path with `items` order only: the index of the sort's one field, whose keys in order, kept when the
   * filter's keys hold their id, are the list's order (ties by id in the same direction).
   */
  sortPath?: IndexPath;
  /** Index path only: other indexes whose keys narrow the candidates. */
  intersections: Intersection[];
  /** What the items must still satisfy after the access path (MATCH_ALL when nothing). */
  residual: Filter;
  order: OrderSource;
  /** The complete order (caller's keys, then id). */
  sort: SortKey[];
  /** No filter at all: the total comes from the record counter, and only the page needs reading. */
  unfiltered: boolean;
  /** Fields whose conditions or sort no index serves: named when a read exceeds its budget. */
  unindexedFields: string[];
}

/** Fields no configuration can index (an id range or the default order is served by the partition). */
const SYSTEM_FIELDS: ReadonlySet<string> = new Set(['id', 'gmt_create', 'gmt_modified']);

/** How selective a condition kind usually is: lower is better. */
const SCORE = { ids: 0, eq: 1, null: 1, in: 2, between: 3, bound: 4, notNull: 6, sortOnly: 7 } as const;

interface Candidate {
  path: AccessPath;
  /** Conjuncts the path answers exactly (removed from the residual). */
  served: Set<Filter>;
  score: number;
}

/** Plan a list query over a dataset whose indexed fields are `layout`. */
export function planListQuery(query: ListQuery, layout: ReadonlyMap<string, IndexSlot>): ListPlan {
  const parts = conjuncts(query.filter);
  const sort = effectiveSort(query.sort);
  const fixed = fixedFields(parts);
  // Keys on a field that every match has the same value of cannot change the order.
  let order = sort.filter((key) => key.field.name === 'id' || !fixed.has(key.field.name));
  if (partitionServes(order) && order[0]?.field.name === 'gmt_create') {
    // gmt_create then id is id order (the default newest first): the ids alone decide it.
    order = order.slice(1);
  }
  const lead = order[0] as SortKey;
  const tieDirection = (order[order.length - 1] as SortKey).direction;

  const candidates: Candidate[] = [];
  const ids = idsCandidate(parts);
  if (ids) candidates.push(ids);
  const idRange = idRangeCandidate(parts, tieDirection);
  if (idRange) candidates.push(idRange);
  for (const slot of layout.values()) {
    const candidate = indexCandidate(parts, slot, lead.field.name === slot.field ? lead.direction : tieDirection);
    if (candidate) candidates.push(candidate);
  }

  const unindexedFields = new Set<string>();
  for (const part of parts) {
    if (!candidates.some((c) => c.served.has(part))) for (const name of fieldsOf(part)) unindexedFields.add(name);
  }

  const servesOrder = (path: AccessPath) => pathOrder(path, order, fixed);
  candidates.sort((a, b) => a.score - b.score || Number(servesOrder(b.path)) - Number(servesOrder(a.path)));
  let chosen = candidates[0];
  const leftOver = (candidate: Candidate) => parts.filter((part) => !candidate.served.has(part));

  if (chosen && chosen.score >= SCORE.notNull && leftOver(chosen).length > 0) {
    // A weak index condition plus conditions no index answers: every item would be fetched one by one;
    // reading the partition costs less.
    chosen = undefined;
  }
  if (!chosen) {
    const sortSlot = layout.get(lead.field.name);
    if (parts.length === 0 && sortSlot && !partitionServes(order)) {
      // No filter: the sort field's index lists every record in order.
      chosen = {
        path: indexPath(sortSlot, [fullInterval()], lead.direction),
        served: new Set(),
        score: SCORE.sortOnly,
      };
    } else {
      chosen = { path: { kind: 'partition', direction: tieDirection }, served: new Set(), score: SCORE.sortOnly };
      if (!partitionServes(order) && !sortSlot) unindexedFields.add(lead.field.name);
    }
  }

  // Other indexes with conditions can narrow the candidates by their keys alone (no item reads).
  const intersections: Intersection[] = [];
  if (chosen.path.kind === 'index') {
    for (const other of candidates) {
      if (other === chosen || other.path.kind !== 'index' || other.served.size === 0) continue;
      intersections.push({ path: other.path, served: [...other.served] });
    }
  }
  const servedElsewhere = new Set(intersections.flatMap((i) => i.served));
  const residualItems = parts.filter((part) => !chosen.served.has(part) && !servedElsewhere.has(part));
  const residual: Filter = residualItems.length === 0 ? MATCH_ALL : { op: 'and', items: residualItems };
  let orderSource: OrderSource;
  if (chosen.path.kind !== 'ids' && pathOrder(chosen.path, order, fixed)) orderSource = 'path';
  else if (order.length === 1) orderSource = 'ids';
  else orderSource = 'items';
  // A sort no index lists in order: all the matches are read and sorted, and a 2001 names the sort's field.
  const sortSlot = layout.get(lead.field.name);
  const sortPath =
    orderSource === 'items' && chosen.path.kind === 'index' && sortSlot && sortIndexServes(order)
      ? (indexPath(sortSlot, [fullInterval()], lead.direction) as IndexPath)
      : undefined;
  if (
    orderSource === 'items' &&
    !sortPath &&
    !partitionServes(order) &&
    !sortSlot &&
    !SYSTEM_FIELDS.has(lead.field.name)
  ) {
    unindexedFields.add(lead.field.name);
  }
  return {
    path: chosen.path,
    served: [...chosen.served],
    ...(sortPath ? { sortPath } : {}),
    intersections,
    residual,
    order: orderSource,
    sort,
    unfiltered: parts.length === 0,
    unindexedFields: [...unindexedFields],
  };
}

function fieldsOf(filter: Filter): string[] {
  if (filter.op === 'and' || filter.op === 'or') return filter.items.flatMap(fieldsOf);
  return [filter.field.name];
}

/** Fields that a top-level equality or is-null pins to one value for every match. */
function fixedFields(parts: Filter[]): Set<string> {
  const fixed = new Set<string>();
  for (const part of parts) {
    if (part.op === 'eq' || (part.op === 'null' && part.isNull)) fixed.add(part.field.name);
    if (part.op === 'in' && part.values.length === 1) fixed.add(part.field.name);
  }
  return fixed;
}

/** Whether an index of the sort's first field lists records in the whole order: one key, then ties by id alike. */
function sortIndexServes(order: SortKey[]): boolean {
  const [first, second] = order;
  return (
    order.length === 2 &&
    first?.field.name !== 'id' &&
    second?.field.name === 'id' &&
    second.direction === first?.direction
  );
}

/** The base table is in id order; gmt_create is the id's creation time, so it orders the same way. */
function partitionServes(order: SortKey[]): boolean {
  const [first, second] = order;
  if (!first) return true;
  if (first.field.name === 'id') return true;
  return first.field.name === 'gmt_create' && second?.field.name === 'id' && second.direction === first.direction;
}

/** Whether reading `path` in its direction yields records in `order`. */
function pathOrder(path: AccessPath, order: SortKey[], fixed: Set<string>): boolean {
  const [first, second] = order;
  if (!first) return true;
  if (path.kind === 'ids') return false;
  if (path.kind === 'partition') return partitionServes(order) && path.direction === first.direction;
  // An index lists (value, id); with the value pinned by an equality it lists ids.
  if (first.field.name === 'id') return fixed.has(path.field) && path.direction === first.direction;
  return (
    first.field.name === path.field &&
    second?.field.name === 'id' &&
    second.direction === first.direction &&
    path.direction === first.direction
  );
}

function indexPath(slot: IndexSlot, intervals: KeyInterval[], direction: SortDirection): AccessPath {
  return {
    kind: 'index',
    indexName: slot.indexName,
    attribute: slot.attribute,
    tag: slot.tag,
    field: slot.field,
    intervals,
    direction,
  };
}

function idsCandidate(parts: Filter[]): Candidate | undefined {
  for (const part of parts) {
    if (part.op === 'eq' && part.field.name === 'id') {
      return { path: { kind: 'ids', ids: [String(part.value)] }, served: new Set([part]), score: SCORE.ids };
    }
    if (part.op === 'in' && part.field.name === 'id') {
      const ids = [...new Set(part.values.map(String))];
      return { path: { kind: 'ids', ids }, served: new Set([part]), score: SCORE.ids };
    }
  }
  return undefined;
}

function idRangeCandidate(parts: Filter[], direction: SortDirection): Candidate | undefined {
  const ranges = parts.filter((part) => part.op === 'range' && part.field.name === 'id');
  if (ranges.length === 0) return undefined;
  const idRange: { lower?: string; upper?: string } = {};
  const served = new Set<Filter>();
  for (const part of ranges) {
    if (part.op !== 'range') continue;
    // Exclusive bounds stay in the residual; the key condition takes them inclusively.
    if (part.lower) {
      const value = String(part.lower.value);
      if (idRange.lower === undefined || value > idRange.lower) idRange.lower = value;
    }
    if (part.upper) {
      const value = String(part.upper.value);
      if (idRange.upper === undefined || value < idRange.upper) idRange.upper = value;
    }
    if ((!part.lower || part.lower.inclusive) && (!part.upper || part.upper.inclusive)) served.add(part);
  }
  const score = idRange.lower !== undefined && idRange.upper !== undefined ? SCORE.between : SCORE.bound;
  return { path: { kind: 'partition', direction, idRange }, served, score };
}

/** The key intervals of one condition on an indexed field, or undefined when the index cannot answer it. */
function conditionIntervals(part: Filter): { intervals: KeyInterval[]; exact: boolean; score: number } | undefined {
  switch (part.op) {
    case 'eq': {
      const { interval, exact } = equalityInterval(part.value);
      return { intervals: [interval], exact, score: SCORE.eq };
    }
    case 'in': {
      const all = part.values.map((value) => equalityInterval(value));
      const unique = new Map(all.map((entry) => [entry.interval.lower, entry.interval]));
      const intervals = [...unique.values()].sort((a, b) => compareCodePoints(a.lower, b.lower));
      return { intervals, exact: all.every((entry) => entry.exact), score: unique.size === 1 ? SCORE.eq : SCORE.in };
    }
    case 'range': {
      const { interval, exact } = rangeInterval(part.lower, part.upper);
      return { intervals: [interval], exact, score: part.lower && part.upper ? SCORE.between : SCORE.bound };
    }
    case 'null':
      return part.isNull
        ? { intervals: [nullInterval()], exact: true, score: SCORE.null }
        : { intervals: [nonNullInterval()], exact: true, score: SCORE.notNull };
    default:
      return undefined;
  }
}

function indexCandidate(parts: Filter[], slot: IndexSlot, direction: SortDirection): Candidate | undefined {
  let intervals: KeyInterval[] | undefined;
  let score = Number.POSITIVE_INFINITY;
  const served = new Set<Filter>();
  for (const part of parts) {
    if (part.op === 'and' || part.op === 'or' || part.field.name !== slot.field) continue;
    const answer = conditionIntervals(part);
    if (!answer) continue;
    score = Math.min(score, answer.score);
    intervals = intervals ? intersectAll(intervals, answer.intervals) : answer.intervals;
    if (answer.exact) served.add(part);
  }
  if (!intervals) return undefined;
  return { path: indexPath(slot, intervals, direction), served, score };
}

/** Pairwise intersection of two sorted lists of disjoint intervals: again sorted and disjoint. */
function intersectAll(a: KeyInterval[], b: KeyInterval[]): KeyInterval[] {
  const out: KeyInterval[] = [];
  for (const x of a) {
    for (const y of b) {
      const z = intersectIntervals(x, y);
      if (z) out.push(z);
    }
  }
  return out.sort((p, q) => compareCodePoints(p.lower, q.lower));
}
