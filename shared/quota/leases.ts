/**
 * How long a concurrency lease lasts (docs/interface.md §7, requests in flight). A lease must outlive its request, or a
 * running request would stop counting; and it must not outlive it by much, because a crashed invocation never
 * releases its lease and the application is one slot short until the lease expires. Lambda stops a function
 * at its timeout, so a request can never run longer than what its invocation had left when it was admitted:
 * the lease lasts that long plus a small margin for clock differences between containers.
 */

/** Added to the invocation's remaining time: covers clock skew between containers and the release's own write. */
export const LEASE_MARGIN_MS = 2_000;

/** The longest function timeout of the service (custom SQL): the bound when the remaining time is unknown. */
export const LONGEST_FUNCTION_TIMEOUT_MS = 28_000;

/** The lease of a request admitted with `remainingMs` of its invocation left (unknown: the longest timeout). */
export function leaseDuration(remainingMs: number | undefined): number {
  return (remainingMs ?? LONGEST_FUNCTION_TIMEOUT_MS) + LEASE_MARGIN_MS;
}
