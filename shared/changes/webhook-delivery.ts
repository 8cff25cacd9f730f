/**
 * One webhook delivery (docs/interface.md §18), whatever queue it came from (SQS in a deployment, its local twin in
 * `npm start`): the event is read from the change log, narrowed through the subscription application's grant as it
 * is now (the same narrowing as the feed, change-events.ts), signed per Standard Webhooks with the subscription's
 * secret (the `standardwebhooks` package) and POSTed. The answer decides:
 *
 * - 2xx: delivered (a retry's state is cleared); nothing is written for a first-time success;
 * - 410: the receiver asked to stop: the subscription is disabled until the configuration is deployed again, and
 *   this event is parked (a replay sends it once the subscription is back);
 * - anything else (or no answer in 15 s): tried again on the schedule (retry-schedule.ts), honouring a longer
 *   `Retry-After`; parked after the last attempt.
 *
 * Nothing here runs on a request's path: a slow or failing receiver costs its own queue's time, never an API call.
 */
import { Webhook } from 'standardwebhooks';
import {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from '../../packages/client/src/change-events';
import type { Catalog } from '../catalog/catalog';
import type { WebhookConfig } from '../catalog/schema';
import type { CapacityMeter } from '../observability/capacity-meter';
import { logDelivery } from '../observability/change-metrics';
import type { EventStore } from '../storage/event-store';
import type { SubscriptionState, WebhookStateStore } from '../storage/webhook-state';
import { eventFor } from './change-events';
import type { DeliveryMessage } from './delivery-queue';
import type { RetrySchedule } from './retry-schedule';
import type { WebhookTransport } from './webhook-transport';

/** A subscription's signing secret (`whsec_...`): from the configuration file locally, the secret store in AWS. */
export interface WebhookSecrets {
  secretOf(subscriptionId: string): Promise<string>;
}

export interface DeliveryPorts {
  catalog(): Promise<Catalog>;
  events: EventStore;
  state: WebhookStateStore;
  secrets: WebhookSecrets;
  transport: WebhookTransport;
  schedule: RetrySchedule;
  now(): number;
}

export type DeliveryOutcome =
  /** The receiver answered 2xx. */
  | { kind: 'delivered'; status: number; attempt: number; lagMs: number }
  /** Nothing to send: the subscription or the event is gone, or the reader may no longer see it. */
  | { kind: 'skipped'; reason: string }
  /** Try again after `afterMs`: an attempt failed, or the wait before the next one is not over. */
  | { kind: 'retry'; afterMs: number; attempt?: number; status?: number; reason: string }
  /** Given up on after its last attempt, or its subscription is disabled: parked for a replay. */
  | { kind: 'parked'; attempt?: number; status?: number; reason: string };

/** Whether a receiver's 410 still holds: it does until a deployment later than it. */
export function isDisabled(state: SubscriptionState, catalog: Catalog): boolean {
  return state.disabledAt !== undefined && state.disabledAt >= catalog.deployedAt;
}

/** The headers and body of one attempt, signed with `secret` at `now`. */
export function signedDelivery(
  eventId: string,
  body: string,
  secret: string,
  now: number,
): { headers: Record<string, string>; body: string } {
  const at = new Date(Math.floor(now / 1000) * 1000);
  return {
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'data-access-service-webhooks/1',
      [WEBHOOK_ID_HEADER]: eventId,
      [WEBHOOK_TIMESTAMP_HEADER]: String(at.getTime() / 1000),
      [WEBHOOK_SIGNATURE_HEADER]: new Webhook(secret).sign(eventId, at, body),
    },
    body,
  };
}

/**
 * Deliver one message. `maybeRetried`: the queue may have handed it out before (SQS's receive count, or the local
 * queue's attempts), so its retry state must be read; a first delivery reads none.
 */
