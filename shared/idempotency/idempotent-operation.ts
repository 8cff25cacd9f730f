/**
 * `Idempotency-Key` on the write operations (docs/interface.md §13), as a wrapper around an operation: it runs after
 * authentication and the quota (a replay is a request like any other, and keys are scoped to the authenticated
 * application), and the operation inside sees the id blocks its attempt must use (`context.attempt`). The
 * transport hands it the header (`context.idempotencyKey`) and adds `Idempotent-Replayed` when told to.
 *
 * - first request with a key: runs; its success is kept for 24 h and answered again, byte for byte (and with
 *   the same `ETag`), with `Idempotent-Replayed: true`, writing nothing;
 * - same key, other operation, dataset or body: 1001; same key while an attempt runs: 4001, `Retry-After: 1`;
 * - refused (1001–1006, 2002, 4001): forgotten, a retry runs afresh;
 * - failed (3001, 2001) or never answered (the function stopped; its lease runs out): the next attempt completes
 *   it with the ids the first one chose, so no record is written twice.
 *
 * Why not Powertools' idempotency utility: it deletes the record when the handler throws, so a retry after a
 * 3001 would run afresh and a batch would be written twice; it reads the existing record through
 * `ReturnValuesOnConditionCheckFailure`, which the embedded store of local runs lacks; and it cannot hand the
 * chosen ids to the retry. The rules here are the contract's, in one module.
 */
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_HEADER } from '../../packages/client/src/headers';
import { ErrorCode, InvalidParameterError, RateLimitedError, ServiceError } from '../contract/errors';
import type { IdempotentAttempt, Operation, OperationContext } from '../operation/operation';
import { newIdBlock } from '../storage/id-blocks';

/** A running attempt's lease outlives its function's deadline by this much (clock skew between containers). */
const LEASE_MARGIN_MS = 5_000;
/** Lease when the function's deadline is unknown. */
const DEFAULT_LEASE_MS = 30_000;

/** Codes of refused requests, which are not remembered (docs/interface.md §13). */
const REFUSED: ReadonlySet<number> = new Set([
  ErrorCode.InvalidParameter,
  ErrorCode.SignatureMismatch,
  ErrorCode.TimestampExpired,
  ErrorCode.ApplicationNotFound,
  ErrorCode.DatasetNotFound,
  ErrorCode.AccessDenied,
  ErrorCode.DataNotFound,
  ErrorCode.RateLimited,
]);

/** The caller's key: 1 to 255 printable ASCII characters. */
export function readIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[\x20-\x7e]{1,255}$/.test(value)) {
    throw new InvalidParameterError(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`);
  }
  return value;
}

/**
 * Same operation, dataset and body (key order aside) give the same digest. The walk recurses: it is bounded by
 * the body's nesting limit, which the transport checks before anything reads the body (`MAX_BODY_DEPTH`).
 */
export function requestFingerprint(operation: string, datasetCode: string | undefined, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([operation, datasetCode ?? null, canonical(body)]))
    .digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]);
  }
  return value;
}

export function withIdempotency(operation: Operation): Operation {
  return {
    name: operation.name,
    async run(context, body) {
      const key = readIdempotencyKey(context.idempotencyKey);
      if (key === undefined) return operation.run(context, body);
      const store = context.ports.idempotency;
      const { appCode } = context.caller.application;
      const capacity = context.telemetry.capacity;
      const owner = context.requestId;
      const now = context.now();
      const claim = await store.claim(
        {
          appCode,
          key,
          fingerprint: requestFingerprint(operation.name, context.dataset?.datasetCode, body),
          owner,
          now,
          leaseUntil: (context.deadline ?? now + DEFAULT_LEASE_MS) + LEASE_MARGIN_MS,
          seed: newIdBlock(now),
        },
        capacity,
      );
      switch (claim.kind) {
        case 'mismatch':
          throw new InvalidParameterError(
            `${IDEMPOTENCY_KEY_HEADER} '${key}' was used for a different request (another operation, dataset or body); send a new key for a new request`,
          );
        case 'busy':
          throw new RateLimitedError(
            `a request with ${IDEMPOTENCY_KEY_HEADER} '${key}' is still running; retry in a second to get its answer`,
            1,
          );
        case 'replay':
          context.markReplayed?.();
          context.telemetry.detail('idempotency', 'replayed');
          if (claim.revision !== undefined) context.answerRevision?.(claim.revision);
          return claim.data;
      }
      const blocks = [...claim.blocks];
      const attempt: IdempotentAttempt = {
        resumed: claim.resumed,
        blocks,
        async addBlock(block) {
          if (!(await store.saveBlocks(appCode, key, owner, [...blocks, block], capacity))) {
            throw new Error('the idempotency key was taken over by another attempt');
          }
          blocks.push(block);
        },
      };
      if (claim.resumed) context.telemetry.detail('idempotency', 'resumed');
      let data: unknown;
      // The revision the answer holds is kept with it, so a replay answers the same ETag.
      let revision: number | undefined;
      const answerRevision = (answered: number) => {
        revision = answered;
        context.answerRevision?.(answered);
      };
      try {
        data = await operation.run({ ...context, attempt, answerRevision }, body);
      } catch (error) {
        const refused = error instanceof ServiceError && REFUSED.has(error.code);
        await settle(context, () =>
          refused ? store.release(appCode, key, owner, capacity) : store.interrupt(appCode, key, owner, capacity),
        );
        throw error;
      }
      await settle(context, () => store.complete(appCode, key, owner, { data, revision }, capacity));
      return data;
    },
  };
}

/**
 * Record an attempt's outcome. The writes are done by now, so a failure here must not fail the request: the item
 * stays `running` until its lease ends, and the next attempt then completes it without creating any record twice.
 */
async function settle(context: OperationContext, change: () => Promise<boolean>): Promise<void> {
  try {
    if (!(await change())) context.telemetry.detail('idempotency', 'taken-over');
  } catch (error) {
    context.telemetry.detail(
      'idempotencyFailed',
      error instanceof Error ? `${error.name}: ${error.message}` : 'unknown',
    );
  }
}
