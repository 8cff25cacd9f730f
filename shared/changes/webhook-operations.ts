/**
 * What an operator asks of the webhook deliveries (docs/interface.md §18; `das webhooks status` and `das webhooks
 * replay`), the same against `npm start`'s store and a deployment's: the only difference is the queue a replay
 * puts its deliveries on (SQS in a deployment, its local twin's items in the store).
 *
 * - status: per subscription of the deployed configuration, its state (active, or disabled by a 410), the
 *   deliveries made and attempts failed, the events retrying and parked, and the age of the oldest event not
 *   delivered yet (the least position among those retrying or parked);
 * - replay: every event of the change log since a time that the subscription's application may see, queued again
 *   for that subscription (as the change log queued it the first time), and its parked events of that window
 *   forgotten (they are being sent again; one that fails again is parked again).
 */
import type { Catalog } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import { type EventStore, firstPositionAt, lastPositionAt, positionTime } from '../storage/event-store';
import type { DeliveryFailure, WebhookStateStore } from '../storage/webhook-state';
import { deliveriesOf } from './change-stream';
import type { DeliveryMessage, DeliveryQueue } from './delivery-queue';
import { isDisabled } from './webhook-delivery';

export interface SubscriptionStatus {
  id: string;
  appCode: string;
  url: string;
  datasets: string[];
  state: 'active' | 'disabled';
  deliveries: number;
  failures: number;
  retrying: number;
  parked: number;
  /** How long ago the oldest event not delivered yet was written (ms); null when every event was delivered. */
  oldestUndeliveredAgeMs: number | null;
  lastFailure: DeliveryFailure | null;
}

/** Every subscription's status, in the configuration's order. */
export async function webhookStatuses(
  catalog: Catalog,
  state: WebhookStateStore,
  now: number,
  meter: CapacityMeter,
): Promise<SubscriptionStatus[]> {
  return Promise.all(
    catalog.allWebhooks().map(async (subscription) => {
      const summary = await state.summary(subscription.id, meter);
      const oldest = summary.oldestUndelivered === undefined ? undefined : positionTime(summary.oldestUndelivered);
      return {
        id: subscription.id,
        appCode: subscription.appCode,
        url: subscription.url,
        datasets: [...subscription.datasets],
        state: isDisabled(summary, catalog) ? 'disabled' : 'active',
        deliveries: summary.deliveries,
        failures: summary.failures,
        retrying: summary.retrying,
        parked: summary.parked,
        oldestUndeliveredAgeMs: oldest === undefined ? null : Math.max(0, now - oldest),
        lastFailure: summary.lastFailure ?? null,
      };
    }),
  );
}

export interface ReplayPorts {
  events: EventStore;
  state: WebhookStateStore;
  queue: DeliveryQueue;
}

export interface ReplayOutcome {
  /** Deliveries queued again. */
  queued: number;
  /** Parked events among them, no longer parked. */
  unparked: number;
}

/** Events read from the change log per query. */
const REPLAY_PAGE = 100;

/** Queue again, for one subscription, every event since `since` (epoch ms) that it receives. */
export async function replayWebhook(
  catalog: Catalog,
  subscriptionId: string,
  since: number,
  now: number,
  ports: ReplayPorts,
  meter: CapacityMeter,
): Promise<ReplayOutcome> {
  const subscription = catalog.webhook(subscriptionId);
  if (!subscription) throw new UnknownSubscriptionError(subscriptionId, catalog);
  const range = { from: firstPositionAt(since), through: lastPositionAt(now) };
  const queued = new Set<string>();
  for (const datasetCode of subscription.datasets) {
    let after: string | undefined;
    for (;;) {
      const page = await ports.events.read(datasetCode, { ...range, after }, REPLAY_PAGE, meter);
      const messages: DeliveryMessage[] = page.changes.flatMap((change) =>
        deliveriesOf(change, change.position, catalog).filter((m) => m.subscriptionId === subscriptionId),
      );
      if (messages.length > 0) await ports.queue.enqueue(messages);
      for (const message of messages) queued.add(message.eventId);
      after = page.changes.at(-1)?.position;
      if (!page.more || after === undefined) break;
    }
  }
  // After queueing: a stop between the two leaves an event both parked and queued, never neither.
  let unparked = 0;
  for (const parked of await ports.state.parked(subscriptionId, range.from, meter)) {
    if (!queued.has(parked.eventId)) continue;
    await ports.state.unpark(subscriptionId, parked, meter);
    unparked += 1;
  }
  return { queued: queued.size, unparked };
}

/** A replay named a subscription the deployed configuration does not have. */
export class UnknownSubscriptionError extends Error {
  constructor(subscriptionId: string, catalog: Catalog) {
    const known = catalog.allWebhooks().map((s) => s.id);
    super(
      `no webhook subscription '${subscriptionId}' in the deployed configuration` +
        (known.length > 0 ? ` (it has: ${known.join(', ')})` : ' (it has none)'),
    );
    this.name = 'UnknownSubscriptionError';
  }
}
