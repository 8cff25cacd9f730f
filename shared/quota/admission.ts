/**
 * A request's admission against its application's quota (docs/interface.md §7): the decision of one
 * conditional write (storage/quota-store.ts behind the `QuotaGate` port), and the concurrency lease it takes.
 *
 * `ready` settles once the quota has answered: it resolves when the request is admitted and rejects with the
 * refusal (4001) or the store's failure (3001). `run` is the one place a request waits for it: a write's
 * operation starts only once admitted; a read's starts beside the decision (`beside-admission.ts`), and a refusal
 * answers whatever the read found. `release` gives the lease back when the request ends, whatever the outcome.
 */
import type { Quota } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import { besideAdmission } from './beside-admission';
import type { LimitName, WindowUsage } from './rate-limit';

export interface AdmitRequest {
  appCode: string;
  quota: Quota;
  /** Epoch ms: decides the windows and which leases have expired. */
  now: number;
  capacity: CapacityMeter;
  /** How long this request's lease may hold its slot (`leases.ts`); default: the store's. */
  leaseMs?: number;
}

/** A request's concurrency lease: its id, in the map of quota share `share`. */
export interface LeaseRef {
  id: string;
  share: number;
}

export type QuotaDecision =
  | { admitted: true; lease: LeaseRef; usage: WindowUsage[] }
  | { admitted: false; limit: LimitName; value: number; retryAfterSeconds: number; usage: WindowUsage[] };

export interface ReleaseRequest {
  appCode: string;
  lease: LeaseRef;
  capacity: CapacityMeter;
}

/** What the quota step needs of the store: admit a request, release its lease. */
export interface QuotaGate {
  admit(request: AdmitRequest): Promise<QuotaDecision>;
  release(request: ReleaseRequest): Promise<void>;
}

export class Admission {
  /** Resolves once the request is admitted; rejects with the refusal (4001) or the store's failure (3001). */
  readonly ready: Promise<void>;
  private lease: LeaseRef | undefined;

  /**
   * @param decision the lease once admitted, or the refusal
   * @param giveBack releases a lease (the store's write)
   */
  constructor(
    decision: Promise<LeaseRef>,
    private readonly giveBack: (lease: LeaseRef) => Promise<void>,
  ) {
    this.ready = decision.then((lease) => {
      this.lease = lease;
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
    if (!beside) {
      await this.ready;
      return work(ports);
    }
    let result: T;
    try {
      result = await work(besideAdmission(ports, this.ready));
    } catch (error) {
      await this.ready;
      throw error;
    }
    await this.ready;
    return result;
  }

  /** Gives the lease back once the decision is known; nothing when refused, nothing twice. Never throws. */
  async release(): Promise<void> {
    await this.ready.catch(() => undefined);
    const lease = this.lease;
    if (!lease) return;
    this.lease = undefined;
    await this.giveBack(lease).catch(() => undefined);
  }
}
