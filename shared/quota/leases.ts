/**
 * What a function environment holds of its application's quota between requests (docs/interface.md §7): a slot
 * lease, renewed while the environment is busy and lapsing on its own when it goes idle, and a block of rate
 * tokens sized to its own recent rate. The figures below are the bounds §7 documents.
 *
 * A slot lease is written with the holder's clock as `now + SLOT_LEASE_MS`. Another environment counts it free
 * once its own clock passes that instant; with clocks at most `CLOCK_SKEW_MS` apart, that is no later than
 * SLOT_LEASE_MS + CLOCK_SKEW_MS = 2 s after the holder last renewed it, and a holder renews only while one of
 * its requests runs. The holder itself stops relying on the lease `CLOCK_SKEW_MS` before it lapses, so no other
 * environment can count the slot free while a request of the holder runs on it.
 */

/** How long a slot lease lasts from its last renewal. */
export const SLOT_LEASE_MS = 1_900;

/** The most two environments' clocks may differ: a lease's holder stops relying on it this long before expiry. */
export const CLOCK_SKEW_MS = 100;

/** A request starts on the lease it holds only when at least this much of it is left. */
export const RENEW_LEAD_MS = 300;

/** A request still running this long before its holder stops relying on the lease renews it. */
export const RENEW_TIMER_LEAD_MS = 100;

/** A block of rate tokens covers about this much of its environment's own recent traffic. */
export const BLOCK_HORIZON_MS = 3_000;

/**
 * The part of a minute's limit that environments may hold unspent at once (reported with every write): what a
 * window can lose to environments that go cold with tokens in hand.
 */
export const UNSPENT_SHARE = 0.05;

/** Tokens all environments together may hold unspent in one minute window. */
export function unspentCap(perMinute: number): number {
  return Math.floor(perMinute * UNSPENT_SHARE);
}

/** Until when (holder's clock) a lease written to expire at `expiry` may be relied on. */
export function usableUntil(expiry: number): number {
  return expiry - CLOCK_SKEW_MS;
}
