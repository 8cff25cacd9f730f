/**
 * A get-list whose conditions or sort name related fields (`<relation>.<field>`, docs/interface.md §21), served
 * within the list's read budget in one of two ways:
 *
 * - **Through the related dataset's ids.** A top-level condition on one relation's fields is run as a list of the
 *   related dataset (the caller's row filter there included); when it matches at most `RELATED_IDS_MAX` records,
 *   the condition becomes `<field> in (their ids)` on the listed dataset, which its planner serves like any `_in`
 *   (per value through the field's index when it is indexed). No match at all answers an empty page at once.
 * - **By a join in memory.** A sort by a related field, a condition mixing relations or this dataset's fields
 *   (under `$or`), or one matching more related records than the ids can carry: every record the other conditions
 *   match is read (at most `JOIN_IN_MEMORY_MAX`), its related records read in batches, then filtered, sorted and
 *   cut into the page here. Past that number, or past the read budget, it answers 2001 naming the conditions and
 *   sorts on related fields, unless the service runs a MySQL engine (docs/interface.md §20): then the whole
 *   selection runs there instead (`beyondBudget`, operations/related-on-mirror.ts), one statement for the page's
 *   ids and the exact total.
 *
 * A condition on a related field holds only where there is a related record the caller may read: a record whose
 * link is empty, dangling or outside the caller's row filter on the related dataset matches no such condition,
 * not even `$eq: null` or `$ne` (the related record is unknown to the caller, not a record with null fields). A
 * sort by a related field puts such records where nulls go.
 */
