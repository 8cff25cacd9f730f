/**
 * The quota step in process, as middy tests its own: it admits through the quota gate, puts the rate-limit
 * headers on the response either way, refuses with 4001 and Retry-After, fails closed (3001) when the gate
 * cannot be reached, runs the operation's store calls on the request's slot, and hands the slot back when the
 * request ends.
 */
import middy from '@middy/core';
import { Catalog } from '../../../../shared/catalog/catalog';
import { routeFor } from '../../../../shared/contract/routes';
import { type ApiEvent, type ApiResult, RequestOutcome, type ServiceContext } from '../../../../shared/http/request';
import type { AdmitRequest, Grant, QuotaDecision, QuotaGate } from '../../../../shared/quota/admission';
import { enforceQuota } from '../../../../shared/quota/quota-middleware';
import type { WindowUsage } from '../../../../shared/quota/rate-limit';
import { SlotLost } from '../../../../shared/quota/slot-guard';

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

/** A slot whose lease covers the request or not, as the test says; it counts the requests that ended on it. */
class ScriptedGrant implements Grant {
  ended = 0;
  guarded = 0;
  /** @param renewals how many of the request's store calls find the lease renewed; the next ones find it lost */
  constructor(private readonly renewals = Number.POSITIVE_INFINITY) {}
  covers(): boolean {
    return false;
  }
  async guard(): Promise<void> {
    this.guarded += 1;
    if (this.guarded > this.renewals) throw new SlotLost(5);
  }
  async end(): Promise<void> {
    this.ended += 1;
  }
}

/** A gate that answers what the test decides and records what it was asked. */
class ScriptedGate implements QuotaGate {
  readonly admitted: AdmitRequest[] = [];
  constructor(private readonly decide: () => QuotaDecision) {}
  async admit(request: AdmitRequest): Promise<QuotaDecision> {
    this.admitted.push(request);
    return this.decide();
  }
}

let outcome: RequestOutcome;
/** Whether the operation started, and how many slots had ended when it did. */
let operation: { started: boolean; endedWhileRunning: number };
let grant = new ScriptedGrant();
/** A port the operation calls `reads` times: it records the calls that reached it. */
let portCalls = 0;
let reads = 1;
const ports = {
  records: {
    read: async () => {
      portCalls += 1;
      return 'read';
    },
  },
};

function withQuota(gate: ScriptedGate, authenticated = true, besideOperation = false) {
  const route = routeFor('get-one');
  const quota = enforceQuota({ gate, now: () => NOW, application: () => (authenticated ? application : undefined) });
  return middy<ApiEvent, ApiResult, Error, ServiceContext>()
    .before((request) => {
      outcome = new RequestOutcome('req-test', route, NOW);
      request.context.outcome = outcome;
      request.context.request = { requestId: 'req-test', route, headers: {}, body: {} };
      operation = { started: false, endedWhileRunning: -1 };
    })
    .use(quota)
    .handler(async (_event, context) => {
      const answer = async (given: typeof ports) => {
        operation = { started: true, endedWhileRunning: grant.ended };
        let body = '';
        for (let k = 0; k < reads; k += 1) body = await given.records.read();
        return { statusCode: 200, body };
      };
      const admission = quota.admissionOf(context.request);
      return admission ? admission.run(ports, besideOperation, answer) : answer(ports);
    });
}

const call = (handler: ReturnType<typeof withQuota>) =>
  handler({} as ApiEvent, { awsRequestId: 'aws' } as ServiceContext);

beforeEach(() => {
  grant = new ScriptedGrant();
  portCalls = 0;
  reads = 1;
});

describe('the quota step, in process', () => {
  it('admits a request, shows the tightest window and hands the slot back when the request ends', async () => {
    const gate = new ScriptedGate(() => ({ admitted: true, grant, usage: usage(3) }));
    await expect(call(withQuota(gate))).resolves.toEqual({ statusCode: 200, body: 'read' });
    expect(gate.admitted).toEqual([
      {
        appCode: 'app-a',
        quota: { perMinute: 5, perHour: 10_000, perDay: 100_000, concurrent: 10 },
        now: NOW,
        clock: expect.any(Function),
        capacity: outcome.capacity,
      },
    ]);
    expect(outcome.responseHeaders).toMatchObject({
      'RateLimit-Limit': '5',
      'RateLimit-Remaining': '2',
      'RateLimit-Reset': '40',
    });
    expect(operation.endedWhileRunning).toBe(0);
    // The store call waited for the slot to cover it.
    expect(grant.guarded).toBe(1);
    expect(grant.ended).toBe(1);
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
    expect(grant.ended).toBe(0);
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

  it('refuses with 4001 and Retry-After: 1 when the slot is lost before the request called the store', async () => {
    grant = new ScriptedGrant(0);
    const gate = new ScriptedGate(() => ({ admitted: true, grant, usage: usage(1) }));
    await expect(call(withQuota(gate))).rejects.toMatchObject({
      code: 4001,
      retryAfterSeconds: 1,
      message:
        'the request could not keep its place among the 5 requests in flight allowed; nothing was read or written: ' +
        'retry after 1 s',
    });
    expect([operation.started, portCalls, grant.ended]).toEqual([true, 0, 1]);
  });

  it('stops the operation at its next store call with 3001 when the slot is lost after one reached the store', async () => {
    grant = new ScriptedGrant(1);
    reads = 2;
    const gate = new ScriptedGate(() => ({ admitted: true, grant, usage: usage(1) }));
    await expect(call(withQuota(gate))).rejects.toMatchObject({
      code: 3001,
      message: 'the request lost its place in the quota: its slot lease could not be renewed',
    });
    expect([operation.started, portCalls, grant.ended]).toEqual([true, 1, 1]);
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
    const gate = new ScriptedGate(() => ({ admitted: true, grant, usage: usage(1) }));
    await call(withQuota(gate, false));
    expect(gate.admitted).toEqual([]);
  });
});
