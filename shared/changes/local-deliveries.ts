/**
 * Local runs: the webhook deliveries' queue and its consumer, in `npm start`'s own process, with what SQS gives a
 * deployment (sqs-deliveries.ts): messages kept in the store (the events table), so a `kill -9` loses none; one
 * group per subscription and record, handed out one message at a time and in order; a failed attempt handed out
 * again after the schedule's wait; a parked event recorded for status and replay. The deliveries themselves are
 * the deployment's code (webhook-delivery.ts), schedule included (a local run may scale it down for tests). Each
 * subscription has a share of deliveries in flight of its own (`SUBSCRIPTION_SHARE`): a receiver that hangs or
 * fails delays only its own subscription's events, never another's.
 * Another process may put messages in the store too (`das webhooks replay`, through `StoredDeliveryQueue`): the
 * consumer looks for them every `rescanMs`.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { type LocalDeliveryQueueItems, type LocalQueueItem, localQueueSlot } from '../storage/local-delivery-queue';
import {
  type DeliveryMessage,
  type DeliveryQueue,
  decodeDeliveryMessage,
  deliveryGroupOf,
  encodeDeliveryMessage,
} from './delivery-queue';
import { type DeliveryPorts, deliver, reportOutcome } from './webhook-delivery';

export interface LocalDeliveryOptions {
  items: LocalDeliveryQueueItems;
  ports: DeliveryPorts;
  metricNamespace: string;
  meter: () => CapacityMeter;
  /**
   * Deliveries in flight at once per subscription (default `SUBSCRIPTION_SHARE`): each subscription has this share
   * of its own, so a receiver that hangs or fails holds only its own subscription's slots.
   */
  perSubscription?: number;
  /** How often the store is read for messages another process put there (ms, default 1000). */
  rescanMs?: number;
}

/** A message as the local queue keeps it: its slot orders it within its group. */
export function localQueueItemOf(message: DeliveryMessage): LocalQueueItem {
  const group = deliveryGroupOf(message);
  return {
    slot: localQueueSlot(group, message.revision),
    group,
    body: encodeDeliveryMessage(message),
    visibleAt: 0,
    tries: 0,
  };
}

/** The local queue as another process puts messages on it: into the store, where `npm start`'s consumer finds them. */
export class StoredDeliveryQueue implements DeliveryQueue {
  constructor(private readonly items: LocalDeliveryQueueItems) {}

  async enqueue(messages: readonly DeliveryMessage[]): Promise<void> {
    for (const message of messages) await this.items.add(localQueueItemOf(message));
  }
}

/**
 * A subscription's share of the deliveries in flight: a receiver that never answers holds its slots 15 s per
 * attempt, so its own events wait, and no other subscription's.
 */
export const SUBSCRIPTION_SHARE = 8;

/** The longest the consumer sleeps without looking at the queue. */
const MAX_SLEEP_MS = 60_000;

