/**
 * The memory of requests sent with an `Idempotency-Key` (docs/interface.md §13): one item per application and key, in the
 * records table's own partition for that key (see `idempotencyItemKey`). Every change is one conditional write;
 * no transaction, no `ReturnValuesOnConditionCheckFailure` (the embedded store of local runs has neither): when a
 * claim finds the key taken, a consistent read says by whom and in which state.
 *
 * States: `running` (an attempt holds a lease), `done` (the answer is kept for replay), `interrupted` (it failed
 * with 3001 or 2001, or its answer could not be kept: the next attempt completes it), `released` (it was refused:
 * as if never seen). An attempt changes the item only while it is still its owner, so an attempt that lost its
 * lease to a retry cannot overwrite the retry's outcome. Expiry (24 h) is decided here from `expiresAt`;
 * DynamoDB's TTL attribute only tidies up.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { conditionalWrite } from './conditional-write';
import { type IdBlock, isIdBlock } from './id-blocks';
import { idempotencyItemKey } from './item-keys';

/** How long a key is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** DynamoDB's TTL removes an item some time after this; the window is checked in code. */
const TTL_MARGIN_S = 60 * 60;
/** Answers kept as text up to this size, compressed above it. */
const PLAIN_RESPONSE_BYTES = 1024;
/** Compressed answers above this do not fit in an item beside the rest: the request is left to be completed. */
const MAX_STORED_RESPONSE_BYTES = 350 * 1024;
/** A claim that races with other attempts tries again this often before answering "still running". */
const MAX_CLAIM_ROUNDS = 3;

type State = 'running' | 'done' | 'interrupted' | 'released';

export interface ClaimRequest {
  appCode: string;
  key: string;
  /** Digest of the operation, dataset and body: a key reused for another request is refused. */
  fingerprint: string;
  /** The request id of this attempt. */
  owner: string;
  now: number;
  /** Until when this attempt may be running (ms). */
  leaseUntil: number;
  /** Ids this attempt would use if it is the first. */
  seed: IdBlock;
}

export type Claim =
  /** This attempt runs: the first one, or one completing an interrupted attempt (`blocks` from it). */
  | { kind: 'run'; resumed: boolean; blocks: IdBlock[] }
  /** The same request already finished: its data (and the revision it held, for the ETag), to answer again. */
  | { kind: 'replay'; data: unknown; revision?: number }
  /** Another attempt of the same request holds the lease. */
  | { kind: 'busy' }
  /** The key was used for a different request. */
  | { kind: 'mismatch' };

