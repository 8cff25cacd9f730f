/**
 * The attributes a record item carries besides its fields, derived from them and written in the same
 * PutItem or UpdateItem as the fields, so they can never disagree with the values (no second write, no
 * read-modify-write):
 *
 * - `@ixN`: the generic index sort key of the dataset's N-th indexed field (definition order), see
 *   `value-encoding.ts`. Every record has one for every indexed field (the null sentinel when the field is
 *   null), so each generic index holds every record of the dataset and can serve an unfiltered sort.
 * - `@lc:<field>`: the lower-cased text of a string, text or enum field, for case-insensitive matching in
 *   DynamoDB expressions. Written only when it differs from the value itself; an expression reads the shadow
 *   when present and the field otherwise (`lowerCaseOperand` in `filter-expression.ts`).
 *
 * The slot of an indexed field is its position among the dataset's indexed fields. Changing which fields are
 * indexed therefore needs a backfill of existing records, which is not built yet (docs/interface.md §17; index
 * builds have their place in shared/indexing/).
 *
 * Per-value totals (value-counter.ts) are kept per index slot under `countSlotKey`, and the change items of
 * writes carry each slot's count key (`slotCountKeys`).
 */
import type { Dataset } from '../catalog/catalog';
import type { FieldType } from '../catalog/schema';
import type { StoredValue } from '../records/field-values';
import type { RecordChanges } from '../records/record-codec';
import { countKeyOfIndexKey, encodeIndexKey } from '../records/value-encoding';
import { genericIndex, indexAttribute, RecordAttr } from './table-definitions';

export interface IndexSlot {
  field: string;
  type: FieldType;
  indexName: string;
  attribute: string;
}

const layouts = new WeakMap<Dataset, ReadonlyMap<string, IndexSlot>>();

/** The generic index of each indexed field of a dataset. */
export function indexLayout(dataset: Dataset): ReadonlyMap<string, IndexSlot> {
  let layout = layouts.get(dataset);
  if (!layout) {
    const slots = new Map<string, IndexSlot>();
    dataset.fields
      .filter((field) => field.indexed)
      .forEach((field, i) => {
        slots.set(field.name, {
          field: field.name,
          type: field.type,
          indexName: genericIndex(i + 1).indexName,
          attribute: indexAttribute(i + 1),
        });
      });
    layout = slots;
    layouts.set(dataset, layout);
  }
  return layout;
}

const TEXT_TYPES: ReadonlySet<FieldType> = new Set(['string', 'text', 'enum']);

/** The lower-cased shadow attribute of a text field. */
export function lowerCaseAttribute(field: string): string {
  return RecordAttr.lowerCasePrefix + field;
}

/**
 * Add the derived attributes to a create's or an update's changes. For a create, `changes.set` holds every
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
  for (const slot of indexLayout(dataset).values()) {
    const value = changes.set[slot.field];
    if (value !== undefined) set[slot.attribute] = encodeIndexKey(value, id);
    else if (mode === 'create' || changes.remove.includes(slot.field)) set[slot.attribute] = encodeIndexKey(null, id);
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
 * The key per-value totals of an index slot are kept under. The one place that says which index entries a
 * total counts: the slot's attribute and the field it holds, so that a slot given to another field starts
 * totals of its own.
 */
export function countSlotKey(slot: IndexSlot): string {
  return `${slot.attribute}.${slot.field}`;
}

/** Per index slot of the dataset (`countSlotKey`), the count key of a stored item's value. */
export function slotCountKeys(
  dataset: Dataset,
  item: Readonly<Record<string, unknown>>,
  id: string,
): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const slot of indexLayout(dataset).values()) {
    const key = item[slot.attribute];
    if (typeof key === 'string') keys[countSlotKey(slot)] = countKeyOfIndexKey(key, id);
  }
  return keys;
}
