/**
 * The index slots an update of a record moves, with their count keys before and after, and the keyed write it
 * replaces: what its change item says (storage/change-items.ts). One update and each record of a batch update.
 */
import type { DataOperationContext } from '../operation/operation';
import type { RecordChanges, RecordItem } from '../records/record-codec';
import { slotCountKeys } from '../storage/index-attributes';
import type { UpdateClaimInput } from '../storage/record-store';
import { RecordAttr } from '../storage/table-definitions';

/** The index slots an update moves, with their count keys before and after, and the write it replaces. */
export function movedSlots(
  context: Pick<DataOperationContext, 'dataset'>,
  stored: RecordItem,
  derived: RecordChanges,
  id: string,
): Omit<UpdateClaimInput, 'now'> {
  const after: RecordItem = { ...stored, ...derived.set };
  for (const name of derived.remove) delete after[name];
  const keysBefore = slotCountKeys(context.dataset, stored, id);
  const keysAfter = slotCountKeys(context.dataset, after, id);
  const moved = Object.keys(keysAfter).filter((slot) => keysBefore[slot] !== keysAfter[slot]);
  const previous = stored[RecordAttr.changePosition];
  return {
    ...(typeof previous === 'string' ? { previous } : {}),
    before: Object.fromEntries(moved.flatMap((slot) => pair(slot, keysBefore[slot]))),
    after: Object.fromEntries(moved.flatMap((slot) => pair(slot, keysAfter[slot]))),
  };
}

function pair(slot: string, key: string | undefined): [string, string][] {
  return key === undefined ? [] : [[slot, key]];
}
