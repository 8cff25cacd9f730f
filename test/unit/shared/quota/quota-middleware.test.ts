/**
 * The quota step in process, as middy tests its own: it admits through the quota gate, puts the rate-limit
 * headers on the response either way, refuses with 4001 and Retry-After, fails closed (3001) when the gate
 * cannot be reached, and releases the lease when the request ends.
 */
import middy from '@middy/core';
import { Catalog } from '../../../../shared/catalog/catalog';
import { routeFor } from '../../../../shared/contract/routes';
import { type ApiEvent, type ApiResult, RequestOutcome, type ServiceContext } from '../../../../shared/http/request';
import type { AdmitRequest, QuotaDecision, QuotaGate, ReleaseRequest } from '../../../../shared/quota/admission';
import { enforceQuota } from '../../../../shared/quota/quota-middleware';
import type { WindowUsage } from '../../../../shared/quota/rate-limit';

/** 2023-11-14 22:13:20 UTC: the minute window ends 40 s later. */
const NOW = 1_700_000_000_000;

const application = new Catalog({
  applications: [{ appCode: 'app-a', quota: { perMinute: 5 } }],
  datasets: [],
}).application('app-a');

const usage = (used: number): WindowUsage[] => [
  { kind: 'minute', limit: 5, used, end: NOW + 40_000 },
  { kind: 'hour', limit: 10_000, used, end: NOW + 400_000 },
  { kind: 'day', limit: 100_000, used, end: NOW + 4_000_000 },
];

/** A gate that answers what the test decides and records what it was asked. */
class ScriptedGate implements QuotaGate {
  readonly admitted: AdmitRequest[] = [];
  readonly released: ReleaseRequest[] = [];
  constructor(private readonly decide: () => QuotaDecision) {}
  async admit(request: AdmitRequest): Promise<QuotaDecision> {
    this.admitted.push(request);
    return this.decide();
  }
  async release(request: ReleaseRequest): Promise<void> {
    this.released.push(request);
  }
}

let outcome: RequestOutcome;
/** Whether the operation started, and how many leases the gate had released when it did. */
let operation: { started: boolean; releasedWhileRunning: number };

function withQuota(gate: ScriptedGate, authenticated = true, besideOperation = false) {
  const route = routeFor('get-one');
  const quota = enforceQuota({ gate, now: () => NOW, application: () => (authenticated ? application : undefined) });
  return middy<ApiEvent, ApiResult, Error, ServiceContext>()
    .before((request) => {
      outcome = new RequestOutcome('req-test', route, NOW);
      request.context.outcome = outcome;
      request.context.request = { requestId: 'req-test', route, headers: {}, body: {} };
      operation = { started: false, releasedWhileRunning: -1 };
    })
    .use(quota)
    .handler(async (_event, context) => {
      const answer = async () => {
        operation = { started: true, releasedWhileRunning: gate.released.length };
        return { statusCode: 200, body: 'ok' };
      };
      const admission = quota.admissionOf(context.request);
      return admission ? admission.run({}, besideOperation, answer) : answer();
    });
}

const call = (handler: ReturnType<typeof withQuota>, remainingMs?: number) =>
  handler(
    {} as ApiEvent,
    (remainingMs === undefined
      ? { awsRequestId: 'aws' }
      : { awsRequestId: 'aws', getRemainingTimeInMillis: () => remainingMs }) as ServiceContext,
  );

describe('the quota step, in process', () => {
  it('admits a request, shows the tightest window and releases the lease when the request ends', async () => {
    const gate = new ScriptedGate(() => ({ admitted: true, lease: { id: 'lease-1', share: 0 }, usage: usage(3) }));
    await expect(call(withQuota(gate))).resolves.toEqual({ statusCode: 200, body: 'ok' });
    expect(gate.admitted).toEqual([
      {
        appCode: 'app-a',
        quota: { perMinute: 5, perHour: 10_000, perDay: 100_000, concurrent: 10 },
        now: NOW,
        capacity: outcome.capacity,
        // Without a Lambda deadline: the longest function timeout (28 s) plus the 2 s margin.
        leaseMs: 30_000,
      },
    ]);
    expect(outcome.responseHeaders).toMatchObject({
      'RateLimit-Limit': '5',
      'RateLimit-Remaining': '2',
      'RateLimit-Reset': '40',
    });
    expect(operation.releasedWhileRunning).toBe(0);
    expect(gate.released).toEqual([
      { appCode: 'app-a', lease: { id: 'lease-1', share: 0 }, capacity: outcome.capacity },
    ]);
  });

  it('refuses with 4001 and the seconds to wait, still showing the window', async () => {
    const gate = new ScriptedGate(() => ({
      admitted: false,
      limit: 'perMinute',
      value: 5,
      retryAfterSeconds: 40,
      usage: usage(5),
    }));
    await expect(call(withQuota(gate))).rejects.toMatchObject({ code: 4001, retryAfterSeconds: 40 });
    expect(outcome.responseHeaders).toMatchObject({ 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0' });
    expect(operation.started).toBe(false);
    expect(gate.released).toEqual([]);
  });

  it('fails closed with 3001 when the quota store cannot be updated', async () => {
    const gate = new ScriptedGate(() => {
      throw new Error('ProvisionedThroughputExceededException');
    });
    await expect(call(withQuota(gate))).rejects.toMatchObject({
      code: 3001,
      message: 'the quota store could not be updated',
    });
  });

  it("gives the lease what the invocation has left plus 2 s, so it never outlives the function's timeout by more", async () => {
    const gate = new ScriptedGate(() => ({ admitted: true, lease: { id: 'lease-1', share: 0 }, usage: usage(1) }));
    await call(withQuota(gate), 9_500);
    expect(gate.admitted.map((request) => request.leaseMs)).toEqual([11_500]);
  });

  it('runs a read beside the decision: it starts before the refusal is known, and the refusal answers', async () => {
    const gate = new ScriptedGate(() => ({
      admitted: false,
      limit: 'concurrent',
      value: 10,
      retryAfterSeconds: 9,
      usage: usage(2),
    }));
    await expect(call(withQuota(gate, true, true))).rejects.toMatchObject({
      code: 4001,
      message: 'limit of 10 requests in flight reached; retry after 9 s',
      retryAfterSeconds: 9,
    });
    expect(operation.started).toBe(true);
  });

  it('counts nobody before authentication has resolved an application', async () => {
    const gate = new ScriptedGate(() => ({ admitted: true, lease: { id: 'lease-1', share: 0 }, usage: usage(1) }));
    await call(withQuota(gate, false));
    expect(gate.admitted).toEqual([]);
  });
});
