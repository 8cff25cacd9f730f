/**
 * The change events of the feed and the webhooks (docs/interface.md §18), as callers receive them: their types,
 * and the Standard Webhooks headers a delivery carries. The service takes these names from here, so the sender,
 * the feed and the receivers' helper (`verifyWebhook`) cannot disagree.
 */
/** What happened to a record, as one reader sees it. */
export const CHANGE_EVENT_TYPES = ['record.created', 'record.updated', 'record.left_scope'] as const;
export type ChangeEventType = (typeof CHANGE_EVENT_TYPES)[number];

/** One change of one record, narrowed to what the reader's grant shows. */
export interface ChangeEvent {
  /** The same on every delivery and retry of this event: receivers deduplicate by it. */
  eventId: string;
  type: ChangeEventType;
  /** The dataset's owner. */
  appCode: string;
  datasetCode: string;
  id: string;
  /** The record's revision after the change (1 for a creation). */
  revision: number;
  /** ISO 8601 UTC with milliseconds: when the change was made. */
  occurredAt: string;
  /** The record after the change, as get-one shows it to the reader; null when it left the reader's scope. */
  record: Record<string, unknown> | null;
  /** record.updated: the fields the update changed that the reader may read. */
  changed?: string[];
  /** Who made the change: the application, and the user of a client-key request (else null). */
  actor: { appCode: string; userId: string | null };
  /** The request that made the change (its X-Request-Id). */
  requestId: string;
}

/** A page of the pull feed (`POST /openapi/data/changes`). */
export interface ChangesPage {
  events: ChangeEvent[];
  /** Send it back as `after` for the next page; it stays valid while its events are kept. */
  cursor: string;
  /** Whether events after `cursor` are already there to read. */
  hasMore: boolean;
}

/** A webhook delivery's headers (Standard Webhooks): the event id, the attempt's time, the signatures. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** A subscription's signing secret starts with this, followed by base64 of 24 to 64 random bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
