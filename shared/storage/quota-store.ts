/**
 * The quota store: the conditional UpdateItem on an application's quota item that the lease gate
 * (quota/lease-gate.ts) admits requests with, and the gate itself for this container (docs/interface.md §7).
 *
 * - A write is one UpdateItem (`writeExpression` in quota-item.ts). DynamoDB evaluates the condition and applies
 *   the update atomically per item, so concurrent environments are serialised on the item; quota/quota-image.ts
 *   says why that keeps every limit exact.
 * - A success returns the item as it became (ALL_NEW), a failure the item as it was
 *   (ReturnValuesOnConditionCheckFailure ALL_OLD): the environment learns the state from its own write, never
 *   by a read. Stores that return no item with the failure (dynalite) get one consistent read, on that path only.
 * - The lease map must exist before `SET leases.<id>` can work, and `if_not_exists` cannot create a map and set
 *   one of its entries in the same expression. So the condition also requires `attribute_exists(leases)`; a new
 *   application (or an item TTL removed) fails once, creates the empty map, and tries again.
 *
 * Cost: most admitted requests write nothing (their environment holds a live lease and a token); the others, one
 * write of 1 WCU (the item stays under 1 KB), and one more to give the slot back when nearly every slot is held. A refusal the environment's image proves writes nothing; any other
 * is one failed write, which DynamoDB bills (by item size) but does not report, so it is estimated into the
 * request's meter.
 */
import { type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { AdmitRequest, QuotaDecision, QuotaGate } from '../quota/admission';
import { LeaseGate, type QuotaWriter } from '../quota/lease-gate';
import { HolderPool } from '../quota/lease-holder';
import type { QuotaImage, QuotaWrite } from '../quota/quota-image';
import { quotaKey } from './item-keys';
import {
  decodeQuotaItem,
  estimateWriteUnits,
  plainAttributes,
  QuotaAttr,
  wireAttributes,
  writeExpression,
} from './quota-item';

export class QuotaStore implements QuotaGate, QuotaWriter {
  private readonly gate: LeaseGate;
  /** The item as last seen, per application: what a failed write is estimated to cost. */
  private readonly lastSeen = new Map<string, QuotaImage>();

  constructor(
    /** The low-level client: the quota's values are few and simple, written out by `wireAttributes`. */
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** This process's function environments (one per request in flight; one on Lambda). */
    pool: HolderPool = new HolderPool(),
  ) {
    this.gate = new LeaseGate(this, pool);
  }

  admit(request: AdmitRequest): Promise<QuotaDecision> {
    return this.gate.admit(request);
  }

  async write(
    appCode: string,
    write: QuotaWrite,
    capacity: CapacityMeter,
  ): Promise<{ written: boolean; image: QuotaImage | undefined }> {
    const parts = writeExpression(write);
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: wireAttributes(quotaKey(appCode)),
          ...parts,
          ExpressionAttributeValues: wireAttributes(parts.ExpressionAttributeValues),
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      capacity.addWrite(result.ConsumedCapacity);
      const image = decodeQuotaItem(result.Attributes && plainAttributes(result.Attributes));
      this.remember(appCode, image);
      return { written: true, image };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const image = await this.itemOfFailure(appCode, error, capacity);
      this.remember(appCode, image);
      return { written: false, image };
    }
  }

  /** Create the empty lease map (idempotent: concurrent first requests all succeed, none overwrites). */
  async createLeaseMap(appCode: string, capacity: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: wireAttributes(quotaKey(appCode)),
        UpdateExpression: 'SET #leases = if_not_exists(#leases, :empty)',
        ExpressionAttributeNames: { '#leases': QuotaAttr.leases },
        ExpressionAttributeValues: { ':empty': { M: {} } },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    capacity.addWrite(result.ConsumedCapacity);
  }

  async release(appCode: string, holder: string, expiry: number, capacity: CapacityMeter): Promise<void> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: wireAttributes(quotaKey(appCode)),
          UpdateExpression: 'REMOVE #leases.#me',
          // Only the lease as this holder wrote it: one another environment already removed stays removed.
          ConditionExpression: '#leases.#me = :mine',
          ExpressionAttributeNames: { '#leases': QuotaAttr.leases, '#me': holder },
          ExpressionAttributeValues: { ':mine': { N: String(expiry) } },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      capacity.addWrite(result.ConsumedCapacity);
    } catch (error) {
      // The lease lapses on its own: a failed release only keeps the slot until then.
      if (isConditionalCheckFailed(error))
        capacity.writeUnits += estimateWriteUnits(appCode, this.lastSeen.get(appCode));
    }
  }

  /** The item as it was when the condition failed: from the failure itself, else (dynalite) one read. */
  private async itemOfFailure(appCode: string, error: unknown, capacity: CapacityMeter) {
    const raw = (error as { Item?: Record<string, unknown> }).Item;
    if (raw) {
      const item = decodeQuotaItem(plainAttributes(raw));
      capacity.writeUnits += estimateWriteUnits(appCode, item);
      return item;
    }
    capacity.writeUnits += estimateWriteUnits(appCode, this.lastSeen.get(appCode));
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: wireAttributes(quotaKey(appCode)),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    capacity.addRead(result.ConsumedCapacity);
    return decodeQuotaItem(result.Item && plainAttributes(result.Item));
  }

  private remember(appCode: string, item: QuotaImage | undefined): void {
    if (item) this.lastSeen.set(appCode, item);
    else this.lastSeen.delete(appCode);
  }
}

function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
