/**
 * Admission on leases (docs/interface.md §7): a request starts on what its holder (its function environment,
 * `lease-holder.ts`) already holds, a live slot lease and a token of the current minute, for no write at all;
 * otherwise ONE conditional write takes a block of tokens and takes or renews the lease (`quota-image.ts` says
 * why that is exact). A refusal the holder's image already proves costs nothing either: the minute's counter seen
 * at its limit.
 *
 * Nothing is written when a request ends: its holder keeps the slot for the next one, and the lease lapses on
 * its own at most 2 s after the holder's last request ended. Only when nearly every slot is held, and its
 * environment's own traffic is too sparse to reuse the slot before the lease runs out, does a request give its
 * slot back as it ends (one write), so that slots idle in environments never keep busy ones waiting. A request that outlasts what its lease covers
 * renews it while it runs; a lease that lapsed meanwhile is taken again if a slot is free. Only when neither
 * can be written does the request stop at its next store call (3001) rather than run on a slot it does not hold.
 */
import type { Quota } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { AdmitRequest, Grant, QuotaDecision, QuotaGate } from './admission';
import {
  afterWrite,
  HolderPool,
  type Holding,
  holdingUsage,
  type LeaseHolder,
  leaseCovers,
  observeRequest,
  planWrite,
  sparse,
  usableBlock,
} from './lease-holder';
import { RENEW_TIMER_LEAD_MS, usableUntil } from './leases';
import {
  liveLeaseCount,
  type QuotaImage,
  type QuotaWrite,
  type Refused,
  slotRefusal,
  windowRefusal,
} from './quota-image';
import { SlotLost } from './slot-guard';

/** What the gate needs of the store: one conditional write on an application's quota item. */
export interface QuotaWriter {
  /** Sends `write`; answers the item after it (written) or as it was when the condition failed. */
  write(
    appCode: string,
    write: QuotaWrite,
    capacity: CapacityMeter,
  ): Promise<{ written: boolean; image: QuotaImage | undefined }>;
  /** Creates the empty lease map (idempotent). */
  createLeaseMap(appCode: string, capacity: CapacityMeter): Promise<void>;
  /** Removes the holder's lease if it still holds `expiry` (a slot given back early); never throws. */
  release(appCode: string, holder: string, expiry: number, capacity: CapacityMeter): Promise<void>;
}

/** How a running request's renewal is scheduled (tests run it on a simulated clock). */
export interface RenewalTimers {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: RenewalTimers = {
  set: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    // A timer must never keep a process alive on its own.
    timer.unref?.();
    return timer;
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Conditional writes one admission may take (map creation, expired leases, a stale image). */
const MAX_ATTEMPTS = 4;

export class LeaseGate implements QuotaGate {
  constructor(
    private readonly writer: QuotaWriter,
    private readonly pool: HolderPool = new HolderPool(),
    private readonly timers: RenewalTimers = REAL_TIMERS,
  ) {}

  async admit(request: AdmitRequest): Promise<QuotaDecision> {
    const holder = this.pool.acquire(request.appCode, request.now);
    try {
      const holding = holder.holding(request.appCode);
      const refused = await this.take(holder, holding, request);
      const usage = holdingUsage(holding, request.quota, request.now);
      if (refused) {
        this.pool.release(holder);
        return { admitted: false, ...refused, usage };
      }
      const clock = request.clock ?? (() => request.now);
      const grant = new HeldSlot(this.writer, this.pool, this.timers, holder, holding, request, clock);
      return { admitted: true, grant, usage };
    } catch (error) {
      this.pool.release(holder);
      throw error;
    }
  }

  /** Takes a token and the slot for the request; undefined when admitted, else the refusal. */
  private async take(holder: LeaseHolder, holding: Holding, request: AdmitRequest): Promise<Refused | undefined> {
    const { appCode, quota, now, capacity } = request;
    observeRequest(holding, now);
    const block = usableBlock(holding, now);
    const hasToken = (block?.left ?? 0) >= 1;
    if (hasToken && leaseCovers(holding, now)) {
      (block as NonNullable<typeof block>).left -= 1;
      return undefined;
    }
    // A minute counter never goes down: an image of it at its limit proves the refusal. (Slots are given back
    // early when contended, so only the item as a failed write saw it proves a refusal for slots.)
    const proven = hasToken ? undefined : windowRefusal(holding.image, quota, now, ['minute']);
    if (proven) return proven;

    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const write = planWrite(holder.id, holding, quota, now, 1);
      dropReturned(holding, write);
      const result = await this.writer.write(appCode, write, capacity);
      if (result.written) {
        afterWrite(holding, write, result.image, 1, now);
        return undefined;
      }
      // The slots are judged when the answer came: a slow write may have let leases lapse meanwhile.
      const at = request.clock?.() ?? now;
      const refused = this.explain(holder, holding, quota, now, at, result.image, hasToken);
      if (refused) return refused;
      if (!result.image?.leases) await this.writer.createLeaseMap(appCode, capacity);
    }
    // Still contended after every attempt: refuse rather than admit without the condition's guarantee.
    return { limit: 'concurrent', value: quota.concurrent, retryAfterSeconds: 1 };
  }

