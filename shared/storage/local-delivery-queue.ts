/**
 * Local runs: the items of the queue that stands in for SQS between the change log and the webhook deliveries
 * (changes/local-deliveries.ts says how it is used). One item per subscription and event, in the events table's
 * local partition, sorted by the message's group (subscription and record) and then its revision, so a group's
 * messages read back in the order they must be sent. Putting a message that is there already changes nothing.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { CapacityMeter } from '../observability/capacity-meter';
import { conditionalWrite } from './conditional-write';
import { LOCAL_DELIVERY_PARTITION } from './item-keys';
import { EventAttr } from './table-definitions';

export interface LocalQueueItem {
  /** Its place in the queue: group, then revision. */
  slot: string;
  group: string;
  /** The message, as JSON. */
  body: string;
  /** When it may be handed out (epoch ms). */
  visibleAt: number;
  /** How many times it was handed out and not finished. */
  tries: number;
}

/** The slot of a message: its group and its revision (ten digits, so they sort). */
export function localQueueSlot(group: string, revision: number): string {
  return `${group}#${String(revision).padStart(10, '0')}`;
}

export class LocalDeliveryQueueItems {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  private key(slot: string): Record<string, string> {
    return { [EventAttr.partitionKey]: LOCAL_DELIVERY_PARTITION, [EventAttr.sortKey]: slot };
  }

  /** Add a message; false when its slot holds one already. */
  async add(item: LocalQueueItem): Promise<boolean> {
    const written = await conditionalWrite(new CapacityMeter(), () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...this.key(item.slot),
            group: item.group,
            body: item.body,
            visibleAt: item.visibleAt,
            tries: item.tries,
          },
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': EventAttr.sortKey },
        }),
      ),
    );
    return written !== undefined;
  }

  /** Every message, in slot order. */
  async all(): Promise<LocalQueueItem[]> {
    const items: LocalQueueItem[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': EventAttr.partitionKey },
          ExpressionAttributeValues: { ':pk': LOCAL_DELIVERY_PARTITION },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of result.Items ?? []) {
        items.push({
          slot: item[EventAttr.sortKey] as string,
          group: item.group as string,
          body: item.body as string,
          visibleAt: item.visibleAt as number,
          tries: item.tries as number,
        });
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  /** Hand a message out again at `visibleAt`. */
  async postpone(slot: string, visibleAt: number, tries: number): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.table,
        Key: this.key(slot),
        UpdateExpression: 'SET visibleAt = :at, tries = :tries',
        ExpressionAttributeValues: { ':at': visibleAt, ':tries': tries },
      }),
    );
  }

  async remove(slot: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: this.key(slot) }));
  }
}
