/**
 * Local runs: the webhook deliveries' queue and its consumer, in `npm start`'s own process, with what SQS gives a
 * deployment (sqs-deliveries.ts): messages kept in the store (the events table), so a `kill -9` loses none; one
 * group per subscription and record, handed out one message at a time and in order; a failed attempt handed out
 * again after the schedule's wait; a parked event recorded for status and replay. The deliveries themselves are
 * the deployment's code (webhook-delivery.ts), schedule included (a local run may scale it down for tests).
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
  /** Groups delivered at once (default 16). */
  concurrency?: number;
}

/** The longest the consumer sleeps without looking at the queue. */
const MAX_SLEEP_MS = 60_000;

export class LocalDeliveries implements DeliveryQueue {
  private readonly groups = new Map<string, LocalQueueItem[]>();
  private readonly busy = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: LocalDeliveryOptions) {}

  /** Load what the queue held when the process last stopped (every message counts as maybe tried already). */
  async start(): Promise<void> {
    for (const item of await this.options.items.all()) this.keep({ ...item, tries: Math.max(item.tries, 1) });
    this.stopped = false;
    this.pump();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.running);
  }

  async enqueue(messages: readonly DeliveryMessage[]): Promise<void> {
    for (const message of messages) {
      const group = deliveryGroupOf(message);
      const item: LocalQueueItem = {
        slot: localQueueSlot(group, message.revision),
        group,
        body: encodeDeliveryMessage(message),
        visibleAt: 0,
        tries: 0,
      };
      if (await this.options.items.add(item)) this.keep(item);
    }
    this.pump();
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
    const items = this.groups.get(item.group) ?? [];
    if (items.some((existing) => existing.slot === item.slot)) return;
    items.push(item);
    items.sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0));
    this.groups.set(item.group, items);
  }

  /** Start every group whose head is due, as far as the concurrency allows; sleep until the next one is due. */
  private pump(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const now = this.options.ports.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [group, items] of this.groups) {
      const head = items[0];
      if (!head || this.busy.has(group)) continue;
      if (head.visibleAt > now) {
        next = Math.min(next, head.visibleAt);
        continue;
      }
      if (this.busy.size >= (this.options.concurrency ?? 16)) break;
      this.busy.add(group);
      const run = this.deliverHead(group, head).finally(() => {
        this.busy.delete(group);
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
      const items = this.groups.get(group) ?? [];
      items.shift();
      if (items.length === 0) this.groups.delete(group);
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
