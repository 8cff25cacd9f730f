/**
 * The attributes a record item carries besides its fields, derived from them and written in the same
 * PutItem or UpdateItem as the fields, so they can never disagree with the values (no second write, no
 * read-modify-write):
 *
 * - `@ixN`: the sort key of the record in generic index N, for the index that occupies slot N (its field and
 *   build: shared/catalog/index-registry.ts): the build's tag, then the value's ordered encoding and the id
 *   (`value-encoding.ts`). Every record has one for every index its dataset keeps up to date (the null sentinel
 *   when the field is null), so each complete index holds every record of the dataset and can serve an unfiltered
 *   sort. The tag is what makes a slot reusable without rewriting it first: a key written by another build (of
 *   another field, or an earlier build of the same field) never falls in the key range a query of this build
 *   reads.
 * - `@lc:<field>`: the lower-cased text of a string, text or enum field, for case-insensitive matching in
 *   DynamoDB expressions. Written only when it differs from the value itself; an expression reads the shadow
 *   when present and the field otherwise (`lowerCaseOperand` in `filter-expression.ts`).
 *
 * Which indexes a write keeps and which the planner may read are the catalog's (`dataset.indexes`); records
 * written before an index existed get their keys from an index build (shared/indexing/).
 *
 * Per-value totals (value-counter.ts) are kept per build under `countSlotKey`, and the change items of writes
 * carry the count key of every index they keep, complete or building (`slotCountKeys`). Count keys are of the
 * value alone (no tag), like the key intervals a query plan holds.
 */
import type { Dataset } from '../catalog/catalog';
import type { DatasetIndex } from '../catalog/index-registry';
import type { FieldType } from '../catalog/schema';
import type { StoredValue } from '../records/field-values';
import type { RecordChanges } from '../records/record-codec';
import { countKeyOfIndexKey, encodeIndexKey } from '../records/value-encoding';
import { genericIndex, indexAttribute, RecordAttr } from './table-definitions';

/** One index as storage reads and writes it: the generic index, its sort key attribute, and its build's tag. */
export interface IndexSlot {
  field: string;
  indexName: string;
  attribute: string;
  /** Starts every key of this build: a key range of this index is this tag followed by a value range. */
  tag: string;
}

/**
 * The tag of a build: its number in base 36 between `b` and `:`. No tag is a prefix of another (the `:`), so the
 * key range of one build holds no key of another.
 */
export function indexTag(build: number): string {
  return `b${build.toString(36)}:`;
}

/** Where one index of a dataset lives. */
export function indexSlot(index: DatasetIndex): IndexSlot {
  return {
    field: index.field,
    indexName: genericIndex(index.slot).indexName,
    attribute: indexAttribute(index.slot),
    tag: indexTag(index.build),
  };
}

/** The key of a record (`id`, the field's `value`) in an index. */
export function indexKey(slot: IndexSlot, value: StoredValue | null, id: string): string {
  return slot.tag + encodeIndexKey(value, id);
}

const layouts = new WeakMap<
  Dataset,
  {
    queryable: ReadonlyMap<string, IndexSlot>;
    maintained: IndexSlot[];
    totalled: IndexSlot[];
    exactTotals: ReadonlySet<IndexSlot>;
  }
>();

function slotsOf(dataset: Dataset) {
  let slots = layouts.get(dataset);
  if (!slots) {
    const queryable = new Map([...dataset.indexes.queryable].map(([field, index]) => [field, indexSlot(index)]));
    const exact = [...dataset.indexes.queryable.values()].filter((index) =>
      dataset.indexes.exactTotals.has(index.build),
    );
    slots = {
      queryable,
      maintained: dataset.indexes.maintained.map(indexSlot),
      totalled: dataset.indexes.totalled.map(indexSlot),
      exactTotals: new Set(exact.map((index) => queryable.get(index.field) as IndexSlot)),
    };
    layouts.set(dataset, slots);
  }
  return slots;
}

/** The complete indexes of a dataset, by field: the only ones a query may read. */
export function indexLayout(dataset: Dataset): ReadonlyMap<string, IndexSlot> {
  return slotsOf(dataset).queryable;
}

/**
 * The complete indexes (of `indexLayout`) whose per-value totals count every record and may answer a list; the
 * others count their index keys.
 */
export function exactTotalsIndexes(dataset: Dataset): ReadonlySet<IndexSlot> {
  return slotsOf(dataset).exactTotals;
}

/** The complete and building indexes of a dataset: those whose per-value totals writes keep. */
export function totalledIndexes(dataset: Dataset): readonly IndexSlot[] {
  return slotsOf(dataset).totalled;
}

/** Every index a write of the dataset keeps up to date (complete, building, and dropped ones still read). */
export function maintainedIndexes(dataset: Dataset): readonly IndexSlot[] {
  return slotsOf(dataset).maintained;
}

const TEXT_TYPES: ReadonlySet<FieldType> = new Set(['string', 'text', 'enum']);

/** The lower-cased shadow attribute of a text field. */
export function lowerCaseAttribute(field: string): string {
  return RecordAttr.lowerCasePrefix + field;
}

/** Whether changes set or clear a field that an index this write keeps is built on (its key moves with it). */
export function movesIndexKeys(dataset: Dataset, changes: RecordChanges): boolean {
  return maintainedIndexes(dataset).some(
    (slot) => changes.set[slot.field] !== undefined || changes.remove.includes(slot.field),
  );
}

/**
 * Add the derived attributes to a create's or an update's changes: "the attributes a write must set". For a create, `changes.set` holds every
 * non-null field; for an update only the fields sent (the others keep their attributes).
 */
export function withDerivedAttributes(
  dataset: Dataset,
  id: string,
  changes: RecordChanges,
  mode: 'create' | 'update',
): RecordChanges {
  const set: Record<string, StoredValue> = { ...changes.set };
  const remove = [...changes.remove];
  for (const slot of maintainedIndexes(dataset)) {
    const value = changes.set[slot.field];
    if (value !== undefined) set[slot.attribute] = indexKey(slot, value, id);
    else if (mode === 'create' || changes.remove.includes(slot.field)) set[slot.attribute] = indexKey(slot, null, id);
  }
  for (const field of dataset.fields) {
    if (!TEXT_TYPES.has(field.type)) continue;
    const value = changes.set[field.name];
    const shadow = lowerCaseAttribute(field.name);
    if (typeof value === 'string' && value.toLowerCase() !== value) set[shadow] = value.toLowerCase();
    else if (mode === 'update' && (value !== undefined || changes.remove.includes(field.name))) remove.push(shadow);
  }
  return { set, remove };
}

/**
 * The key per-value totals of an index are kept under. The one place that says which index entries a total
 * counts: the slot's attribute, the build's tag and the field, so that every build (of another field, or a new
 * build of the same field) starts totals of its own.
 */
export function countSlotKey(slot: IndexSlot): string {
  return `${slot.attribute}.${slot.tag}${slot.field}`;
}

/**
 * Per index whose totals writes keep (complete or building; `countSlotKey`), the count key of a stored item's
 * value. A key of another build in the slot (one the index's job has not replaced yet) counts for none.
 */
export function slotCountKeys(
  dataset: Dataset,
  item: Readonly<Record<string, unknown>>,
  id: string,
): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const slot of slotsOf(dataset).totalled) {
    const key = item[slot.attribute];
    if (typeof key === 'string' && key.startsWith(slot.tag)) {
      keys[countSlotKey(slot)] = countKeyOfIndexKey(key.slice(slot.tag.length), id);
    }
  }
  return keys;
}
