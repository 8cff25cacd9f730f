/**
 * The webhook deliveries' queues in a deployment: SQS FIFO queues, one per subscription and a shared overflow queue
 * (delivery-routes.ts; why SQS: docs/deploying.md, "Webhooks").
 *
 * - Each message's group is its subscription and record (`deliveryGroupOf`): SQS hands out a group's messages one
 *   at a time, in order, and only once the one before is deleted, so a record's events reach a subscription in
 *   revision order, while other records (other groups) go on in parallel. Its deduplication id is the subscription
 *   and event, so the change log queueing an event again within five minutes (a retried stream batch) adds nothing.
 * - A failed attempt is not deleted: its visibility is set to the wait before the next attempt (SQS allows at most
 *   12 hours; a longer wait is taken in steps, the delivery seeing from its retry state that it is not due yet) and
 *   it is reported as a failure of the batch, so Lambda leaves it on the queue. The group's later messages in the
 *   same batch are reported too, so they stay behind it.
 * - A parked event goes to the parked queue (also the delivery queue's dead-letter queue, for a message whose
 *   delivery keeps crashing the function), which the dashboard and an alarm watch.
 */
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { CapacityMeter } from '../observability/capacity-meter';
import { logDelivery } from '../observability/change-metrics';
import {
  type DeliveryMessage,
  type DeliveryQueue,
  decodeDeliveryMessage,
  deliveryGroupOf,
  encodeDeliveryMessage,
} from './delivery-queue';
import { queueNameOfArn, queueUrlNamed } from './delivery-routes';
import { type DeliveryOutcome, type DeliveryPorts, deliver, reportOutcome } from './webhook-delivery';
import { DELIVERY_TIMEOUT_MS } from './webhook-transport';

/** SQS's longest visibility timeout: a longer wait is taken in steps of this. */
export const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
/**
 * The time a delivery may take at most: the receiver's 15 s, and the change log's and the queue's calls around it.
 * None is started with less than this left before the function's timeout.
 */
export const DELIVERY_RESERVE_MS = DELIVERY_TIMEOUT_MS + 10_000;
/** SendMessageBatch's most messages per call. */
const SEND_BATCH = 10;

export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly client: SQSClient,
    /** The queue a subscription's deliveries go to (DeliveryRoutes.urlOf, or one queue for a replay). */
    private readonly queueUrlOf: (subscriptionId: string) => string,
    /**
     * Set for a replay (`das webhooks replay`): part of each deduplication id, so a replay is not taken for the
     * change log queueing the same event again within SQS's five minutes.
     */
    private readonly replayId?: string,
  ) {}

  async enqueue(messages: readonly DeliveryMessage[]): Promise<void> {
    // Each queue's messages in the order given (a record's revisions); the queues one after the other.
    const byQueue = new Map<string, DeliveryMessage[]>();
    for (const message of messages) {
      const url = this.queueUrlOf(message.subscriptionId);
      byQueue.set(url, [...(byQueue.get(url) ?? []), message]);
    }
    for (const [url, queued] of byQueue) await this.send(url, queued);
  }

  private async send(queueUrl: string, messages: readonly DeliveryMessage[]): Promise<void> {
    for (let start = 0; start < messages.length; start += SEND_BATCH) {
      const batch = messages.slice(start, start + SEND_BATCH);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((message, index) => ({
            Id: String(index),
            MessageBody: encodeDeliveryMessage(message),
            MessageGroupId: deliveryGroupOf(message),
            MessageDeduplicationId: `${this.replayId ? `${this.replayId}:` : ''}${message.subscriptionId}:${message.eventId}`,
          })),
        }),
      );
      // A partly failed batch fails the stream record: it is read again, and what was queued is deduplicated.
      if (result.Failed && result.Failed.length > 0) {
        const first = result.Failed[0];
        throw new Error(`SQS refused ${result.Failed.length} deliveries (${first?.Code}: ${first?.Message})`);
      }
    }
  }
}

export interface SqsDeliveryOptions {
  client: SQSClient;
  /**
   * A delivery queue of the deployment (the overflow queue): a record's own queue, where its visibility changes go,
   * is the one its `eventSourceARN` names, in the same account and region; this one for a record without it.
   */
  queueUrl: string;
  /**
   * How long the function may still run (Lambda's `getRemainingTimeInMillis`): a delivery is started only while it
   * can finish, receiver's timeout included, before the function's own timeout; the rest of the batch is left on
   * the queue for the next invocation.
   */
  remainingMs?: () => number;
  /** Where parked events go. */
  parkedQueueUrl: string;
  ports: DeliveryPorts;
  metricNamespace: string;
  meter: CapacityMeter;
}

/** Handle a batch of the delivery queue: each group in order, groups in parallel; the failures to leave on it. */
export async function deliverSqsBatch(event: SQSEvent, options: SqsDeliveryOptions): Promise<SQSBatchResponse> {
  const groups = new Map<string, SQSRecord[]>();
  for (const record of event.Records) {
    const group = record.attributes.MessageGroupId ?? record.messageId;
    groups.set(group, [...(groups.get(group) ?? []), record]);
  }
  const failed: string[] = [];
  await Promise.all(
    [...groups.values()].map(async (records) => {
      for (const [index, record] of records.entries()) {
        if (options.remainingMs && options.remainingMs() < DELIVERY_RESERVE_MS) {
          // Too late to wait for a receiver: this one and the group's later ones come again, in order.
          failed.push(...records.slice(index).map((r) => r.messageId));
          return;
        }
        if (!(await deliverRecord(record, options))) {
          // This one waits for its next attempt; the group's later messages wait behind it.
          failed.push(...records.slice(index).map((r) => r.messageId));
          return;
        }
      }
    }),
  );
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
}

/** The queue a record came from. */
function sourceQueueUrl(record: SQSRecord, options: SqsDeliveryOptions): string {
  return record.eventSourceARN
    ? queueUrlNamed(queueNameOfArn(record.eventSourceARN), options.queueUrl)
    : options.queueUrl;
}

/** Deliver one message; true when it may be deleted from the queue. */
async function deliverRecord(record: SQSRecord, options: SqsDeliveryOptions): Promise<boolean> {
  const message = decodeDeliveryMessage(record.body);
  if (!message) return true;
  const started = performance.now();
  let outcome: DeliveryOutcome;
  try {
    outcome = await deliver(message, options.ports, options.meter, {
      maybeRetried: Number(record.attributes.ApproximateReceiveCount) > 1,
    });
  } catch (error) {
    // A failure of ours (the change log or the secret store out of reach): the message comes back after the
    // queue's visibility timeout; after too many, the dead-letter queue (the parked queue) keeps it.
    logDelivery(
      {
        subscriptionId: message.subscriptionId,
        eventId: message.eventId,
        outcome: 'failed',
        durationMs: performance.now() - started,
        reason: error instanceof Error ? `${error.name}: ${error.message}` : 'unknown',
      },
      options.metricNamespace,
    );
    return false;
  }
  reportOutcome(message, outcome, performance.now() - started, options.metricNamespace);
  if (outcome.kind === 'retry') {
    await options.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: sourceQueueUrl(record, options),
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(outcome.afterMs / 1000))),
      }),
    );
    return false;
  }
  if (outcome.kind === 'parked') {
    await options.client.send(
      new SendMessageCommand({
        QueueUrl: options.parkedQueueUrl,
        MessageBody: JSON.stringify({ ...message, reason: outcome.reason }),
        MessageGroupId: deliveryGroupOf(message),
        MessageDeduplicationId: `${message.subscriptionId}:${message.eventId}`,
      }),
    );
  }
  return true;
}