export class LocalDeliveries implements DeliveryQueue {
  private readonly groups = new Map<string, LocalQueueItem[]>();
  private readonly busy = new Set<string>();
  /** Each group's subscription (read from its messages), and how many of each subscription's groups are busy. */
  private readonly subscriptionOf = new Map<string, string>();
  private readonly busyBySubscription = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  /** Slots finished while a rescan reads the store: what it read of them is stale. */
  private finishedDuringRescan: Set<string> | undefined;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: LocalDeliveryOptions) {}

  /** Load what the queue held when the process last stopped (every message counts as maybe tried already). */
  async start(): Promise<void> {
    for (const item of await this.options.items.all()) this.keep({ ...item, tries: Math.max(item.tries, 1) });
    this.stopped = false;
    this.pump();
    this.scheduleRescan();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    await Promise.all(this.running);
  }

  async enqueue(messages: readonly DeliveryMessage[]): Promise<void> {
    for (const message of messages) {
      const item = localQueueItemOf(message);
      if (await this.options.items.add(item)) this.keep(item);
    }
    this.pump();
  }

  private scheduleRescan(): void {
    if (this.stopped) return;
    this.rescanTimer = setTimeout(() => {
      this.rescan()
        .catch(() => undefined) // the store out of reach: the next rescan tries again
        .finally(() => this.scheduleRescan());
    }, this.options.rescanMs ?? 1_000);
    this.rescanTimer.unref();
  }

  /** Keep the messages another process put in the store since the last look. */
  private async rescan(): Promise<void> {
    const finished = new Set<string>();
    this.finishedDuringRescan = finished;
    try {
      const items = await this.options.items.all();
      let found = false;
      for (const item of items) {
        if (finished.has(item.slot) || this.groups.get(item.group)?.some((kept) => kept.slot === item.slot)) continue;
        this.keep(item);
        found = true;
      }
      if (found) this.pump();
    } finally {
      this.finishedDuringRescan = undefined;
    }
  }

  /** How many messages wait (delivering, or for their next attempt). */
  pending(): number {
    let count = 0;
    for (const items of this.groups.values()) count += items.length;
    return count;
  }

  /** Resolves once no message is due now (each group's head delivered, parked or waiting for a later attempt). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    if (this.running.size > 0) return false;
    const now = this.options.ports.now();
    for (const items of this.groups.values())
      if ((items[0]?.visibleAt ?? Number.POSITIVE_INFINITY) <= now) return false;
    return true;
  }

  private keep(item: LocalQueueItem): void {
    if (!this.subscriptionOf.has(item.group)) {
      this.subscriptionOf.set(item.group, decodeDeliveryMessage(item.body)?.subscriptionId ?? '');
    }
    const items = this.groups.get(item.group) ?? [];
    if (items.some((existing) => existing.slot === item.slot)) return;
    items.push(item);
    items.sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0));
    this.groups.set(item.group, items);
  }

  /**
   * Start every group whose head is due, as far as its subscription's share allows (another subscription's full
   * share stops none of this one's); sleep until the next one is due.
   */
  private pump(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const now = this.options.ports.now();
    const share = this.options.perSubscription ?? SUBSCRIPTION_SHARE;
    let next = Number.POSITIVE_INFINITY;
    for (const [group, items] of this.groups) {
      const head = items[0];
      if (!head || this.busy.has(group)) continue;
      if (head.visibleAt > now) {
        next = Math.min(next, head.visibleAt);
        continue;
      }
      const subscription = this.subscriptionOf.get(group) ?? '';
      const busy = this.busyBySubscription.get(subscription) ?? 0;
      if (busy >= share) continue;
      this.busy.add(group);
      this.busyBySubscription.set(subscription, busy + 1);
      const run = this.deliverHead(group, head).finally(() => {
        this.busy.delete(group);
        const left = (this.busyBySubscription.get(subscription) ?? 1) - 1;
        if (left > 0) this.busyBySubscription.set(subscription, left);
        else this.busyBySubscription.delete(subscription);
        this.running.delete(run);
        this.pump();
      });
      this.running.add(run);
    }
    if (Number.isFinite(next)) {
      this.timer = setTimeout(() => this.pump(), Math.min(MAX_SLEEP_MS, Math.max(0, next - now)));
      this.timer.unref();
    }
    if (this.isIdle()) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async deliverHead(group: string, head: LocalQueueItem): Promise<void> {
    const message = decodeDeliveryMessage(head.body);
    const done = async () => {
      await this.options.items.remove(head.slot);
      this.finishedDuringRescan?.add(head.slot);
      const items = this.groups.get(group) ?? [];
      items.shift();
      if (items.length === 0) {
        this.groups.delete(group);
        this.subscriptionOf.delete(group);
      }
    };
    if (!message) {
      await done();
      return;
    }
    const started = performance.now();
    try {
      const outcome = await deliver(message, this.options.ports, this.options.meter(), {
        maybeRetried: head.tries > 0,
      });
      reportOutcome(message, outcome, performance.now() - started, this.options.metricNamespace);
      if (outcome.kind === 'retry') {
        head.visibleAt = this.options.ports.now() + outcome.afterMs;
        head.tries += 1;
        await this.options.items.postpone(head.slot, head.visibleAt, head.tries);
        return;
      }
      await done();
    } catch {
      // A failure of ours (the store out of reach): the message stays and is handed out again in a while.
      head.visibleAt = this.options.ports.now() + 5_000;
      head.tries += 1;
    }
  }
}
