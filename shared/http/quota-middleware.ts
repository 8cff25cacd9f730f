/**
 * Step 7 of the order of checks (docs/interface.md §3): after authentication and the grant check, one
 * conditional write admits the request against the application's quota (§7) or refuses it with 4001. Every
 * response after this point, success or failure, carries the `RateLimit-*` headers of the tightest window
 * (§2); the concurrency lease is released by the envelope's cleanups when the request ends, whatever the outcome.
 * A write is admitted before the operation runs; a read runs beside its admission (`quota/beside-admission.ts`).
 */
import type middy from '@middy/core';
import type { Application } from '../catalog/catalog';
import { InternalError, RateLimitedError } from '../contract/errors';
import { leaseDuration } from '../quota/leases';
import { rateLimitHeaders, rateLimitMessage } from '../quota/rate-limit';
import type { QuotaDecision, QuotaGate } from '../storage/quota-store';
import type { ApiEvent, ApiResult, RequestState, ServiceContext } from './request-state';

export interface QuotaMiddlewareOptions {
  gate: QuotaGate;
  /** The clock that decides windows and lease expiry (tests drive it). */
  now?: () => number;
  /**
   * The operation reads beside the admission: the decision is left in `state.admission` for the operation and
   * the pipeline to await, instead of being awaited here. Writes leave this off, so they admit before they write.
   */
  besideOperation?: boolean;
}

export function enforceQuota(
  options: QuotaMiddlewareOptions,
): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const now = options.now ?? Date.now;

  const decide = async (
    state: RequestState,
    application: Application,
    remainingMs: number | undefined,
  ): Promise<void> => {
    const appCode = application.appCode;
    const at = now();
    let decision: QuotaDecision;
    try {
      decision = await options.gate.admit({
        appCode,
        quota: application.quota,
        now: at,
        capacity: state.capacity,
        // A lease outlives its request by a margin only: the function is stopped at its timeout.
        leaseMs: leaseDuration(remainingMs),
      });
    } catch (cause) {
      // Fail closed: without the store, the limits cannot be guaranteed.
      throw new InternalError('the quota store could not be updated', { cause });
    }
    Object.assign(state.responseHeaders, rateLimitHeaders(decision.usage, at));
    if (!decision.admitted) {
      throw new RateLimitedError(
        rateLimitMessage(decision.limit, decision.value, decision.retryAfterSeconds),
        decision.retryAfterSeconds,
      );
    }
    const lease = decision.lease;
    state.cleanups.push(() => options.gate.release({ appCode, lease, capacity: state.capacity }));
  };

  const admitRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const state = request.context.state;
    const application = state.application;
    // Authentication resolves the application or throws; without one there is nobody to count.
    if (!application) return;
    const remainingMs = remainingTime(request.context);
    const admission = decide(state, application, remainingMs);
    if (!options.besideOperation) return admission;
    // Awaited by the operation's reads and by the pipeline; until then a refusal is not an unhandled rejection.
    admission.catch(() => undefined);
    state.admission = admission;
  };

  return { before: admitRequest };
}

/** What is left of the invocation; a context without a deadline (a direct call in a test) gets the default. */
function remainingTime(context: ServiceContext): number | undefined {
  const remaining = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : NaN;
  return Number.isFinite(remaining) && remaining > 0 ? remaining : undefined;
}
