/**
 * Many function environments sharing one quota item, on a simulated clock (docs/interface.md §7): each runs the
 * real lease gate (`shared/quota/lease-gate.ts`) with its own holder and its own clock, offset from true time by
 * at most half the documented skew; their conditional writes wait in flight until the test delivers them (in
 * any order), loses them, or lets them land with the answer lost. The item applies a write as DynamoDB would,
 * atomically: its condition (`writeHolds`) and its update (`applyWrite`).
 */
import type { Quota } from '../../shared/catalog/catalog';
import { CapacityMeter } from '../../shared/observability/capacity-meter';
import type { Grant, QuotaDecision } from '../../shared/quota/admission';
import { LeaseGate, type QuotaWriter, type RenewalTimers } from '../../shared/quota/lease-gate';
import { HolderPool, type Holding, LeaseHolder } from '../../shared/quota/lease-holder';
import { applyWrite, type QuotaImage, type QuotaWrite, writeHolds } from '../../shared/quota/quota-image';

export const APP = 'app-sim';

interface InFlight {
  write: QuotaWrite;
  settle: (answer: { written: boolean; image: QuotaImage | undefined } | Error) => void;
}

/** The one quota item and the writes in flight to it. */
export class SimulatedItem implements QuotaWriter {
  image: QuotaImage | undefined;
  readonly inFlight: InFlight[] = [];

  write(_appCode: string, write: QuotaWrite): Promise<{ written: boolean; image: QuotaImage | undefined }> {
    return new Promise((resolve, reject) => {
      this.inFlight.push({
        write,
        settle: (answer) => (answer instanceof Error ? reject(answer) : resolve(answer)),
      });
    });
  }

  async createLeaseMap(): Promise<void> {
    this.image = this.image?.leases ? this.image : { counters: {}, unspent: {}, ...this.image, leases: {} };
  }

  /** A release lands at once (its answer is never needed). */
  async release(_appCode: string, holder: string, expiry: number): Promise<void> {
    const leases = this.image?.leases;
    if (leases?.[holder] === expiry) {
      const { [holder]: _released, ...rest } = leases;
      this.image = { ...(this.image as QuotaImage), leases: rest };
    }
  }

  /** Lands the pick-th write in flight; `answer`: whether its caller hears back (else a network error). */
  deliver(pick: number, answer: boolean): { write: QuotaWrite; written: boolean } | undefined {
    const [flight] = this.inFlight.splice(pick % this.inFlight.length, 1);
    if (!flight) return undefined;
    const written = writeHolds(this.image, flight.write);
    if (written) this.image = applyWrite(this.image as QuotaImage, flight.write);
    flight.settle(answer ? { written, image: this.image } : new Error('the answer was lost'));
    return { write: flight.write, written };
  }

  /** The pick-th write in flight never reaches the item. */
  lose(pick: number): void {
    const [flight] = this.inFlight.splice(pick % this.inFlight.length, 1);
    flight?.settle(new Error('the request never arrived'));
  }
}

/** Timers on the simulated clock. */
export class SimulatedTimers implements RenewalTimers {
  private readonly due = new Map<number, { at: number; callback: () => void }>();
  private next = 0;
  constructor(private readonly now: () => number) {}

  set(callback: () => void, delayMs: number): unknown {
    this.next += 1;
    this.due.set(this.next, { at: this.now() + delayMs, callback });
    return this.next;
  }

  clear(handle: unknown): void {
    this.due.delete(handle as number);
  }

  /** Runs the callbacks due by now, earliest first. */
  fire(): void {
    const ready = [...this.due.entries()]
      .filter(([, timer]) => timer.at <= this.now())
      .sort(([, a], [, b]) => a.at - b.at);
    for (const [handle, timer] of ready) {
      this.due.delete(handle);
      timer.callback();
    }
  }
}

export type EnvState = 'idle' | 'admitting' | 'running' | 'ending' | 'dead';

/** One function environment: one holder, one request at a time, its own clock. */
export class SimulatedEnvironment {
  state: EnvState = 'idle';
  /** Writes this environment has sent. */
  writes = 0;
  grant: Grant | undefined;
  /** True time its last request ended (finished, stopped or crashed with it). */
  lastEnd = Number.NEGATIVE_INFINITY;
  readonly holder = new LeaseHolder();
  readonly gate: LeaseGate;

  constructor(
    item: SimulatedItem,
    timers: RenewalTimers,
    private readonly trueNow: () => number,
    readonly offset: number,
  ) {
    const pool = new HolderPool();
    pool.release(this.holder);
    // A dead environment's code runs no more: it sends nothing and its timers never fire.
    const alive = () => this.state !== 'dead';
    const writer: QuotaWriter = {
      write: (appCode, write) => {
        if (!alive()) return new Promise(() => undefined);
        this.writes += 1;
        return item.write(appCode, write);
      },
      createLeaseMap: () => (alive() ? item.createLeaseMap() : new Promise(() => undefined)),
      release: (appCode, holder, expiry) =>
        alive() ? item.release(appCode, holder, expiry) : new Promise(() => undefined),
    };
    const envTimers: RenewalTimers = {
      set: (callback, delayMs) => timers.set(() => alive() && callback(), delayMs),
      clear: (handle) => timers.clear(handle),
    };
    this.gate = new LeaseGate(writer, pool, envTimers);
  }

  clock = (): number => this.trueNow() + this.offset;

  holding(): Holding {
    return this.holder.holding(APP);
  }

  admit(quota: Quota): Promise<{ decision: QuotaDecision; now: number; capacity: CapacityMeter }> {
    const capacity = new CapacityMeter();
    const now = this.clock();
    return this.gate
      .admit({ appCode: APP, quota, now, clock: this.clock, capacity })
      .then((decision) => ({ decision, now, capacity }));
  }
}

/** Lets every promise that can move on do so. */
export async function settle(): Promise<void> {
  for (let k = 0; k < 5; k += 1) await new Promise((resolve) => setImmediate(resolve));
}
