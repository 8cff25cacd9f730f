/**
 * What a grant lets an application see and change in a dataset (contract §6): `readFields` narrows every
 * record and column list, `writeFields` bounds what a create or an update may touch.
 */
import type { GrantConfig } from '../catalog/schema';
import { AccessDeniedError } from '../http/errors';
import type { RecordChanges } from '../records/record-codec';

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
