/**
 * The one home of permissions (docs/interface.md §6): which grant a caller holds on a dataset and
 * what it lets the caller see and change. `readFields` narrows every record and column list, `writeFields`
 * bounds what a create or an update may touch, and `rowFilter` bounds the rows it sees and changes.
 *
 * Every path asks here: authentication (the grant for the route's operation), get-list (the row scope ANDed
 * into the query), get-one (a row outside the scope is not found), create and update (writable fields, the
 * scope checked atomically with the write, never by a read before it), and custom SQL (each dataset loaded as
 * the caller may read it, `readableTable`). A new way in, such as batch create, a user's narrowed grants or a hook's reads,
 * builds a `Caller` and calls the same functions.
 */
import type { Dataset } from '../catalog/catalog';
import type { FieldConfig, GrantConfig, GrantOperation } from '../catalog/schema';
import { AccessDeniedError } from '../contract/errors';
import { matchesFilter } from '../records/filter-matcher';
import { parseRowFilter } from '../records/filter-parser';
import { conjuncts, type Filter, filterFields } from '../records/list-query';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { type CompiledExpression, compileFilterExpression } from '../storage/filter-expression';
import type { Caller } from './caller';

/** Whether a grant allows an operation (`read` covers get-list, get-one and custom SQL). */
export function grantAllows(grant: GrantConfig, operation: GrantOperation): boolean {
  return grant.operations.includes(operation);
}

/**
 * The caller's grant on a dataset for one operation; 1006 when it holds none or the grant does not allow the
 * operation. The dataset must exist (1005 comes first, from the caller's lookup).
 */
export function grantFor(caller: Caller, datasetCode: string, operation: GrantOperation): GrantConfig {
  const appCode = caller.application.appCode;
  // A client-key caller is named as the user: its grants may be narrower than its application's.
  const who = caller.user ? `user '${caller.user.userId}' of application '${appCode}'` : `application '${appCode}'`;
  const grant = caller.grants.get(datasetCode);
  if (!grant) throw new AccessDeniedError(`${who} has no access to dataset '${datasetCode}'`);
  if (!grantAllows(grant, operation)) {
    throw new AccessDeniedError(`${who} may not ${operation} records of dataset '${datasetCode}'`);
  }
  return grant;
}

/** The caller's grant on a dataset when it allows reading, else `undefined` (custom SQL's datasets). */
export function readableGrant(caller: Caller, datasetCode: string): GrantConfig | undefined {
  const grant = caller.grants.get(datasetCode);
  return grant && grantAllows(grant, 'read') ? grant : undefined;
}

/** A dataset as custom SQL may load it for one caller: a table of the visible columns and rows. */
export interface ReadableTable {
  datasetCode: string;
  /** The fields the caller's grant shows, in the dataset's definition order. */
  fields: readonly FieldConfig[];
  /** The grant's row filter, when it has one: the table holds only those rows. */
  rowFilter?: Readonly<Record<string, unknown>>;
}

/**
 * What custom SQL may load of a dataset for a caller (docs/interface.md §6, §8): exactly what get-list would
 * show it; `undefined` when its grant does not allow reading the dataset.
 */
export function readableTable(caller: Caller, dataset: Dataset): ReadableTable | undefined {
  const grant = readableGrant(caller, dataset.datasetCode);
  if (!grant) return undefined;
  const visible = visibleFields(grant);
  const table: ReadableTable = {
    datasetCode: dataset.datasetCode,
    fields: dataset.fields.filter((field) => !visible || visible.has(field.name)),
  };
  if (grant.rowFilter) table.rowFilter = grant.rowFilter;
  return table;
}

/** The dataset fields the grant shows; `undefined` when it shows them all. */
export function visibleFields(grant: GrantConfig): ReadonlySet<string> | undefined {
  return grant.readFields ? new Set(grant.readFields) : undefined;
}