import type { Dataset } from '../catalog/catalog';
import { QueryTimeoutError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { matchesFilter, sortItems } from '../records/filter-matcher';
import { MAX_IN_VALUES, relatedName } from '../records/filter-parser';
import {
  allOf,
  conjuncts,
  type Filter,
  filterFields,
  ID_FIELD,
  type ListQuery,
  MATCH_ALL,
  storedValueOf,
} from '../records/list-query';
import type { RecordItem } from '../records/record-codec';
import { isEvaluable } from '../storage/filter-expression';
import type { ListResult } from './list-executor';
import type { RelatedRecords, RelatedScope } from './related-records';

/** A condition on a related field is served through ids when it matches at most this many related records. */
export const RELATED_IDS_MAX = MAX_IN_VALUES;
/** A join in memory takes at most this many records of the listed dataset. */
export const JOIN_IN_MEMORY_MAX = 1000;

export interface RelatedListRun {
  dataset: Dataset;
  /** The relations the caller may read, by name (the parser refused any other). */
  scopes: ReadonlyMap<string, RelatedScope>;
  records: RelatedRecords;
  meter: CapacityMeter;
  readBudget: number;
  /** The fields of the listed dataset a 2001 may name. */
  nameable: ReadonlySet<string>;
  /** A list of one dataset under a read budget (`list-run.ts`). */
  list(dataset: Dataset, query: ListQuery, nameable: ReadonlySet<string>, readBudget: number): Promise<ListResult>;
  /** Where the list runs when the read budget cannot serve it (the MySQL engine); absent: 2001. */
  beyondBudget?: () => Promise<ListResult>;
}

/** The relations a filter's or a sort's field names go through. */
function relationsOf(names: readonly string[]): Set<string> {
  return new Set(names.flatMap((name) => relatedName(name)?.[0] ?? []));
}

/** Whether a list names a related field in its filter or sort. */
export function usesRelations(query: ListQuery): boolean {
  return relationsOf([...filterFields(query.filter), ...query.sort.map((key) => key.field.name)]).size > 0;
}

/** The filter with `relation.` taken off its field names: the same conditions, on the related dataset. */
function onRelated(filter: Filter): Filter {
  if (filter.op === 'and' || filter.op === 'or') return { op: filter.op, items: filter.items.map(onRelated) };
  const base = relatedName(filter.field.name)?.[1] ?? filter.field.name;
  return { ...filter, field: base === 'id' ? ID_FIELD : { name: base, type: filter.field.type } };
}

/** `matchesFilter`, where a condition on a relation without a related record to show is false. */
function matchesJoined(item: RecordItem, filter: Filter, present: (relation: string) => boolean): boolean {
  if (filter.op === 'and') return filter.items.every((part) => matchesJoined(item, part, present));
  if (filter.op === 'or') return filter.items.some((part) => matchesJoined(item, part, present));
  const related = relatedName(filter.field.name);
  if (related && !present(related[0])) return false;
  return matchesFilter(item, filter);
}

export async function listWithRelations(query: ListQuery, run: RelatedListRun): Promise<ListResult> {
  const { beyondBudget } = run;
  if (!beyondBudget) return withinBudget(query, run);
  try {
    return await withinBudget(query, run);
  } catch (error) {
    // Every 2001 of a list naming related fields is the budget's (or the join's size): MySQL has neither.
    if (error instanceof QueryTimeoutError) return beyondBudget();
    throw error;
  }
}

async function withinBudget(query: ListQuery, run: RelatedListRun): Promise<ListResult> {
  const start = run.meter.readUnits;
  const remaining = () => Math.max(0, run.readBudget - (run.meter.readUnits - start));
  const local: Filter[] = [];
  const byRelation = new Map<string, Filter[]>();
  const joined: Filter[] = [];
  for (const part of conjuncts(query.filter)) {
    const fields = filterFields(part);
    const relations = relationsOf(fields);
    if (relations.size === 0) local.push(part);
    else if (relations.size === 1 && fields.every((name) => relatedName(name))) {
      const relation = [...relations][0] as string;
      byRelation.set(relation, [...(byRelation.get(relation) ?? []), part]);
    } else joined.push(part);
  }
  const nameable = new Set(run.nameable);
  // The conditions on this dataset's own fields, before the ids of related conditions join them.
  const own = [...local];
  const served: Filter[] = [];

  for (const [name, parts] of byRelation) {
    const scope = run.scopes.get(name) as RelatedScope;
    const filter = allOf(...parts.map(onRelated), scope.rowScope ?? MATCH_ALL);
    const relatedQuery: ListQuery = {
      filter,
      sort: [{ field: ID_FIELD, direction: 'asc' }],
      offset: 0,
      limit: RELATED_IDS_MAX,
    };
    const named = new Set(filterFields(allOf(...parts.map(onRelated))));
    const matched = await run.list(scope.dataset, relatedQuery, named, remaining()).catch((error: unknown) => {
      if (error instanceof QueryTimeoutError) return undefined;
      throw error;
    });
    if (matched && matched.totalCount === 0) return { items: [], totalCount: 0 };
    if (!matched || matched.totalCount > RELATED_IDS_MAX) {
      joined.push(...parts);
      continue;
    }
    const link = run.dataset.fieldsByName.get(scope.relation.field);
    const ids = matched.items.map((item) => storedValueOf(item, ID_FIELD) as string);
    local.push({ op: 'in', field: { name: scope.relation.field, type: link?.type ?? 'string' }, values: ids });
    served.push(...parts);
    nameable.add(scope.relation.field);
  }
  // Up to 100 ids per relation beside the caller's own conditions may make a filter the store cannot evaluate in
  // one read: the related conditions are then joined in memory instead.
  if (served.length > 0 && !isEvaluable(allOf(MATCH_ALL, ...local))) {
    local.splice(0, local.length, ...own);
    joined.push(...served);
  }

  const sortedByRelation = relationsOf(query.sort.map((key) => key.field.name)).size > 0;
  if (joined.length === 0 && !sortedByRelation) {
    return run.list(run.dataset, { ...query, filter: allOf(MATCH_ALL, ...local) }, nameable, remaining());
  }
  return joinInMemory(query, allOf(MATCH_ALL, ...local), allOf(MATCH_ALL, ...joined), run, nameable, remaining());
}

async function joinInMemory(
  query: ListQuery,
  local: Filter,
  joined: Filter,
  run: RelatedListRun,
  nameable: ReadonlySet<string>,
  readBudget: number,
): Promise<ListResult> {
  const relatedFields = [
    ...new Set([...filterFields(joined), ...query.sort.map((key) => key.field.name)].filter((n) => relatedName(n))),
  ];
  const refused = (reason: string) => {
    const what = [
      ...filterFields(joined)
        .filter((name) => relatedName(name))
        .map((name) => `the condition on '${name}'`),
      ...query.sort.filter((key) => relatedName(key.field.name)).map((key) => `the sort by '${key.field.name}'`),
    ];
    const code = run.dataset.datasetCode;
    return new QueryTimeoutError(
      `${what.join(' and ')}: ${reason}; a condition on a related field alone is served when it matches at most ` +
        `${RELATED_IDS_MAX} related records, and a join of at most ${JOIN_IN_MEMORY_MAX} records of '${code}' otherwise: ` +
        `add a condition on a field of '${code}' that narrows the list`,
    );
  };
  const all: ListQuery = { filter: local, sort: [], offset: 0, limit: JOIN_IN_MEMORY_MAX };
  const read = await run.list(run.dataset, all, nameable, readBudget).catch((error: unknown) => {
    throw error instanceof QueryTimeoutError
      ? refused(`reading the records to join ${error.message.replace(/^the query /, '')}`)
      : error;
  });
  if (read.totalCount > JOIN_IN_MEMORY_MAX) {
    throw refused(
      `the other conditions match ${read.totalCount} records, more than ${JOIN_IN_MEMORY_MAX} can be joined`,
    );
  }
  const scopes = [...relationsOf(relatedFields)].map((name) => run.scopes.get(name) as RelatedScope);
  await run.records.load(read.items, scopes);
  const rows = read.items.map((item) => {
    const row: RecordItem = { ...item };
    for (const name of relatedFields) {
      const [relation, field] = relatedName(name) as [string, string];
      const record = run.records.of(item, run.scopes.get(relation) as RelatedScope);
      row[name] = record ? storedValueOf(record, field) : null;
    }
    return row;
  });
  const present = (row: RecordItem) => (relation: string) =>
    run.records.of(row, run.scopes.get(relation) as RelatedScope) !== undefined;
  const matching = sortItems(
    rows.filter((row) => matchesJoined(row, joined, present(row))),
    query.sort,
  );
  return { items: matching.slice(query.offset, query.offset + query.limit), totalCount: matching.length };
}
