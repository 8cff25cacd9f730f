/**
 * For receivers of the service's webhooks (docs/interface.md §18): `verifyWebhook` checks a request's Standard
 * Webhooks signature and answers the change event. It needs node:crypto, so it is a subpath of its own
 * (`@data-access-service/client/webhooks`): browser bundles of the main entry never load it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type ChangeEvent,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './change-events.js';

export type { ChangeEvent } from './change-events.js';

/** A webhook request that is not one this service signed with the secret given (or signed too long ago). */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** How far a webhook's timestamp may be from the receiver's clock, by default (Standard Webhooks' 5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/**
 * For receivers: checks a webhook request's Standard Webhooks signature with the subscription's `whsec_` secret
 * over the raw body as received, and that its timestamp is within `toleranceSeconds` of now; answers the event.
 * Throws `WebhookVerificationError` otherwise. Deduplicate by `event.eventId` (the `webhook-id`): an event may
 * arrive more than once.
 */
export function verifyWebhook(
  secret: string,
  headers: Readonly<Record<string, string | string[] | undefined>> | { get(name: string): string | null },
  body: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): ChangeEvent {
  const header = (name: string): string | undefined => {
    if (typeof (headers as { get?: unknown }).get === 'function') {
      return (headers as { get(name: string): string | null }).get(name) ?? undefined;
    }
    const value = (headers as Record<string, string | string[] | undefined>)[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header(WEBHOOK_ID_HEADER);
  const timestamp = header(WEBHOOK_TIMESTAMP_HEADER);
  const signatures = header(WEBHOOK_SIGNATURE_HEADER);
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, -timestamp or -signature');
  const seconds = Number(timestamp);
  const now = (options.now ?? Date.now()) / 1000;
  if (!Number.isInteger(seconds) || Math.abs(now - seconds) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('webhook-timestamp is too far from now');
  }
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX))
    throw new WebhookVerificationError('the secret must start with whsec_');
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest();
  const matches = signatures.split(' ').some((entry) => {
    const [version, encoded] = entry.split(',');
    if (version !== 'v1' || !encoded) return false;
    const given = Buffer.from(encoded, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('no signature matches');
  return JSON.parse(body) as ChangeEvent;
}
