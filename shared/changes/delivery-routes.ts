/**
 * Which SQS queue carries a subscription's deliveries in a deployment (docs/interface.md §18, docs/deploying.md
 * "Change log and webhooks"). Every subscription the deployed configuration names (up to 40) has a FIFO queue of
 * its own, each read by its own event source mapping with its own maximum concurrency: a receiver that hangs holds
 * only its own queue's pollers, so another subscription's deliveries never wait behind it. A subscription with no
 * queue of its own (past the first 40, or one a deploy adds, until the stream function is updated) goes to the
 * shared overflow queue, the stage's `…-deliveries.fifo`.
 *
 * Queue names follow from the stage and the subscription id alone, so the writer, the delivery function and
 * `das webhooks replay` find a queue without a lookup table: the writer is told only which subscriptions have one
 * (`WEBHOOK_QUEUES`), and every URL is the overflow queue's with the name replaced.
 */
import { createHash } from 'node:crypto';

/** SQS's longest queue name, `.fifo` included. */
const MAX_QUEUE_NAME = 80;
const FIFO_SUFFIX = '.fifo';

/** The stage's shared overflow queue (`das webhooks replay --stage` falls back to it). */
export function deliveryQueueNameFor(stage: string): string {
  return `data-access-service-${stage}-deliveries${FIFO_SUFFIX}`;
}

/**
 * A subscription's own queue: `data-access-service-<stage>-deliveries-<id>.fifo`, or, when that is longer than SQS
 * allows, the id's start and a digest of the whole id (ids are codes: letters, digits, `_` and `-`, as queue names).
 */
export function subscriptionQueueNameFor(stage: string, subscriptionId: string): string {
  const prefix = `data-access-service-${stage}-deliveries-`;
  const whole = `${prefix}${subscriptionId}${FIFO_SUFFIX}`;
  if (whole.length <= MAX_QUEUE_NAME) return whole;
  const digest = createHash('sha256').update(subscriptionId).digest('hex').slice(0, 12);
  const room = MAX_QUEUE_NAME - prefix.length - FIFO_SUFFIX.length - digest.length - 1;
  return `${prefix}${subscriptionId.slice(0, Math.max(0, room))}-${digest}${FIFO_SUFFIX}`;
}

/** The URL of the queue named `name` in the account and region of `sameAccountUrl`. */
export function queueUrlNamed(name: string, sameAccountUrl: string): string {
  return new URL(name, sameAccountUrl).toString();
}

/** A queue's name from its ARN (`arn:aws:sqs:<region>:<account>:<name>`), as Lambda gives it on each record. */
export function queueNameOfArn(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1);
}

export class DeliveryRoutes {
  private readonly own: ReadonlySet<string>;

  constructor(
    /** The stage's overflow queue. */
    readonly overflowUrl: string,
    private readonly stage: string,
    /** The subscriptions that have a queue of their own in this deployment. */
    subscriptionsWithQueues: Iterable<string>,
  ) {
    this.own = new Set(subscriptionsWithQueues);
  }

  /** Where a subscription's deliveries are put. */
  urlOf(subscriptionId: string): string {
    if (!this.own.has(subscriptionId)) return this.overflowUrl;
    return queueUrlNamed(subscriptionQueueNameFor(this.stage, subscriptionId), this.overflowUrl);
  }
}

/** `WEBHOOK_QUEUES` (runtime/environment.ts): the subscriptions with a queue of their own, comma-separated. */
export function encodeSubscriptionQueues(subscriptionIds: readonly string[]): string {
  return subscriptionIds.join(',');
}
