/**
 * Related fields in get-list's `select` (docs/interface.md §21): each relation selected comes back as one nested
 * object of the fields selected through it (`"customer": {"name": "Ada"}`), or `null` when the record has no
 * related record the caller may read (an empty or dangling link, a row outside its grant there). The page's
 * related records are read in one batch read per relation, only those not read already for its conditions or sort.
 * Each selected field is a column whose `dataIndex` is the dotted path to its value (`customer.name`) and whose
 * title is the relation's name and the field's title (`customer.Name`).
 */
import { relatedName } from '../records/filter-parser';
import { type ApiRecord, type RecordItem, toApiRecord } from '../records/record-codec';
import type { RelatedRecords, RelatedScope } from './related-records';

export interface NestedSelection {
  /** The nested objects of one record, by relation name. */
  of(item: RecordItem): Record<string, ApiRecord | null>;
  columns: { title: string; dataIndex: string }[];
}

export async function nestedSelection(
  select: readonly string[],
  scopes: ReadonlyMap<string, RelatedScope>,
  records: RelatedRecords,
  items: readonly RecordItem[],
): Promise<NestedSelection | undefined> {
  const byRelation = new Map<string, string[]>();
  for (const name of select) {
    const parts = relatedName(name);
    if (!parts) continue;
    const [relation, field] = parts;
    const fields = byRelation.get(relation) ?? [];
    if (!fields.includes(field)) fields.push(field);
    byRelation.set(relation, fields);
  }
  if (byRelation.size === 0) return undefined;
  const chosen = [...byRelation.keys()].map((name) => scopes.get(name) as RelatedScope);
  await records.load(items, chosen);
  const columns = chosen.flatMap((scope) =>
    (byRelation.get(scope.relation.name) ?? []).map((field) => ({
      title: `${scope.relation.name}.${scope.dataset.fieldsByName.get(field)?.title ?? field}`,
      dataIndex: `${scope.relation.name}.${field}`,
    })),
  );
  return {
    columns,
    of(item) {
      const nested: Record<string, ApiRecord | null> = {};
      for (const scope of chosen) {
        const record = records.of(item, scope);
        if (!record) {
          nested[scope.relation.name] = null;
          continue;
        }
        const shown = toApiRecord(scope.dataset, record, scope.readable);
        const fields = byRelation.get(scope.relation.name) ?? [];
        nested[scope.relation.name] = Object.fromEntries(fields.map((field) => [field, shown[field] ?? null]));
      }
      return nested;
    },
  };
}
