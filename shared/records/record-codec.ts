/**
 * The mapping between a caller's record and a DynamoDB item: validation of a create or an update against the
 * dataset, and the record a caller sees for a stored item (id first, fields in definition order, then the
 * timestamps; absent fields as null).
 */
import type { Dataset } from '../catalog/catalog';
import { isSystemField } from '../contract/codes';
import { InvalidParameterError } from '../contract/errors';
import { fromStoredValue, type StoredValue, toStoredValue } from './field-values';

export type RecordItem = Record<string, unknown>;
export type ApiRecord = Record<string, unknown>;

/**
 * The attribute of a stored item that holds the record's id: the records table's sort key
 * (`RecordAttr.sortKey` in storage/table-definitions.ts, which takes it from here). Outside the field-name
 * alphabet, like every attribute the service owns, so it never collides with a dataset's field.
 */
export const ID_ATTRIBUTE = '@sk';

/** A record item's size as DynamoDB counts it is at most 400 KB; leave room for the index attributes. */
export const MAX_RECORD_BYTES = 400 * 1024 - 4 * 1024;

export interface RecordChanges {
  /** Fields to set, in stored form. */
  set: Record<string, StoredValue>;
  /** Fields to clear (sent as null). */
  remove: string[];
}

/**
 * Validate the fields a caller sends for a create or an update. System fields are ignored (the service owns
 * them), unknown fields and wrong types are 1001 naming the field. A field outside `visible` (a grant's
 * readFields) is answered exactly as an unknown one (docs/interface.md §6), and a missing required field is named only
 * when the caller can see it.
 */
export function validateChanges(
  dataset: Dataset,
  params: Record<string, unknown>,
  mode: 'create' | 'update',
  visible?: ReadonlySet<string>,
): RecordChanges {
  const changes: RecordChanges = { set: {}, remove: [] };
  for (const [name, value] of Object.entries(params)) {
    if (isSystemField(name)) continue;
    const field = !visible || visible.has(name) ? dataset.fieldsByName.get(name) : undefined;
    if (!field) throw new InvalidParameterError(`field '${name}' is not defined in dataset '${dataset.datasetCode}'`);
    if (value === null || value === undefined) {
      if (field.required) throw new InvalidParameterError(`field '${name}' is required and cannot be null`);
      if (mode === 'update') changes.remove.push(name);
      continue;
    }
    changes.set[name] = toStoredValue(field, value);
  }
  if (mode === 'create') {
    const absent = dataset.fields.filter((f) => f.required && !(f.name in changes.set));
    const missing = absent.filter((f) => !visible || visible.has(f.name)).map((f) => `'${f.name}'`);
    if (absent.length > missing.length) {
      throw new InvalidParameterError(
        'this application cannot create records in this dataset: a required field is outside its grant',
      );
    }
    if (missing.length > 0) {
      throw new InvalidParameterError(`required field${missing.length > 1 ? 's' : ''} ${missing.join(', ')} missing`);
    }
  }
  return changes;
}

/** DynamoDB's item size: attribute name bytes plus value bytes (numbers about one byte per two digits). */
export function itemSize(item: RecordItem): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    size += Buffer.byteLength(name);
    if (typeof value === 'string') size += Buffer.byteLength(value);
    else if (typeof value === 'number') size += Math.ceil(String(value).replace(/[-.e+]/g, '').length / 2) + 1;
    else size += 1;
  }
  return size;
}

export function recordTooLargeError(): InvalidParameterError {
  return new InvalidParameterError(
    'the record is too large: a stored record is at most 400 KB; store large content elsewhere or split it',
  );
}

/** The record a caller sees; `visible` narrows the dataset fields (a grant's readFields). */
export function toApiRecord(dataset: Dataset, item: RecordItem, visible?: ReadonlySet<string>): ApiRecord {
  const record: ApiRecord = { id: item[ID_ATTRIBUTE] };
  for (const field of dataset.fields) {
    if (visible && !visible.has(field.name)) continue;
    record[field.name] = fromStoredValue(field, item[field.name]);
  }
  record.gmt_create = item.gmt_create;
  record.gmt_modified = item.gmt_modified;
  return record;
}

/**
 * What an update really changes in a stored record: the fields sent with a value other than the stored one, and
 * the fields cleared that hold a value. Empty when the update would leave the record as it is (docs/interface.md
 * §18: no write, no revision, no event).
 */
export function effectiveChanges(stored: RecordItem, changes: RecordChanges): RecordChanges {
  const set: Record<string, StoredValue> = {};
  for (const [name, value] of Object.entries(changes.set)) {
    if (stored[name] !== value) set[name] = value;
  }
  return { set, remove: changes.remove.filter((name) => stored[name] !== undefined && stored[name] !== null) };
}

/** Whether a change changes nothing. */
export function isEmptyChange(changes: RecordChanges): boolean {
  return Object.keys(changes.set).length === 0 && changes.remove.length === 0;
}