export class IdempotencyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Take the key for this attempt, or say why not. */
  async claim(request: ClaimRequest, meter: CapacityMeter): Promise<Claim> {
    const key = idempotencyItemKey(request.appCode, request.key);
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      if (await this.claimFresh(request, meter)) return { kind: 'run', resumed: false, blocks: [request.seed] };
      const result = await this.client.send(
        new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }),
      );
      meter.addRead(result.ConsumedCapacity);
      const item = result.Item;
      // Released or expired in between: claim it afresh.
      if (!item || item.state === 'released' || (item.expiresAt as number) < request.now) continue;
      if (item.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
      if (item.state === 'done') {
        const revision = typeof item.revision === 'number' ? { revision: item.revision } : {};
        return { kind: 'replay', data: readResponse(item), ...revision };
      }
      if (item.state === 'running' && (item.leaseUntil as number) >= request.now) return { kind: 'busy' };
      // Interrupted, or running past its lease (the function stopped): this attempt completes it.
      if (await this.takeOver(request, item, meter)) {
        const blocks: unknown = item.blocks;
        // Completing with other ids than the first attempt's could write its records twice: refuse instead.
        if (!Array.isArray(blocks) || blocks.length === 0 || !blocks.every(isIdBlock)) {
          throw new Error('idempotency record holds no readable id blocks');
        }
        return { kind: 'run', resumed: true, blocks };
      }
    }
    return { kind: 'busy' };
  }

  private async claimFresh(request: ClaimRequest, meter: CapacityMeter): Promise<boolean> {
    const expiresAt = request.now + IDEMPOTENCY_WINDOW_MS;
    const written = await conditionalWrite(meter, () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...idempotencyItemKey(request.appCode, request.key),
            state: 'running' satisfies State,
            fingerprint: request.fingerprint,
            owner: request.owner,
            leaseUntil: request.leaseUntil,
            expiresAt,
            blocks: [request.seed],
            '@expires': Math.ceil(expiresAt / 1000) + TTL_MARGIN_S,
          },
          ConditionExpression: 'attribute_not_exists(#pk) OR #state = :released OR #expiresAt < :now',
          ExpressionAttributeNames: { '#pk': '@pk', '#state': 'state', '#expiresAt': 'expiresAt' },
          ExpressionAttributeValues: { ':released': 'released' satisfies State, ':now': request.now },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return written !== undefined;
  }

  /** Become the owner of an interrupted or abandoned attempt, if nobody else did since it was read. */
  private async takeOver(request: ClaimRequest, seen: Record<string, unknown>, meter: CapacityMeter): Promise<boolean> {
    return this.update(
      request.appCode,
      request.key,
      {
        set: { state: 'running' satisfies State, owner: request.owner, leaseUntil: request.leaseUntil },
        condition: '#owner = :previousOwner AND #state = :previousState AND #fingerprint = :fingerprint',
        values: { ':previousOwner': seen.owner, ':previousState': seen.state, ':fingerprint': request.fingerprint },
      },
      meter,
    );
  }

  /** Remember the id blocks of the owner's attempt before it writes with a new one. */
  saveBlocks(appCode: string, key: string, owner: string, blocks: IdBlock[], meter: CapacityMeter): Promise<boolean> {
    return this.update(appCode, key, { set: { blocks }, ...ownedBy(owner) }, meter);
  }

  /**
   * Keep the answer for replay. An answer too large to keep leaves the request interrupted: a retry then
   * completes it from what was written, which writes nothing twice.
   */
  async complete(
    appCode: string,
    key: string,
    owner: string,
    answer: { data: unknown; revision?: number | undefined },
    meter: CapacityMeter,
  ): Promise<boolean> {
    const stored = storeResponse(answer.data);
    if (!stored) return this.interrupt(appCode, key, owner, meter);
    const revision = answer.revision === undefined ? {} : { revision: answer.revision };
    return this.update(
      appCode,
      key,
      { set: { state: 'done' satisfies State, ...stored, ...revision }, ...ownedBy(owner) },
      meter,
    );
  }

  /** Forget a refused request: the next one with the key runs afresh. */
  release(appCode: string, key: string, owner: string, meter: CapacityMeter): Promise<boolean> {
    return this.update(appCode, key, { set: { state: 'released' satisfies State }, ...ownedBy(owner) }, meter);
  }

  /** A failed attempt (3001, 2001): the next one with the key completes it at once, without waiting for the lease. */
  interrupt(appCode: string, key: string, owner: string, meter: CapacityMeter): Promise<boolean> {
    return this.update(
      appCode,
      key,
      { set: { state: 'interrupted' satisfies State, leaseUntil: 0 }, ...ownedBy(owner) },
      meter,
    );
  }

  /** A conditional SET; false when the condition failed (the attempt no longer owns the key). */
  private async update(
    appCode: string,
    key: string,
    change: { set: Record<string, unknown>; condition: string; values: Record<string, unknown> },
    meter: CapacityMeter,
  ): Promise<boolean> {
    const names: Record<string, string> = { '#owner': 'owner', '#state': 'state', '#fingerprint': 'fingerprint' };
    const values: Record<string, unknown> = { ...change.values };
    const sets = Object.entries(change.set).map(([name, value], i) => {
      names[`#a${i}`] = name;
      values[`:a${i}`] = value;
      return `#a${i} = :a${i}`;
    });
    const written = await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: idempotencyItemKey(appCode, key),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: change.condition,
          ExpressionAttributeNames: usedNames(names, change.condition, sets),
          ExpressionAttributeValues: values,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return written !== undefined;
  }
}

function ownedBy(owner: string): { condition: string; values: Record<string, unknown> } {
  return { condition: '#owner = :owner', values: { ':owner': owner } };
}

/** DynamoDB refuses names an expression does not use. */
function usedNames(names: Record<string, string>, condition: string, sets: string[]): Record<string, string> {
  const text = `${condition} ${sets.join(' ')}`;
  return Object.fromEntries(Object.entries(names).filter(([placeholder]) => text.includes(placeholder)));
}

function storeResponse(data: unknown): { response: string } | { responseGzip: Uint8Array } | undefined {
  const text = JSON.stringify(data ?? null);
  if (Buffer.byteLength(text) <= PLAIN_RESPONSE_BYTES) return { response: text };
  const compressed = gzipSync(text);
  return compressed.length <= MAX_STORED_RESPONSE_BYTES ? { responseGzip: new Uint8Array(compressed) } : undefined;
}

function readResponse(item: Record<string, unknown>): unknown {
  if (typeof item.response === 'string') return JSON.parse(item.response);
  const compressed = item.responseGzip;
  if (compressed instanceof Uint8Array) return JSON.parse(gunzipSync(compressed).toString('utf8'));
  throw new Error('idempotency record marked done without a response');
}
