/**
 * Reads beside the quota admission (docs/performance.md, "The quota under production traffic"): a read operation starts
 * its first store call while the admission's conditional write is still in flight, so the two round trips
 * overlap instead of adding up. Nothing read is used before the admission has answered: every result of the
 * first call waits for it, and when the request is refused the read's result (or failure) is discarded and
 * the refusal is what the caller sees. Every later call starts only once the request is admitted, so a refused
 * request never reads more than that one call.
 *
 * Only for reads: a write must never reach the store before its request is admitted.
 */

/**
 * `ports` as the operation sees them: the first method call on any of them runs at once and answers after
 * `admission`; later calls wait for `admission` before they start. Properties that are not methods pass through.
 */
export function besideAdmission<P extends object>(ports: P, admission: Promise<void>): P {
  let firstCallStarted = false;
  const wrap = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          if (firstCallStarted) return admission.then(() => method.apply(target, args));
          firstCallStarted = true;
          const read = new Promise((resolve) => resolve(method.apply(target, args)));
          return read.then(
            (result) => admission.then(() => result),
            (error: unknown) =>
              admission.then(() => {
                throw error;
              }),
          );
        };
      },
    });
  return Object.fromEntries(
    Object.entries(ports as Record<string, object>).map(([name, port]) => [name, wrap(port)]),
  ) as P;
}
