/**
 * Change events (docs/interface.md §18), both halves, pure:
 *
 * - what the change log keeps of one item change of the records table, from the item before and after it (the
 *   change stream's images) and the write's origin the item carries (`@ev`): a record's creation or an update
 *   that moved its revision on. Any other item change (bookkeeping, an index entry written by a build, an item
 *   of another kind) is no record change and gives none;
 * - what one reader receives of a logged change: the record as get-one would show it to that reader's grant
 *   (`readFields`), only while the record is inside the grant's `rowFilter`, `changed` narrowed to readable
 *   fields, and a last `record.left_scope` when the change took the record out of the reader's rows.
 *
 * The same code serves the pull feed and the webhooks, so both say the same thing to the same reader.
 */
import { createHash } from 'node:crypto';
import type { ChangeEvent, ChangeEventType } from '../../packages/client/src/change-events';
import { rowInScope, rowScope, visibleFields } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import { filterFields } from '../records/list-query';
import { ID_ATTRIBUTE, type RecordItem, toApiRecord } from '../records/record-codec';
import type { LoggedChange, StoredChange } from '../storage/event-store';
import { datasetOfPartition } from '../storage/item-keys';
import { originOf, revisionOf } from '../storage/record-revisions';
import { RecordAttr } from '../storage/table-definitions';

/** A value before a change larger than this is not kept with the event: it is unknown to readers. */
export const MAX_KEPT_BEFORE_BYTES = 4 * 1024;

/** The fields of a record item a reader may see: its dataset fields, its id and timestamps, nothing of ours. */
function recordPart(item: Readonly<Record<string, unknown>>): RecordItem {
  const record: RecordItem = {};
  for (const [name, value] of Object.entries(item)) {
    if (!name.startsWith('@') || name === ID_ATTRIBUTE) record[name] = value;
  }
  return record;
}

/**
 * The change an item change of the records table makes to a record, or `undefined` when it is none: the item
 * is not a record, it was removed, or its revision did not move on (the images are unmarshalled items).
 */
export function changeOfImages(
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>> | undefined,
): LoggedChange | undefined {
  if (!after) return undefined;
  const datasetCode = datasetOfPartition(String(after[RecordAttr.partitionKey] ?? ''));
  const id = after[RecordAttr.sortKey];
  const origin = originOf(after);
  if (datasetCode === undefined || typeof id !== 'string' || !origin) return undefined;
  const revision = revisionOf(after);
  if (before && revision <= revisionOf(before)) return undefined;
  const change: LoggedChange = {
    datasetCode,
    id,
    revision,
    kind: before ? 'updated' : 'created',
    occurredAt: origin.occurredAt,
    actor: { appCode: origin.appCode, userId: origin.userId },
    requestId: origin.requestId,
    item: recordPart(after),
  };
  if (before) {
    const previous = recordPart(before);
    const changed: string[] = [];
    const kept: Record<string, unknown> = {};
    for (const name of new Set([...Object.keys(previous), ...Object.keys(change.item)])) {
      if (name === ID_ATTRIBUTE || name === 'gmt_create' || name === 'gmt_modified') continue;
      const old = previous[name] ?? null;
      if (old === (change.item[name] ?? null)) continue;
      changed.push(name);
      if (old === null || typeof old !== 'string' || Buffer.byteLength(old) <= MAX_KEPT_BEFORE_BYTES) kept[name] = old;
    }
    change.changed = changed;
    change.before = kept;
  }
  return change;
}

/** The id of the event of one change: the same for every reader, every delivery and every retry. */
export function eventIdOf(datasetCode: string, id: string, revision: number): string {
  const digest = createHash('sha256').update(`${datasetCode}\n${id}\n${revision}`).digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

/** Whether the record was inside a scope before the change; false when a value the scope reads is unknown. */
function inScopeBefore(change: LoggedChange, scope: ReturnType<typeof rowScope>): boolean {
  if (!scope) return true;
  const before: RecordItem = { ...change.item };
  for (const name of change.changed ?? []) {
    if (!Object.hasOwn(change.before ?? {}, name)) {
      if (filterFields(scope).includes(name)) return false;
      continue;
    }
    const value = change.before?.[name];
    if (value === null || value === undefined) delete before[name];
    else before[name] = value;
  }
  return rowInScope(scope, before);
}

/**
 * The event a reader with `grant` on `dataset` receives of a logged change; `undefined` when it receives none
 * (outside its rows before and after, or an update of fields it cannot read).
 */
export function eventFor(change: StoredChange, dataset: Dataset, grant: GrantConfig): ChangeEvent | undefined {
  const scope = rowScope(grant, dataset);
  const visible = visibleFields(grant);
  const event = (type: ChangeEventType, record: ChangeEvent['record'], changed?: string[]): ChangeEvent => ({
    eventId: eventIdOf(change.datasetCode, change.id, change.revision),
    type,
    appCode: dataset.appCode,
    datasetCode: change.datasetCode,
    id: change.id,
    revision: change.revision,
    occurredAt: new Date(change.occurredAt).toISOString(),
    record,
    ...(changed ? { changed } : {}),
    actor: { ...change.actor },
    requestId: change.requestId,
  });
  if (!rowInScope(scope, change.item)) {
    if (change.kind === 'created' || !inScopeBefore(change, scope)) return undefined;
    return event('record.left_scope', null);
  }
  const record = toApiRecord(dataset, change.item, visible);
  if (change.kind === 'created') return event('record.created', record);
  // Fields the dataset no longer defines, or the reader may not read, are not named.
  const changed = (change.changed ?? []).filter(
    (name) => dataset.fieldsByName.has(name) && (!visible || visible.has(name)),
  );
  return changed.length === 0 ? undefined : event('record.updated', record, changed);
}
