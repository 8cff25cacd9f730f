/**
 * Step 7 of the order of checks (docs/interface.md §3): after authentication and the grant check, the quota admits
 * the request against the application's limits (§7), on what its function environment holds or with one
 * conditional write, or refuses it with 4001. Every response after this point, success or failure, carries the
 * `RateLimit-*` headers of the tightest window (§2). The step starts the decision and keeps the request's
 * `Admission` (admission.ts) to itself: the pipeline runs the operation through it, and the step hands the slot
 * back to its environment when the request ends, whatever the outcome.
 */
import type middy from '@middy/core';
import type { Application } from '../catalog/catalog';
import { InternalError, RateLimitedError } from '../contract/errors';
import {
  type ApiEvent,
  type ApiResult,
  type RequestOutcome,
  requestSlot,
  type ServiceContext,
  type ServiceRequest,
} from '../http/request';
import { Admission, type Grant, type QuotaDecision, type QuotaGate } from './admission';
import { rateLimitHeaders, rateLimitMessage } from './rate-limit';

export interface QuotaMiddlewareOptions {
  gate: QuotaGate;
  /** The application a request counts against, once authentication has found it. */
  application: (request: ServiceRequest) => Application | undefined;
  /** The clock that decides windows and lease expiry (tests drive it). */
  now?: () => number;
}

export interface QuotaStep extends middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  /** The request's admission, from this step's `before` on; none when nobody was authenticated to count. */
  admissionOf(request: ServiceRequest): Admission | undefined;
}

export function enforceQuota(options: QuotaMiddlewareOptions): QuotaStep {
  const now = options.now ?? Date.now;
  const admissions = requestSlot<Admission>('admission');

  const decide = async (outcome: RequestOutcome, application: Application): Promise<Grant> => {
    const at = now();
    let decision: QuotaDecision;
    try {
      decision = await options.gate.admit({
        appCode: application.appCode,
        quota: application.quota,
        now: at,
        clock: now,
        capacity: outcome.capacity,
      });
    } catch (cause) {
      // Fail closed: without the store, the limits cannot be guaranteed.
      throw new InternalError('the quota store could not be updated', { cause });
    }
    Object.assign(outcome.responseHeaders, rateLimitHeaders(decision.usage, at));
    if (!decision.admitted) {
      throw new RateLimitedError(
        rateLimitMessage(decision.limit, decision.value, decision.retryAfterSeconds),
        decision.retryAfterSeconds,
      );
    }
    return decision.grant;
  };

  const admitRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const { request: received, outcome } = request.context;
    const application = options.application(received);
    // Authentication resolves the application or throws; without one there is nobody to count.
    if (!application) return;
    admissions.set(received, new Admission(decide(outcome, application)));
  };

  // The request has ended (answered or failed): its slot goes back to its environment (a renewal still under way
  // first finishes, so the log line counts its write).
  const releaseLease: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const received = request.context.request;
    if (received) await admissions.get(received)?.release();
  };

  return {
    before: admitRequest,
    after: releaseLease,
    onError: releaseLease,
    admissionOf: (request) => admissions.get(request),
  };
}
