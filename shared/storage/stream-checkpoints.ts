/**
 * Local runs: how far the change log's writer has read a change stream, per shard (changes/stream-poller.ts), in
 * the events table. In a deployment Lambda's event source keeps this for the stream function.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { streamCheckpointKey } from './item-keys';

export class StreamCheckpoints {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The sequence number of the last item change handled; `undefined` before the first. */
  async get(stream: string, shard: string): Promise<string | undefined> {
    const result = await this.client.send(
      new GetCommand({ TableName: this.table, Key: streamCheckpointKey(stream, shard), ConsistentRead: true }),
    );
    return typeof result.Item?.sequence === 'string' ? result.Item.sequence : undefined;
  }

  async set(stream: string, shard: string, sequence: string): Promise<void> {
    await this.client.send(
      new PutCommand({ TableName: this.table, Item: { ...streamCheckpointKey(stream, shard), sequence } }),
    );
  }
}
