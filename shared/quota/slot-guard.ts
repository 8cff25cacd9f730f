/**
 * The slot lease around an operation's store calls (docs/interface.md §7): a request runs only on a slot it holds.
 */
import { InternalError, RateLimitedError } from '../contract/errors';

/** What a request's slot says about now. */
export interface SlotCover {
  /** Whether the request's lease covers now: it may call the store at once. */
  covers(): boolean;
  /** Resolves when the request may call the store: its lease covers now (renewed if need be); else `SlotLost`. */
  guard(): Promise<void>;
}

/** The request's slot lease could be neither renewed nor taken again: it may not call the store. */
export class SlotLost extends InternalError {
  constructor(readonly concurrent: number) {
    super('the request lost its place in the quota: its slot lease could not be renewed');
  }

  /** The answer when the request had made no store call yet: refused as at admission, nothing read or written. */
  refusal(): RateLimitedError {
    return new RateLimitedError(
      `the request could not keep its place among the ${this.concurrent} requests in flight allowed; ` +
        'nothing was read or written: retry after 1 s',
      1,
    );
  }
}

/**
 * `ports` whose every method call first makes sure the request's slot lease covers it (`SlotCover.guard`): a call
 * starts at once while it does, after the lease's renewal when it runs late, and fails when the lease could not be
 * renewed, so that no request runs on a slot it no longer holds: 4001 with `Retry-After: 1` when the request had
 * not called the store yet (a retry runs afresh, as after any refusal), else 3001. Before there is a grant, calls
 * pass.
 */
export function guardedPorts<P extends object>(ports: P, grant: () => SlotCover | undefined): P {
  // Whether any call of the request has reached the store: until one has, a lost slot is a clean refusal.
  let called = false;
  const wrap = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        const call = (args: unknown[]) => {
          called = true;
          return method.apply(target, args);
        };
        return (...args: unknown[]) => {
          const held = grant();
          if (!held || held.covers()) return call(args);
          return held.guard().then(
            () => call(args),
            (error: unknown) => {
              throw error instanceof SlotLost && !called ? error.refusal() : error;
            },
          );
        };
      },
    });
  return Object.fromEntries(
    Object.entries(ports as Record<string, object>).map(([name, port]) => [name, wrap(port)]),
  ) as P;
}
