/**
 * Step 7 of the order of checks (docs/interface.md §3): after authentication and the grant check, one
 * conditional write admits the request against the application's quota (§7) or refuses it with 4001. Every
 * response after this point, success or failure, carries the `RateLimit-*` headers of the tightest window
 * (§2); the concurrency lease is released by the envelope's cleanups when the request ends, whatever the outcome.
 */
import type middy from '@middy/core';
import { InternalError, RateLimitedError } from '../contract/errors';
import type { QuotaDecision, QuotaGate } from '../quota/quota-store';
import { rateLimitHeaders, rateLimitMessage } from '../quota/rate-limit';
import type { ApiEvent, ApiResult, ServiceContext } from './request-state';

export interface QuotaMiddlewareOptions {
  gate: QuotaGate;
  /** The clock that decides windows and lease expiry (tests drive it). */
  now?: () => number;
}

export function enforceQuota(
  options: QuotaMiddlewareOptions,
): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const now = options.now ?? Date.now;

  const admitRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const state = request.context.state;
    const application = state.application;
    // Authentication resolves the application or throws; without one there is nobody to count.
    if (!application) return;
    const appCode = application.appCode;
    const at = now();
    let decision: QuotaDecision;
    try {
      decision = await options.gate.admit({ appCode, quota: application.quota, now: at, capacity: state.capacity });
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
    const leaseId = decision.leaseId;
    state.cleanups.push(() => options.gate.release({ appCode, leaseId, capacity: state.capacity }));
  };

  return { before: admitRequest };
}
