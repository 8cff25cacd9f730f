/**
 * The quota store: admits or refuses a request with ONE conditional UpdateItem on the application's quota item,
 * and releases its concurrency lease with one more write when the request ends (docs/interface.md §7).
 *
 * Why it is exact without transactions, reads or TTL:
 * - Admission is a single conditional UpdateItem. DynamoDB evaluates the condition and applies the update
 *   atomically per item, so concurrent requests are serialised on the item: the (N+1)-th increment of a window
 *   finds the counter at N and fails, however many requests race. A refused request changes nothing, so it does
 *   not count against any window (a client that slows down gets its full allowance).
 * - Windows are attributes named by their start (`windows.ts`): a new window starts at zero by itself. Ended
 *   windows' counters are removed by later writes, not by TTL.
 * - Leases are a map lease id -> expiry; the condition `size(leases) < concurrent` bounds requests in flight.
 *   A crashed invocation never releases its lease, and an expired lease still counts in `size()`. Expired leases
 *   are purged without a read-modify-write race because removing a map entry by id is idempotent and an expired
 *   lease can never become live again:
 *   1. Every admission also REMOVEs the expired leases and ended windows this container saw in the item the last
 *      time (the successful update returns the whole item, ALL_NEW, at no extra capacity). If another container
 *      removed them first, the REMOVE is a no-op. The condition still counts them (conservative, never lax).
 *   2. When expired leases are what fills the map, the admission fails. The failure carries the item as it was
 *      (ReturnValuesOnConditionCheckFailure ALL_OLD); if no limit is really reached, the request tries once more,
 *      removing k expired leases and asserting `attribute_exists(leases.<id>)` for each, with the room condition
 *      `size(leases) < concurrent + k`. Present-and-expired means live leases <= size - k < concurrent: exact.
 *      If someone removed one of them in between, the assertion fails and the request re-reads the failure.
 *   When the map this container last saw is already full that way, the first try asserts them directly.
 *   The follow-up write only happens after a crash left leases behind, never on the common path.
 * - The lease map must exist before `SET leases.<id>` can work, and `if_not_exists` cannot create a map and
 *   set one of its entries in the same expression. So the condition also requires `attribute_exists(leases)`;
 *   a new application (or an item TTL removed) fails once, creates the empty map, and tries again.
 * - A refusal must name the limit reached (message, `Retry-After`). DynamoDB returns the old item with the
 *   ConditionalCheckFailedException: no read. Stores that do not (dynalite) get one consistent read on the
 *   refusal path only; the success path never reads.
 *
 * Cost: an admitted request is one write (plus one for the release); a refused one is one failed write, which
 * DynamoDB bills (by item size) but does not report, so it is estimated into the request's meter.
 */
import { randomBytes } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Quota } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import { quotaKey } from '../records/item-keys';
import {
  admitExpression,
  decodeQuotaItem,
  estimateWriteUnits,
  explainRefusal,
  NO_PURGE,
  type Purge,
  plainAttributes,
  planPurge,
  QuotaAttr,
  type QuotaItem,
  windowUsage,
} from './quota-item';
import type { LimitName, WindowUsage } from './rate-limit';
import { currentWindows } from './windows';

export interface AdmitRequest {
  appCode: string;
  quota: Quota;
  /** Epoch ms: decides the windows and which leases have expired. */
  now: number;
  capacity: CapacityMeter;
}

export type QuotaDecision =
  | { admitted: true; leaseId: string; usage: WindowUsage[] }
  | { admitted: false; limit: LimitName; value: number; retryAfterSeconds: number; usage: WindowUsage[] };

export interface ReleaseRequest {
  appCode: string;
  leaseId: string;
  capacity: CapacityMeter;
}

/** What the quota middleware needs: admit a request, release its lease. */
export interface QuotaGate {
  admit(request: AdmitRequest): Promise<QuotaDecision>;
  release(request: ReleaseRequest): Promise<void>;
}

export interface QuotaStoreOptions {
  /**
   * How long a lease holds a slot when its request never releases it. Above the function timeout (28 s), so a
   * running request's lease never looks expired.
   */
  leaseMs?: number;
  /** Conditional writes one admission may take (first try, map creation, expired-lease purges). */
  maxAttempts?: number;
}

