/**
 * A record's revision and the origin of its latest write (docs/interface.md §18), as the record item carries them:
 *
 * - `@rev`: 1 when the record is created, one more on each update that changes something. Records written before
 *   revisions existed have no `@rev` and are at revision 1: every reader asks `revisionOf`, and an update's
 *   condition accepts the absent attribute for revision 1 (`revisionCondition`).
 * - `@ev`: who wrote the record's current state, in which request, at which moment. The change stream turns an
 *   item change into an event from the old image, the new image and this (a few dozen bytes), written in the same
 *   PutItem or UpdateItem as the fields, so an event exists exactly when the change does.
 */
import { RecordAttr } from './table-definitions';

/** Who wrote a record's current state, and when. */
export interface WriteOrigin {
  /** The calling application. */
  appCode: string;
  /** The user of a client-key request; null for a signed one. */
  userId: string | null;
  requestId: string;
  /** When the write was made (epoch ms): the event's `occurredAt`. */
  occurredAt: number;
}

/** The revision of a stored record (1 for a record written before revisions existed). */
export function revisionOf(item: Readonly<Record<string, unknown>>): number {
  const revision = item[RecordAttr.revision];
  return typeof revision === 'number' && Number.isInteger(revision) && revision > 0 ? revision : 1;
}

/** `@ev` as stored: short names, since every record carries it. */
export function originAttribute(origin: WriteOrigin): Record<string, unknown> {
  return { a: origin.appCode, u: origin.userId, r: origin.requestId, t: origin.occurredAt };
}

/** The origin a stored item's `@ev` holds; `undefined` for a record written before origins were kept. */
export function originOf(item: Readonly<Record<string, unknown>>): WriteOrigin | undefined {
  const stored = item[RecordAttr.origin];
  if (stored === null || typeof stored !== 'object') return undefined;
  const { a, u, r, t } = stored as Record<string, unknown>;
  if (typeof a !== 'string' || typeof r !== 'string' || typeof t !== 'number') return undefined;
  return { appCode: a, userId: typeof u === 'string' ? u : null, requestId: r, occurredAt: t };
}

/** The attributes of a new record's first revision. */
export function firstRevisionAttributes(origin: WriteOrigin): Record<string, unknown> {
  return { [RecordAttr.revision]: 1, [RecordAttr.origin]: originAttribute(origin) };
}

/**
 * The condition that the stored record is still at `revision` (`#rev` names `@rev`, `:rev` holds the revision):
 * revision 1 also matches a record that has no `@rev` yet.
 */
export function revisionCondition(revision: number): string {
  return revision === 1 ? '(attribute_not_exists(#rev) OR #rev = :rev)' : '#rev = :rev';
}
