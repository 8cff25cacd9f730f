/**
 * The in-memory meaning of a parsed filter and of a sort list. This is the reference semantics: the planner's
 * index reads, the compiled DynamoDB expressions and the property tests all agree with these functions.
 * Exported for the write path too: checks on create (a row filter) evaluate `matchesFilter` on the record
 * about to be stored.
 */
import type { StoredValue } from './field-values';
import { type Condition, effectiveSort, type Filter, type SortKey, storedValueOf } from './list-query';
import type { RecordItem } from './record-codec';
import { compareStoredValues } from './value-encoding';

/**
 * Whether a stored record item matches a filter. `item` is in stored form: fields by name (json as its text),
 * the id under `@sk` (or `id`), absent or null fields as null.
 */
export function matchesFilter(item: RecordItem, filter: Filter): boolean {
  switch (filter.op) {
    case 'and':
      return filter.items.every((f) => matchesFilter(item, f));
    case 'or':
      return filter.items.some((f) => matchesFilter(item, f));
    default:
      return matchesCondition(storedValueOf(item, filter.field), filter);
  }
}

function matchesCondition(value: StoredValue | null, condition: Condition): boolean {
  switch (condition.op) {
    case 'null':
      return (value === null) === condition.isNull;
    case 'eq':
      return value !== null && compareStoredValues(value, condition.value) === 0;
    case 'ne':
      return value === null || compareStoredValues(value, condition.value) !== 0;
    case 'in':
      return value !== null && condition.values.some((v) => compareStoredValues(value, v) === 0);
    case 'range': {
      if (value === null) return false;
      const { lower, upper } = condition;
      if (lower) {
        const c = compareStoredValues(value, lower.value);
        if (c < 0 || (c === 0 && !lower.inclusive)) return false;
      }
      if (upper) {
        const c = compareStoredValues(value, upper.value);
        if (c > 0 || (c === 0 && !upper.inclusive)) return false;
      }
      return true;
    }
    case 'text': {
      if (value === null) return false;
      const text = String(value).toLowerCase();
      if (condition.match === 'contains') return text.includes(condition.value);
      if (condition.match === 'prefix') return text.startsWith(condition.value);
      return text.endsWith(condition.value);
    }
  }
}

/**
 * The order of two records under a sort list, completed by `effectiveSort` (id tie-break): nulls first
 * ascending and last descending.
 */
export function compareBySort(a: RecordItem, b: RecordItem, sort: SortKey[]): number {
  for (const key of sort) {
    const c = compareStoredValues(storedValueOf(a, key.field), storedValueOf(b, key.field));
    if (c !== 0) return key.direction === 'asc' ? c : -c;
  }
  return 0;
}

/** Sort records in place by the caller's sort completed with the id tie-break. */
export function sortItems(items: RecordItem[], sort: SortKey[]): RecordItem[] {
  const complete = effectiveSort(sort);
  return items.sort((a, b) => compareBySort(a, b, complete));
}