export const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_MAX_ATTEMPTS = 4;

export class QuotaStore implements QuotaGate {
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  /** The item of each application as this container last saw it: tells the next write what it may purge. */
  private readonly lastSeen = new Map<string, QuotaItem>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: QuotaStoreOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  async admit(request: AdmitRequest): Promise<QuotaDecision> {
    const { appCode, quota, now, capacity } = request;
    const windows = currentWindows(now);
    const leaseId = newLeaseId();
    const known = this.lastSeen.get(appCode);
    let purge: Purge = planPurge(known, now);
    // When the map as last seen is full, counting leases that have expired since, the plain condition would
    // fail: assert and discount those leases on the first try instead of after a failed write.
    let asserted: string[] = Object.keys(known?.leases ?? {}).length >= quota.concurrent ? purge.expiredLeases : [];
    let seen: QuotaItem | undefined;

    for (let attempt = 0; attempt < this.maxAttempts; attempt += 1) {
      const parts = admitExpression({
        windows,
        quota,
        leaseId,
        leaseExpiry: now + this.leaseMs,
        purge,
        assertedExpiredLeases: asserted,
      });
      try {
        const result = await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: quotaKey(appCode),
            ...parts,
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            ReturnConsumedCapacity: 'TOTAL',
          }),
        );
        capacity.addWrite(result.ConsumedCapacity);
        const item = decodeQuotaItem(result.Attributes);
        this.remember(appCode, item);
        return { admitted: true, leaseId, usage: windowUsage(item, quota, now) };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        seen = await this.itemOfFailure(appCode, error, capacity);
        this.remember(appCode, seen);
      }

      const refusal = explainRefusal(seen, quota, now);
      if (refusal.kind === 'exceeded') {
        return {
          admitted: false,
          limit: refusal.limit,
          value: refusal.value,
          retryAfterSeconds: refusal.retryAfterSeconds,
          usage: windowUsage(seen, quota, now),
        };
      }
      if (refusal.kind === 'uninitialized') {
        await this.createLeaseMap(appCode, capacity);
        purge = NO_PURGE;
        asserted = [];
      } else {
        purge = planPurge(seen, now);
        asserted = refusal.expiredLeases;
      }
    }
    // Still contended after every attempt: refuse rather than admit without the condition's guarantee.
    return {
      admitted: false,
      limit: 'concurrent',
      value: quota.concurrent,
      retryAfterSeconds: 1,
      usage: windowUsage(seen, quota, now),
    };
  }

  async release(request: ReleaseRequest): Promise<void> {
    const { appCode, leaseId, capacity } = request;
    // The lease is gone whatever the outcome below: the next admission must neither count nor assert it.
    const known = this.lastSeen.get(appCode)?.leases;
    if (known) delete known[leaseId];
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: quotaKey(appCode),
          UpdateExpression: 'REMOVE #leases.#lease',
          // Without it, releasing a lease already purged (or from an item TTL removed) would create an item.
          ConditionExpression: 'attribute_exists(#leases.#lease)',
          ExpressionAttributeNames: { '#leases': QuotaAttr.leases, '#lease': leaseId },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      capacity.addWrite(result.ConsumedCapacity);
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
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
      new GetCommand({
        TableName: this.tableName,
        Key: quotaKey(appCode),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    capacity.addRead(result.ConsumedCapacity);
    return decodeQuotaItem(result.Item);
  }

  /** Create the empty lease map (idempotent: concurrent first requests all succeed, none overwrites). */
  private async createLeaseMap(appCode: string, capacity: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: quotaKey(appCode),
        UpdateExpression: 'SET #leases = if_not_exists(#leases, :empty)',
        ExpressionAttributeNames: { '#leases': QuotaAttr.leases },
        ExpressionAttributeValues: { ':empty': {} },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    capacity.addWrite(result.ConsumedCapacity);
  }

  private remember(appCode: string, item: QuotaItem | undefined): void {
    if (item) this.lastSeen.set(appCode, item);
    else this.lastSeen.delete(appCode);
  }
}

/** 72 random bits, URL-safe: unique enough for requests in flight, short enough to keep the item small. */
function newLeaseId(): string {
  return randomBytes(9).toString('base64url');
}

function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
