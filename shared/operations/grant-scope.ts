/**
 * What a grant lets an application see and change in a dataset (contract §6): `readFields` narrows every
 * record and column list, `writeFields` bounds what a create or an update may touch, and `rowFilter` bounds
 * the rows it sees and changes. Lists apply the row filter inside the query (see get-list); the write paths
 * here apply it atomically with the write, never by a read before it.
 */
import type { Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import { AccessDeniedError } from '../http/errors';
import { type CompiledExpression, compileFilterExpression } from '../records/filter-expression';
import { matchesFilter } from '../records/filter-matcher';
import { parseRowFilter } from '../records/filter-parser';
import { conjuncts, type Filter, filterFields } from '../records/list-query';
import type { RecordChanges, RecordItem } from '../records/record-codec';

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
