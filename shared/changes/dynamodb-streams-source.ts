/**
 * A table's DynamoDB stream read through the DynamoDB Streams API, for the stream poller (stream-poller.ts): what a
 * local run uses against another DynamoDB endpoint that keeps streams (moto's server, DynamoDB Local), so the change
 * log there reads the real stream records such an endpoint writes, in the form Lambda hands the deployment's stream
 * function.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { ItemChangeRecord } from './change-stream';
import type { ChangeStreamSource } from './stream-poller';

export class DynamoDbStreamsSource implements ChangeStreamSource {
  private streamArn: string | undefined;

  constructor(
    private readonly client: DynamoDBStreamsClient,
    readonly name: string,
  ) {}

  private async arn(): Promise<string> {
    if (this.streamArn) return this.streamArn;
    const listed = await this.client.send(new ListStreamsCommand({ TableName: this.name }));
    const arn = listed.Streams?.[0]?.StreamArn;
    if (!arn) throw new Error(`table ${this.name} has no stream`);
    this.streamArn = arn;
    return arn;
  }

  async shards(): Promise<string[]> {
    const shards: string[] = [];
    let start: string | undefined;
    do {
      const described = await this.client.send(
        new DescribeStreamCommand({ StreamArn: await this.arn(), ExclusiveStartShardId: start }),
      );
      for (const shard of described.StreamDescription?.Shards ?? []) if (shard.ShardId) shards.push(shard.ShardId);
      start = described.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return shards;
  }

  async read(shard: string, after: string | undefined, limit: number): Promise<ItemChangeRecord[]> {
    const iterator = await this.client.send(
      new GetShardIteratorCommand({
        StreamArn: await this.arn(),
        ShardId: shard,
        ...(after === undefined
          ? { ShardIteratorType: 'TRIM_HORIZON' }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }),
      }),
    );
    if (!iterator.ShardIterator) return [];
    const result = await this.client.send(
      new GetRecordsCommand({ ShardIterator: iterator.ShardIterator, Limit: limit }),
    );
    return (result.Records ?? []).map((record) => ({
      eventName: record.eventName,
      dynamodb: {
        Keys: record.dynamodb?.Keys as Record<string, AttributeValue> | undefined,
        NewImage: record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined,
        OldImage: record.dynamodb?.OldImage as Record<string, AttributeValue> | undefined,
        SequenceNumber: record.dynamodb?.SequenceNumber,
      },
    }));
  }
}
