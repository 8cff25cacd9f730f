/**
 * What the webhook deliveries remember per subscription (docs/interface.md §18), in the events table beside the
 * events, so a deployment and a local run keep the same state the same way:
 *
 * - the subscription's state item: disabled by a receiver's 410 (and when), and its last failure;
 * - per event being retried: how many attempts failed and when the next is due (written only when one fails,
 *   removed when it is delivered or parked: a delivery that succeeds the first time writes nothing here);
 * - per event parked after its last attempt: which event, when, why (`das webhooks status` counts them, a replay
 *   re-sends them).
 *
 * Items expire with the events they are about (DynamoDB TTL tidies up; every reader checks the times itself).
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import {
  WEBHOOK_PARKED_PREFIX,
  webhookAttemptKey,
  webhookParkedKey,
  webhookPartition,
  webhookStateKey,
} from './item-keys';
import { EventAttr } from './table-definitions';

/** A failed attempt, as status shows it: when, the receiver's status (none when it could not be reached), why. */
export interface DeliveryFailure {
  at: number;
  status?: number;
  error: string;
}

export interface SubscriptionState {
  /** Set when a receiver answered 410: the subscription sends nothing until its configuration is deployed again. */
  disabledAt?: number;
  lastFailure?: DeliveryFailure;
}

/** The retry state of one event for one subscription. */
export interface AttemptState {
  /** Attempts that failed so far. */
  failures: number;
  /** When the next attempt is due (epoch ms). */
  nextAt: number;
}

/** An event parked for a subscription after its last attempt failed. */
export interface ParkedEvent {
  eventId: string;
  position: string;
  datasetCode: string;
  id: string;
  revision: number;
  parkedAt: number;
  reason: string;
}

export class WebhookStateStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async subscription(subscriptionId: string, meter: CapacityMeter): Promise<SubscriptionState> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: webhookStateKey(subscriptionId),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Item ?? {};
    const state: SubscriptionState = {};
    if (typeof item.disabledAt === 'number') state.disabledAt = item.disabledAt;
    if (typeof item.failedAt === 'number') {
      state.lastFailure = {
        at: item.failedAt,
        error: String(item.failure ?? ''),
        ...(typeof item.failedStatus === 'number' ? { status: item.failedStatus } : {}),
      };
    }
    return state;
  }

  /** A receiver answered 410: send nothing more until the configuration is deployed again. */
  async disable(subscriptionId: string, at: number, meter: CapacityMeter): Promise<void> {
    await this.setState(subscriptionId, { disabledAt: at }, meter);
  }

  /** Remember a subscription's latest failure, for status. */
  async noteFailure(subscriptionId: string, failure: DeliveryFailure, meter: CapacityMeter): Promise<void> {
    await this.setState(
      subscriptionId,
      { failedAt: failure.at, failure: failure.error, failedStatus: failure.status ?? null },
      meter,
    );
  }

  private async setState(subscriptionId: string, values: Record<string, unknown>, meter: CapacityMeter) {
    const names: Record<string, string> = {};
    const bound: Record<string, unknown> = {};
    const sets = Object.entries(values).map(([name, value], i) => {
      names[`#a${i}`] = name;
      bound[`:a${i}`] = value;
      return `#a${i} = :a${i}`;
    });
    const result = await this.client.send(
      new UpdateCommand({
        TableName: this.table,
        Key: webhookStateKey(subscriptionId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: bound,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  async attempt(subscriptionId: string, eventId: string, meter: CapacityMeter): Promise<AttemptState | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: webhookAttemptKey(subscriptionId, eventId),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Item;
    if (!item || typeof item.failures !== 'number' || typeof item.nextAt !== 'number') return undefined;
    return { failures: item.failures, nextAt: item.nextAt };
  }

  async saveAttempt(
    subscriptionId: string,
    eventId: string,
    state: AttemptState,
    expiresAt: number,
    meter: CapacityMeter,
  ): Promise<void> {
    const result = await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...webhookAttemptKey(subscriptionId, eventId),
          failures: state.failures,
          nextAt: state.nextAt,
          [EventAttr.expires]: Math.ceil(expiresAt / 1000),
        },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  async clearAttempt(subscriptionId: string, eventId: string, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new DeleteCommand({
        TableName: this.table,
        Key: webhookAttemptKey(subscriptionId, eventId),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  async park(subscriptionId: string, event: ParkedEvent, expiresAt: number, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...webhookParkedKey(subscriptionId, event.position, event.eventId),
          ...event,
          [EventAttr.expires]: Math.ceil(expiresAt / 1000),
        },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }

  /** The events parked for a subscription, oldest first, whose position is at or after `fromPosition`. */
  async parked(subscriptionId: string, fromPosition: string, meter: CapacityMeter): Promise<ParkedEvent[]> {
    const parked: ParkedEvent[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': EventAttr.partitionKey, '#sk': EventAttr.sortKey },
          ExpressionAttributeValues: {
            ':pk': webhookPartition(subscriptionId),
            ':from': `${WEBHOOK_PARKED_PREFIX}${fromPosition}`,
            ':to': `${WEBHOOK_PARKED_PREFIX}~`,
          },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) {
        parked.push({
          eventId: item.eventId as string,
          position: item.position as string,
          datasetCode: item.datasetCode as string,
          id: item.id as string,
          revision: item.revision as number,
          parkedAt: item.parkedAt as number,
          reason: item.reason as string,
        });
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return parked;
  }

  /** Forget a parked event (it is being sent again). */
  async unpark(subscriptionId: string, event: ParkedEvent, meter: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new DeleteCommand({
        TableName: this.table,
        Key: webhookParkedKey(subscriptionId, event.position, event.eventId),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addWrite(result.ConsumedCapacity);
  }
}
