/**
 * A request's admission against its application's quota (docs/interface.md §7): the decision of the quota gate
 * (`lease-gate.ts` over the store's conditional write), and the slot the request runs on.
 *
 * `ready` settles once the quota has answered: it resolves when the request is admitted and rejects with the
 * refusal (4001) or the store's failure (3001). `run` is the one place a request waits for it: a write's
 * operation starts only once admitted; a read's starts beside the decision (`beside-admission.ts`), and a refusal
 * answers whatever the read found. Every store call of the operation also waits until the request's slot lease
 * covers it (renewed when the request runs long). `release` hands the slot back to its holder when the request
 * ends, whatever the outcome: no write, the lease lapses on its own.
 */
import type { Quota } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import { besideAdmission } from './beside-admission';
import type { LimitName, WindowUsage } from './rate-limit';
import { guardedPorts, type SlotCover } from './slot-guard';

export interface AdmitRequest {
  appCode: string;
  quota: Quota;
  /** Epoch ms: decides the windows and which leases have lapsed. */
  now: number;
  /** The same clock while the request runs (renewals, the lease's cover); default: `now` fixed. */
  clock?: () => number;
  capacity: CapacityMeter;
}

/** The slot an admitted request runs on. */
export interface Grant extends SlotCover {
  /** The request has ended; never throws. */
  end(): Promise<void>;
}

export type QuotaDecision =
  | { admitted: true; grant: Grant; usage: WindowUsage[] }
  | { admitted: false; limit: LimitName; value: number; retryAfterSeconds: number; usage: WindowUsage[] };

/** What the quota step needs of the store: admit a request. */
export interface QuotaGate {
  admit(request: AdmitRequest): Promise<QuotaDecision>;
}

export class Admission {
  /** Resolves once the request is admitted; rejects with the refusal (4001) or the store's failure (3001). */
  readonly ready: Promise<void>;
  private grant: Grant | undefined;

  /** @param decision the slot once admitted, or the refusal */
  constructor(decision: Promise<Grant>) {
    this.ready = decision.then((grant) => {
      this.grant = grant;
    });
    // Until `run` or `release` awaits it, a refusal is not an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /**
   * Runs the operation once admitted, with `ports`; with `beside`, a read, it starts at once and its first store
   * call overlaps the decision (nothing read is used before it, and later calls wait for it). The quota comes
   * before the operation (docs/interface.md §3): a refusal answers, whatever the operation found.
   */
  async run<P extends object, T>(ports: P, beside: boolean, work: (ports: P) => Promise<T>): Promise<T> {
    // Before the decision only a read's first call runs (beside it); every call after it is on the slot.
    const guarded = guardedPorts(ports, () => this.grant);
    if (!beside) {
      await this.ready;
      return work(guarded);
    }
    let result: T;
    try {
      result = await work(besideAdmission(guarded, this.ready));
    } catch (error) {
      await this.ready;
      throw error;
    }
    await this.ready;
    return result;
  }

  /** The request has ended: its slot goes back to its holder; nothing when refused, nothing twice. */
  async release(): Promise<void> {
    await this.ready.catch(() => undefined);
    const grant = this.grant;
    if (!grant) return;
    this.grant = undefined;
    await grant.end().catch(() => undefined);
  }
}