/** Refuse (1006) a write touching a field outside `writeFields`; nothing is written. */
export function assertWritable(grant: GrantConfig, changes: RecordChanges, appCode: string, datasetCode: string): void {
  if (!grant.writeFields) return;
  const writable = new Set(grant.writeFields);
  const touched = [...Object.keys(changes.set), ...changes.remove];
  const denied = touched.filter((name) => !writable.has(name));
  if (denied.length > 0) {
    throw new AccessDeniedError(
      `application '${appCode}' may not write field${denied.length > 1 ? 's' : ''} ${denied.map((n) => `'${n}'`).join(', ')} of dataset '${datasetCode}'`,
    );
  }
}

/** Parsed row filters, per grant object of a catalog (a catalog's grants never change). */
const parsedScopes = new WeakMap<GrantConfig, Filter>();

/** The rows the grant reaches, as a parsed filter; `undefined` when it has no row filter. */
export function rowScope(grant: GrantConfig, dataset: Dataset): Filter | undefined {
  if (!grant.rowFilter || Object.keys(grant.rowFilter).length === 0) return undefined;
  let scope = parsedScopes.get(grant);
  if (!scope) {
    scope = parseRowFilter(grant.rowFilter, dataset);
    parsedScopes.set(grant, scope);
  }
  return scope;
}

/** What a grant shows of its dataset, worked out once per grant: the fields it shows and the rows it reaches. */
export interface GrantView {
  /** The fields the grant shows; `undefined` when it shows them all. */
  readonly readable: ReadonlySet<string> | undefined;
  /** The rows it reaches, as a parsed filter; `undefined` when it has no row filter. */
  readonly rowScope: Filter | undefined;
}

const views = new WeakMap<GrantConfig, GrantView>();

/** The view of a grant on its dataset (a catalog's grants never change, so it is kept per grant object). */
export function grantView(grant: GrantConfig, dataset: Dataset): GrantView {
  let view = views.get(grant);
  if (!view) {
    view = { readable: visibleFields(grant), rowScope: rowScope(grant, dataset) };
    views.set(grant, view);
  }
  return view;
}

/**
 * A row filter as a scope, for a reader that holds the filter rather than the grant (custom SQL's loaded
 * copies are keyed by it). The same parse as `rowScope`; `undefined` for no filter.
 */
export function rowFilterScope(rowFilter: GrantConfig['rowFilter'], dataset: Dataset): Filter | undefined {
  if (!rowFilter || Object.keys(rowFilter).length === 0) return undefined;
  return parseRowFilter(rowFilter, dataset);
}

/** Whether a stored row is inside the scope (no scope: every row is). */
export function rowInScope(scope: Filter | undefined, item: RecordItem): boolean {
  return !scope || matchesFilter(item, scope);
}

function outsideScope(appCode: string, datasetCode: string): AccessDeniedError {
  return new AccessDeniedError(
    `the record would be outside the rows application '${appCode}' may write in dataset '${datasetCode}'`,
  );
}

/** Refuse (1006) a new record that would fall outside the scope: it is checked whole, before it is written. */
export function assertCreateInScope(
  scope: Filter | undefined,
  item: RecordItem,
  appCode: string,
  datasetCode: string,
): void {
  if (scope && !matchesFilter(item, scope)) throw outsideScope(appCode, datasetCode);
}

/**
 * The scope check of an update, split where it can be decided:
 * - the parts of the row filter on fields the update changes are checked now, on the new values (1006 if the
 *   result would leave the scope);
 * - the whole row filter becomes the update's condition on the stored row, so that a row outside the scope
 *   (or moved out of it by a concurrent write) is not found (2002) — atomically, with no read before the write.
 * A row filter is a conjunction of single-field conditions, so the two together say the row is in the scope
 * before the write and stays in it after.
 */
export function updateScopeCondition(
  scope: Filter | undefined,
  after: RecordItem,
  changed: ReadonlySet<string>,
  appCode: string,
  datasetCode: string,
): CompiledExpression | undefined {
  if (!scope) return undefined;
  for (const part of conjuncts(scope)) {
    if (filterFields(part).every((name) => changed.has(name)) && !matchesFilter(after, part)) {
      throw outsideScope(appCode, datasetCode);
    }
  }
  return compileFilterExpression(scope, 'rf', 'condition');
}
