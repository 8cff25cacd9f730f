/**
 * The webhook deliveries' queue in a deployment: an SQS FIFO queue (why SQS: docs/deploying.md, "Webhooks").
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
import { type DeliveryOutcome, type DeliveryPorts, deliver, reportOutcome } from './webhook-delivery';

/** SQS's longest visibility timeout: a longer wait is taken in steps of this. */
export const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
/** SendMessageBatch's most messages per call. */
const SEND_BATCH = 10;

export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(messages: readonly DeliveryMessage[]): Promise<void> {
    for (let start = 0; start < messages.length; start += SEND_BATCH) {
      const batch = messages.slice(start, start + SEND_BATCH);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((message, index) => ({
            Id: String(index),
            MessageBody: encodeDeliveryMessage(message),
            MessageGroupId: deliveryGroupOf(message),
            MessageDeduplicationId: `${message.subscriptionId}:${message.eventId}`,
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
  /** The delivery queue the batch came from (visibility changes go to it). */
  queueUrl: string;
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
        QueueUrl: options.queueUrl,
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
