/**
 * Single-use nonces of signature version 2 (docs/interface.md §16): a nonce is claimed with one conditional PutItem in
 * the quota table (its key: `nonceKey`, item-keys.ts), and a second claim of the same nonce fails its condition.
 *
 * The item carries `expiresAt` (epoch seconds): the end of the timestamp window of the request that claimed
 * it. DynamoDB's TTL deletes it some time after that, but correctness does not wait for TTL (nor depend on
 * it: dynalite has none): the condition also lets a claim overwrite an item whose `expiresAt` has passed. A
 * replay inside the window finds the item and fails; after the window its timestamp fails first (1003).
 *
 * Cost: one write unit per signed version-2 request (the item is under 1 KB); a refused replay is one failed
 * conditional write, billed the same and counted in the request's meter.
 */
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { nonceKey } from './item-keys';

export interface NonceStore {
  /** True when the nonce was free and is now taken until `expiresAtMs`; false when it was taken already. */
  claim(appCode: string, nonce: string, expiresAtMs: number, capacity: CapacityMeter): Promise<boolean>;
}

/** What a refused conditional write of a small item costs, though DynamoDB does not report it. */
const FAILED_CLAIM_UNITS = 1;

export class DynamoNonceStore implements NonceStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(appCode: string, nonce: string, expiresAtMs: number, capacity: CapacityMeter): Promise<boolean> {
    try {
      const result = await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...nonceKey(appCode, nonce), expiresAt: Math.ceil(expiresAtMs / 1000) },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': Math.floor(this.now() / 1000) },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      capacity.addWrite(result.ConsumedCapacity);
      return true;
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
      capacity.addWrite({ CapacityUnits: FAILED_CLAIM_UNITS });
      return false;
    }
  }
}