  /** Why `write` failed, from the item as it was: a refusal it proves, or undefined to try again. */
  private explain(
    holder: LeaseHolder,
    holding: Holding,
    quota: Quota,
    now: number,
    at: number,
    image: QuotaImage | undefined,
    hasToken: boolean,
  ): Refused | undefined {
    if (image) holding.image = image;
    else delete holding.image;
    if (!image?.leases) return undefined;
    if (!hasToken) {
      const full = windowRefusal(image, quota, now);
      if (full) return full;
    }
    adoptLease(holding, holder.id, image);
    if (holding.lease === undefined) return slotRefusal(image, quota, holder.id, at, 0);
    return undefined;
  }
}

/** The slot a request runs on: renewed while it runs long, handed back to the pool (no write) when it ends. */
class HeldSlot implements Grant {
  private timer: unknown;
  private renewing: Promise<void> | undefined;
  private ended = false;

  constructor(
    private readonly writer: QuotaWriter,
    private readonly pool: HolderPool,
    private readonly timers: RenewalTimers,
    private readonly holder: LeaseHolder,
    private readonly holding: Holding,
    private readonly request: AdmitRequest,
    private readonly clock: () => number,
  ) {
    this.arm();
  }

  covers(): boolean {
    return this.covered();
  }

  /** Resolves when the request may use the store: its lease covers now, renewed or taken again; else `SlotLost`. */
  async guard(): Promise<void> {
    // A slow store may answer a renewal after what it renewed has run out again: renew once more, as long as the
    // lease is still this holder's and the request still runs. A call still waiting when its request has ended
    // (abandoned by the handler) renews nothing: a lease is renewed only while a request runs, or an idle
    // environment would keep its slot past the 2 s bound.
    // A lease that lapsed before its renewal ran (the environment's event loop held up past the renewal's lead)
    // may have been taken back by another environment: the request then takes a free slot again, by the same
    // conditional write as an admission, and goes on only if one is free.
    for (let attempt = 0; attempt < MAX_ATTEMPTS && !this.ended; attempt += 1) {
      if (this.covered()) return;
      await this.renew();
      if (this.holding.lease === undefined && slotsFull(this.holding.image, this.request.quota, this.clock())) break;
    }
    if (!this.covered()) throw new SlotLost(this.request.quota.concurrent);
  }

  /** The request has ended: the holder keeps its slot until the lease lapses, and serves the next request. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    if (this.renewing) await this.renewing;
    const lease = this.holding.lease;
    const contended = slotsContended(this.holding.image, this.request.quota, this.clock());
    if (lease !== undefined && contended && sparse(this.holding)) {
      // Nearly every slot is held and this environment's next request is not expected before its lease stops
      // covering one: it must not keep a slot idle, so it gives it back now.
      delete this.holding.lease;
      const { appCode, capacity } = this.request;
      await this.writer.release(appCode, this.holder.id, lease, capacity);
    }
    this.pool.release(this.holder);
  }

  private covered(): boolean {
    const lease = this.holding.lease;
    return lease !== undefined && this.clock() < usableUntil(lease);
  }

  private arm(): void {
    const lease = this.holding.lease;
    if (this.ended || lease === undefined) return;
    const delay = Math.max(0, usableUntil(lease) - RENEW_TIMER_LEAD_MS - this.clock());
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      void this.renew();
    }, delay);
  }

  private renew(): Promise<void> {
    if (this.renewing) return this.renewing;
    this.renewing = this.sendRenewal().finally(() => {
      this.renewing = undefined;
      this.arm();
    });
    return this.renewing;
  }

  private async sendRenewal(): Promise<void> {
    const { appCode, quota, capacity } = this.request;
    // With no lease (it lapsed and was taken back), the write takes a free slot again, if there is one.
    const now = this.clock();
    const write = planWrite(this.holder.id, this.holding, quota, now, 0);
    dropReturned(this.holding, write);
    try {
      const result = await this.writer.write(appCode, write, capacity);
      if (result.written) afterWrite(this.holding, write, result.image, 0, now);
      else {
        if (result.image) this.holding.image = result.image;
        adoptLease(this.holding, this.holder.id, result.image);
      }
    } catch {
      // The lease stays as it was: `guard` refuses to go on once it no longer covers the request.
    }
  }
}

/**
 * Whether the slots are nearly all held, as the holder last saw them: then a sparse environment gives its slot
 * back when its request ends (one write, as before leases), so that environments idling on slots never starve
 * busy ones.
 */
function slotsContended(image: QuotaImage | undefined, quota: Quota, now: number): boolean {
  return liveLeaseCount(image, now) >= quota.concurrent - Math.max(1, Math.floor(quota.concurrent / 5));
}

/** Whether every slot is held by a live lease, as the holder last saw them: no slot to take again. */
function slotsFull(image: QuotaImage | undefined, quota: Quota, now: number): boolean {
  return liveLeaseCount(image, now) >= quota.concurrent;
}

/** Tokens a write gives back are dropped before it is sent: whatever becomes of the write, never given twice. */
function dropReturned(holding: Holding, write: QuotaWrite): void {
  if (Object.keys(write.returned).length > 0) delete holding.block;
}

/**
 * The holder's lease as the item shows it: a write whose answer was lost may have renewed it, and a lapsed one may
 * have been removed by another environment (then the holder needs a free slot again). Renewing from the value
 * shown is safe: whoever would remove the entry asserts that same value, so only one of the two writes succeeds.
 */
function adoptLease(holding: Holding, holder: string, image: QuotaImage | undefined): void {
  const shown = image?.leases?.[holder];
  if (shown === undefined) delete holding.lease;
  else holding.lease = shown;
}
