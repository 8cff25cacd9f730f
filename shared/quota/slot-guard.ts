/**
 * The slot lease around an operation's store calls (docs/interface.md §7): a request runs only on a slot it holds.
 */

/** What a request's slot says about now. */
export interface SlotCover {
  /** Whether the request's lease covers now: it may call the store at once. */
  covers(): boolean;
  /** Resolves when the request may call the store: its lease covers now (renewed if need be); else rejects. */
  guard(): Promise<void>;
}

/**
 * `ports` whose every method call first makes sure the request's slot lease covers it (`SlotCover.guard`): a call
 * starts at once while it does, after the lease's renewal when it runs late, and fails (3001) when the lease could
 * not be renewed, so that no request runs on a slot it no longer holds. Before there is a grant, calls pass.
 */
export function guardedPorts<P extends object>(ports: P, grant: () => SlotCover | undefined): P {
  const wrap = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          const held = grant();
          if (!held || held.covers()) return method.apply(target, args);
          return held.guard().then(() => method.apply(target, args));
        };
      },
    });
  return Object.fromEntries(
    Object.entries(ports as Record<string, object>).map(([name, port]) => [name, wrap(port)]),
  ) as P;
}