export async function deliver(
  message: DeliveryMessage,
  ports: DeliveryPorts,
  meter: CapacityMeter,
  options: { maybeRetried: boolean },
): Promise<DeliveryOutcome> {
  const catalog = await ports.catalog();
  const subscription = catalog.webhook(message.subscriptionId);
  if (!subscription?.datasets.includes(message.datasetCode)) {
    return { kind: 'skipped', reason: 'the subscription no longer receives this dataset' };
  }
  const now = ports.now();
  const state = await ports.state.subscription(subscription.id, meter);
  const retention = catalog.changeRetentionDays * 86_400_000;
  if (isDisabled(state, catalog)) {
    await park(
      ports,
      subscription,
      message,
      'the subscription is disabled: its receiver answered 410',
      now + retention,
      meter,
    );
    return { kind: 'parked', reason: 'subscription disabled (410)' };
  }
  const previous = options.maybeRetried
    ? await ports.state.attempt(subscription.id, message.eventId, meter)
    : undefined;
  if (previous && previous.nextAt > now) {
    return { kind: 'retry', afterMs: previous.nextAt - now, reason: 'the next attempt is not due yet' };
  }
  const event = await readEvent(catalog, subscription, message, ports, meter);
  if (typeof event === 'string') {
    if (previous) await ports.state.clearAttempt(subscription.id, message.eventId, meter);
    return { kind: 'skipped', reason: event };
  }
  const attempt = (previous?.failures ?? 0) + 1;
  const secret = await ports.secrets.secretOf(subscription.id);
  const signed = signedDelivery(message.eventId, JSON.stringify(event.body), secret, now);
  const answer = await ports.transport.post(subscription.url, signed.headers, signed.body);
  const status = answer.status;
  if (status !== undefined && status >= 200 && status < 300) {
    if (previous) await ports.state.clearAttempt(subscription.id, message.eventId, meter);
    return { kind: 'delivered', status, attempt, lagMs: ports.now() - event.occurredAt };
  }
  const reason = status === undefined ? (answer.error ?? 'no answer') : `the receiver answered ${status}`;
  const failure = { at: now, error: reason, ...(status === undefined ? {} : { status }) };
  await ports.state.noteFailure(subscription.id, failure, meter);
  if (status === 410) {
    await ports.state.disable(subscription.id, now, meter);
    if (previous) await ports.state.clearAttempt(subscription.id, message.eventId, meter);
    await park(
      ports,
      subscription,
      message,
      'the receiver answered 410: subscription disabled',
      now + retention,
      meter,
    );
    return { kind: 'parked', attempt, status, reason: 'the receiver answered 410: subscription disabled' };
  }
  const delay = ports.schedule.nextDelay(attempt, answer.retryAfterMs);
  if (delay === undefined) {
    if (previous) await ports.state.clearAttempt(subscription.id, message.eventId, meter);
    const why = `${reason} on the last of ${attempt} attempts`;
    await park(ports, subscription, message, why, now + retention, meter);
    return { kind: 'parked', attempt, ...(status === undefined ? {} : { status }), reason: why };
  }
  await ports.state.saveAttempt(
    subscription.id,
    message.eventId,
    { failures: attempt, nextAt: now + delay },
    now + retention,
    meter,
  );
  return { kind: 'retry', afterMs: delay, attempt, ...(status === undefined ? {} : { status }), reason };
}

/** The event as the subscription's application may see it now, or why there is nothing to send. */
async function readEvent(
  catalog: Catalog,
  subscription: WebhookConfig,
  message: DeliveryMessage,
  ports: DeliveryPorts,
  meter: CapacityMeter,
): Promise<{ body: unknown; occurredAt: number } | string> {
  const dataset = catalog.dataset(message.datasetCode);
  const grant = catalog.application(subscription.appCode)?.grants.get(message.datasetCode);
  if (!dataset || !grant?.operations.includes('read')) return 'the application may no longer read this dataset';
  const change = await ports.events.get(message.datasetCode, message.id, message.revision, meter);
  if (!change) return 'the event is no longer kept';
  const event = eventFor(change, dataset, grant);
  if (!event || (subscription.types && !subscription.types.includes(event.type))) {
    return 'the application may not see this change';
  }
  return { body: event, occurredAt: change.occurredAt };
}

async function park(
  ports: DeliveryPorts,
  subscription: WebhookConfig,
  message: DeliveryMessage,
  reason: string,
  expiresAt: number,
  meter: CapacityMeter,
): Promise<void> {
  await ports.state.park(
    subscription.id,
    {
      eventId: message.eventId,
      position: message.position,
      datasetCode: message.datasetCode,
      id: message.id,
      revision: message.revision,
      parkedAt: ports.now(),
      reason,
    },
    expiresAt,
    meter,
  );
}

/** The delivery's log line (and metrics), the same locally and in a deployment. */
export function reportOutcome(
  message: DeliveryMessage,
  outcome: DeliveryOutcome,
  durationMs: number,
  namespace: string,
): void {
  const base = { subscriptionId: message.subscriptionId, eventId: message.eventId, durationMs };
  switch (outcome.kind) {
    case 'delivered':
      logDelivery(
        { ...base, outcome: 'delivered', status: outcome.status, attempt: outcome.attempt, lagMs: outcome.lagMs },
        namespace,
      );
      return;
    case 'skipped':
      logDelivery({ ...base, outcome: 'skipped', reason: outcome.reason }, namespace);
      return;
    case 'retry':
      logDelivery(
        {
          ...base,
          outcome: outcome.attempt === undefined ? 'waiting' : 'failed',
          ...(outcome.status === undefined ? {} : { status: outcome.status }),
          ...(outcome.attempt === undefined ? {} : { attempt: outcome.attempt }),
          reason: outcome.reason,
        },
        namespace,
      );
      return;
    case 'parked':
      logDelivery(
        {
          ...base,
          outcome: 'parked',
          ...(outcome.status === undefined ? {} : { status: outcome.status }),
          ...(outcome.attempt === undefined ? {} : { attempt: outcome.attempt }),
          reason: outcome.reason,
        },
        namespace,
      );
      return;
  }
}
