/**
 * The queue between the change log and the webhook deliveries (docs/interface.md §18), as a port: the change
 * log puts one message per subscription and event on it; the deliveries take them, a record's messages in the
 * order they were put (its revisions), different records independently. In a deployment it is an SQS FIFO queue
 * per subscription (changes/delivery-routes.ts) with one message group per subscription and record
 * (changes/sqs-deliveries.ts); in a local run, its twin in the events table (changes/local-deliveries.ts).
 */
import { createHash } from 'node:crypto';

/** One event to send to one subscription: a reference, the event itself stays in the change log. */
export interface DeliveryMessage {
  subscriptionId: string;
  datasetCode: string;
  id: string;
  revision: number;
  eventId: string;
  /** The event's position in the change log (parked events are listed in that order). */
  position: string;
}

export interface DeliveryQueue {
  /** Put messages on the queue, in order; a message already there (same subscription and event) is not put twice. */
  enqueue(messages: readonly DeliveryMessage[]): Promise<void>;
}

/**
 * The order group of a message: one per subscription and record, so a record's events reach a subscription one
 * after the other and records never wait for each other. A digest, to fit SQS's 128 characters.
 */
export function deliveryGroupOf(message: Pick<DeliveryMessage, 'subscriptionId' | 'datasetCode' | 'id'>): string {
  return createHash('sha256')
    .update(`${message.subscriptionId}\n${message.datasetCode}\n${message.id}`)
    .digest('base64url');
}

/** A message as the queue carries it (JSON), and back; `undefined` for a body that is not one. */
export function encodeDeliveryMessage(message: DeliveryMessage): string {
  return JSON.stringify(message);
}

export function decodeDeliveryMessage(body: string): DeliveryMessage | undefined {
  try {
    const value = JSON.parse(body) as Partial<DeliveryMessage>;
    const strings = [value.subscriptionId, value.datasetCode, value.id, value.eventId, value.position];
    if (strings.some((s) => typeof s !== 'string') || typeof value.revision !== 'number') return undefined;
    return value as DeliveryMessage;
  } catch {
    return undefined;
  }
}
