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
 *   refusal path only; the success path never reads. No decision trusts that read to be the state that failed
 *   the write: when it shows no limit reached, nothing was asserted and nothing has expired, the write can only
 *   have met requests in flight since released (counters only grow within a window), and it is refused as such.
 * - A lease lasts what the invocation had left plus a small margin (`leases.ts`), and a concurrency refusal's
 *   `Retry-After` is the time until the oldest live lease expires: after a crash, the caller is told how long.
 *
 * Cost: an admitted request is one write (plus one for the release); a refused one is one failed write, which
 * DynamoDB bills (by item size) but does not report, so it is estimated into the request's meter. The item
 * stays under 1 KB (`quota-item.ts`), so each of these writes is exactly 1 WCU whatever the concurrency.
 *
 * An application whose limits one item cannot carry spreads over shares (`shares.ts`): a request starts at the
 * share this container knows least busy (at random on a tie), and moves to the next share only when refused.
 * Refusals from a share's windows are remembered until the window ends, so once a container has seen every
 * share full a refusal is again one failed write; each share discovered full costs a request one more.
 */
import { randomBytes } from 'node:crypto';
import { type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { Quota } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { AdmitRequest, QuotaDecision, QuotaGate, ReleaseRequest } from '../quota/admission';
import { LEASE_MARGIN_MS, LONGEST_FUNCTION_TIMEOUT_MS } from '../quota/leases';
import { LIMIT_OF_WINDOW, type LimitName, type WindowUsage } from '../quota/rate-limit';
import { shareCount, shareQuota } from '../quota/shares';
import { currentWindows, secondsUntil } from '../quota/windows';
import { quotaKey } from './item-keys';
import {
  admitExpression,
  decodeQuotaItem,
  estimateWriteUnits,
  explainRefusal,
  liveLeaseCount,
  NO_PURGE,
  oldestLiveLeaseExpiry,
  type Purge,
  plainAttributes,
  planPurge,
  QuotaAttr,
  type QuotaItem,
  windowUsage,
  wireAttributes,
} from './quota-item';

export interface QuotaStoreOptions {
  /**
   * How long a lease holds a slot when neither the request says (`AdmitRequest.leaseMs`) nor releases it:
   * the longest function timeout plus the margin.
   */
  leaseMs?: number;
  /** Conditional writes one admission may take on one share (first try, map creation, expired-lease purges). */
  maxAttempts?: number;
  /** How many shares an application's limits need (default: the rule of `shares.ts`). */
  shares?: (quota: Quota) => number;
  /** Where a request starts among `count` shares (default: at random). */
  firstShare?: (count: number) => number;
}

export const DEFAULT_LEASE_MS = LONGEST_FUNCTION_TIMEOUT_MS + LEASE_MARGIN_MS;
const DEFAULT_MAX_ATTEMPTS = 4;

/** A share's answer to one request. */
type ShareAnswer =
  | { admitted: true; item: QuotaItem | undefined }
  | { admitted: false; limit: LimitName; retryAfterSeconds: number; item: QuotaItem | undefined };

export class QuotaStore implements QuotaGate {
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly shares: (quota: Quota) => number;
  private readonly firstShare: (count: number) => number;
  /** Each share's item as this container last saw it: tells the next write what it may purge. */
  private readonly lastSeen = new Map<string, QuotaItem>();
  /** Admissions of this container still waiting for their share's answer: leases about to be taken. */
  private readonly admitting = new Map<string, number>();

  constructor(
    /** The low-level client: the quota's values are few and simple, written out by `wireAttributes`. */
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    options: QuotaStoreOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.shares = options.shares ?? shareCount;
    this.firstShare = options.firstShare ?? ((count) => Math.floor(Math.random() * count));
  }

  async admit(request: AdmitRequest): Promise<QuotaDecision> {
    const { appCode, quota, now } = request;
    const count = this.shares(quota);
    const leaseId = newLeaseId();
    const refusals: Extract<ShareAnswer, { admitted: false }>[] = [];
    for (const share of this.shareOrder(appCode, quota, count, now)) {
      const shareLimits = shareQuota(quota, count, share);
      // A share seen full for a current window stays full until that window ends: no need to ask it again.
      const known = refusals.length > 0 ? this.windowRefusal(appCode, share, shareLimits, now) : undefined;
      if (known) {
        refusals.push(known);
        continue;
      }
      const name = shareName(appCode, share);
      this.admitting.set(name, (this.admitting.get(name) ?? 0) + 1);
      let answer: ShareAnswer;
      try {
        answer = await this.admitOnShare(request, share, shareLimits, leaseId);
      } finally {
        const left = (this.admitting.get(name) ?? 1) - 1;
        if (left > 0) this.admitting.set(name, left);
        else this.admitting.delete(name);
      }
      if (answer.admitted) {
        return { admitted: true, lease: { id: leaseId, share }, usage: this.usage(appCode, quota, count, now) };
      }
      refusals.push(answer);
    }
    // Every share refused: the caller may retry when the first of them has room again.
    const soonest = refusals.reduce((a, b) => (b.retryAfterSeconds < a.retryAfterSeconds ? b : a));
    return {
      admitted: false,
      limit: soonest.limit,
      value: quota[soonest.limit],
      retryAfterSeconds: soonest.retryAfterSeconds,
      usage: this.usage(appCode, quota, count, now),
    };
  }

  /**
   * Shares in the order a request tries them: those not known full for a window first, then the ones with the
   * fewest requests in flight as this container last saw them, counting its own admissions still under way,
   * from a random one on a tie. Only the order depends on what this container knows; every share is still asked.
   */
  private shareOrder(appCode: string, quota: Quota, count: number, now: number): number[] {
    if (count === 1) return [0];
    const start = this.firstShare(count);
    const ranked = Array.from({ length: count }, (_, k) => {
      const share = (start + k) % count;
      const limits = shareQuota(quota, count, share);
      const seen = this.lastSeen.get(shareName(appCode, share));
      const full = this.windowRefusal(appCode, share, limits, now) !== undefined;
      const inFlight = (seen ? liveLeaseCount(seen, now) : 0) + (this.admitting.get(shareName(appCode, share)) ?? 0);
      return { share, k, full, load: inFlight / limits.concurrent };
    });
    ranked.sort((a, b) => Number(a.full) - Number(b.full) || a.load - b.load || a.k - b.k);
    return ranked.map((entry) => entry.share);
  }

  /** The refusal a share's current windows give, as this container last saw them; undefined when it has room. */
  private windowRefusal(appCode: string, share: number, limits: Quota, now: number) {
    const seen = this.lastSeen.get(shareName(appCode, share));
    if (!seen) return undefined;
    const binding = windowUsage(seen, limits, now)
      .filter((usage) => usage.used >= usage.limit)
      .sort((a, b) => b.end - a.end)[0];
    if (!binding) return undefined;
    return {
      admitted: false as const,
      limit: LIMIT_OF_WINDOW[binding.kind] as LimitName,
      retryAfterSeconds: secondsUntil(binding.end, now),
      item: seen,
    };
  }

  /** The application's usage: the sum of its shares' counters as this container last saw them. */
  private usage(appCode: string, quota: Quota, count: number, now: number): WindowUsage[] {
    const total = windowUsage(undefined, quota, now);
    for (let share = 0; share < count; share += 1) {
      const seen = this.lastSeen.get(shareName(appCode, share));
      windowUsage(seen, quota, now).forEach((usage, k) => {
        (total[k] as WindowUsage).used += usage.used;
      });
    }
    return total;
  }

  /** One share's conditional write (and the writes a new item or expired leases call for). */
  private async admitOnShare(
    request: AdmitRequest,
    share: number,
    quota: Quota,
    leaseId: string,
  ): Promise<ShareAnswer> {
    const { appCode, now, capacity } = request;
    const name = shareName(appCode, share);
    const windows = currentWindows(now);
    const known = this.lastSeen.get(name);
    let purge: Purge = planPurge(known, now);
    // When the map as last seen is full, counting leases that have expired since, the plain condition would
    // fail: assert and discount those leases on the first try instead of after a failed write.
    let asserted: string[] = Object.keys(known?.leases ?? {}).length >= quota.concurrent ? purge.expiredLeases : [];
    let seen: QuotaItem | undefined;
    // Whether the lease map surely existed when the write was sent: then only a limit or an assertion can fail it.
    let mapExisted = known?.leases !== undefined;

    for (let attempt = 0; attempt < this.maxAttempts; attempt += 1) {
      const parts = admitExpression({
        windows,
        quota,
        leaseId,
        leaseExpiry: now + (request.leaseMs ?? this.leaseMs),
        purge,
        assertedExpiredLeases: asserted,
      });
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: wireAttributes(quotaKey(appCode, share)),
            ...parts,
            ExpressionAttributeValues: wireAttributes(parts.ExpressionAttributeValues),
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            ReturnConsumedCapacity: 'TOTAL',
          }),
        );
        capacity.addWrite(result.ConsumedCapacity);
        const item = decodeQuotaItem(result.Attributes && plainAttributes(result.Attributes));
        this.remember(name, item);
        return { admitted: true, item };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        seen = await this.itemOfFailure(appCode, share, error, capacity);
        this.remember(name, seen);
      }

      const refusal = explainRefusal(seen, quota, now);
      if (refusal.kind === 'exceeded') {
        return { admitted: false, limit: refusal.limit, retryAfterSeconds: refusal.retryAfterSeconds, item: seen };
      }
      if (refusal.kind === 'retry' && mapExisted && asserted.length === 0 && refusal.expiredLeases.length === 0) {
        // The map existed, nothing was asserted and nothing has expired, so a limit failed the write; the item
        // read after it (a store without ALL_OLD) no longer shows which. Counters only grow within their windows,
        // so it was the requests in flight, since released: refuse as the condition did, with no second write.
        const oldest = seen ? oldestLiveLeaseExpiry(seen, now) : undefined;
        const retryAfterSeconds = oldest === undefined ? 1 : secondsUntil(oldest, now);
        return { admitted: false, limit: 'concurrent', retryAfterSeconds, item: seen };
      }
      if (refusal.kind === 'uninitialized') {
        await this.createLeaseMap(appCode, share, capacity);
        mapExisted = true;
        purge = NO_PURGE;
        asserted = [];
      } else {
        purge = planPurge(seen, now);
        asserted = refusal.expiredLeases;
      }
    }
    // Still contended after every attempt: refuse rather than admit without the condition's guarantee.
    return { admitted: false, limit: 'concurrent', retryAfterSeconds: 1, item: seen };
  }

  async release(request: ReleaseRequest): Promise<void> {
    const { appCode, lease, capacity } = request;
    const name = shareName(appCode, lease.share);
    // The lease is gone whatever the outcome below: the next admission must neither count nor assert it.
    const known = this.lastSeen.get(name)?.leases;
    if (known) delete known[lease.id];
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: wireAttributes(quotaKey(appCode, lease.share)),
          UpdateExpression: 'REMOVE #leases.#lease',
          // Without it, releasing a lease already purged (or from an item TTL removed) would create an item. A
          // lease's expiry is a positive epoch time, so this holds exactly when the lease is there, as
          // `attribute_exists(#leases.#lease)` would; dynalite parses a comparison a few times faster than a
          // function call.
          ConditionExpression: '#leases.#lease > :none',
          ExpressionAttributeNames: { '#leases': QuotaAttr.leases, '#lease': lease.id },
          ExpressionAttributeValues: { ':none': { N: '0' } },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      capacity.addWrite(result.ConsumedCapacity);
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      capacity.writeUnits += estimateWriteUnits(appCode, this.lastSeen.get(name), lease.share);
    }
  }

  /** The item as it was when the condition failed: from the failure itself, else (dynalite) one read. */
  private async itemOfFailure(appCode: string, share: number, error: unknown, capacity: CapacityMeter) {
    const raw = (error as { Item?: Record<string, unknown> }).Item;
    if (raw) {
      const item = decodeQuotaItem(plainAttributes(raw));
      capacity.writeUnits += estimateWriteUnits(appCode, item, share);
      return item;
    }
    capacity.writeUnits += estimateWriteUnits(appCode, this.lastSeen.get(shareName(appCode, share)), share);
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: wireAttributes(quotaKey(appCode, share)),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    capacity.addRead(result.ConsumedCapacity);
    return decodeQuotaItem(result.Item && plainAttributes(result.Item));
  }

  /** Create the empty lease map (idempotent: concurrent first requests all succeed, none overwrites). */
  private async createLeaseMap(appCode: string, share: number, capacity: CapacityMeter): Promise<void> {
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: wireAttributes(quotaKey(appCode, share)),
        UpdateExpression: 'SET #leases = if_not_exists(#leases, :empty)',
        ExpressionAttributeNames: { '#leases': QuotaAttr.leases },
        ExpressionAttributeValues: { ':empty': { M: {} } },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    capacity.addWrite(result.ConsumedCapacity);
  }

  private remember(name: string, item: QuotaItem | undefined): void {
    if (item) this.lastSeen.set(name, item);
    else this.lastSeen.delete(name);
  }
}

function shareName(appCode: string, share: number): string {
  return `${appCode}#${share}`;
}

/** 48 random bits, URL-safe: unique among the few dozen leases of one item, short enough to keep it small. */
function newLeaseId(): string {
  return randomBytes(6).toString('base64url');
}

function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
