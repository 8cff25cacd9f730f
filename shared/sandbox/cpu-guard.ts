/**
 * A run's CPU limit inside the engine (docs/hooks.md, "Limits"): it counts the time the guest's own code runs,
 * on the wall clock, across the slices the engine runs it in, and interrupts it past `timeoutMs`.
 *
 * The copies of a run's input into the guest and of its result out of it are not the guest's code: a megabyte
 * of JSON takes tens of milliseconds to copy, which would otherwise be taken from a 200 ms budget, and more on a
 * loaded machine. So they are run as copies (`copy`), not slices, and count only if guest code runs inside them.
 * The engine polls for an interrupt as it runs bytecode and as it calls a function, and calls the handler every
 * 10,000 polls; it never polls while it parses or prints plain JSON. A copy polls once, as its own call starts
 * (which may be the poll that calls the handler: a fresh context's first call always is); a copy during which the
 * handler is called twice has run functions (a `toJSON` method, a getter, a Proxy's trap, a Date's own `toJSON`)
 * thousands of times, and from then on it is counted whole, from its start, as a slice would be. A hook cannot hide work in its result's `toJSON`. What a copy of
 * plain data may take has its own bound, the host's (`COPY_LIMIT_MS` in `sandbox.ts`).
 */
import type { QuickJSRuntime } from 'quickjs-emscripten-core';
import type { SandboxFunction } from './sandbox-contract';

const STACK_BYTES = 256 * 1024;

export class CpuGuard {
  private spentMs = 0;
  /** When the slice running now began; undefined between slices. */
  private enteredAt: number | undefined;
  /** When the copy running now began; undefined outside copies. */
  private copyingSince: number | undefined;
  /** The interrupt handler's calls during the copy running now. */
  private copyPolls = 0;
  /** The interrupt handler was called again during the copy running now: guest code runs in it. */
  private guestInCopy = false;
  interrupted = false;
  /** The run is over: host reads that settle later are dropped. */
  closed = false;

  constructor(
    private readonly fn: SandboxFunction,
    runtime: QuickJSRuntime,
  ) {
    runtime.setMemoryLimit(fn.memoryMb * 1024 * 1024);
    runtime.setMaxStackSize(STACK_BYTES);
    runtime.setInterruptHandler(() => {
      if (this.enteredAt !== undefined) return this.past(this.enteredAt);
      if (this.copyingSince === undefined) return false;
      // The copy's own call polls once as it starts, which may be the poll that calls the handler; only
      // functions running inside the copy poll again.
      this.copyPolls += 1;
      if (this.copyPolls < 2) return false;
      this.guestInCopy = true;
      return this.past(this.copyingSince);
    });
  }

  /** The CPU time the guest's own code has spent so far, ms (the slice running now aside). */
  get spent(): number {
    return this.spentMs;
  }

  /** Run one slice of guest execution: counted. */
  slice<T>(work: () => T): T {
    this.enteredAt = performance.now();
    try {
      return work();
    } finally {
      this.spentMs += performance.now() - this.enteredAt;
      this.enteredAt = undefined;
    }
  }

  /** Run a copy of JSON in or out of the guest: counted only if guest code runs inside it. */
  copy<T>(work: () => T): T {
    const since = performance.now();
    this.copyingSince = since;
    this.copyPolls = 0;
    this.guestInCopy = false;
    try {
      return work();
    } finally {
      if (this.guestInCopy) this.spentMs += performance.now() - since;
      this.copyingSince = undefined;
    }
  }

  private past(since: number): boolean {
    if (this.spentMs + (performance.now() - since) > this.fn.timeoutMs) this.interrupted = true;
    return this.interrupted;
  }
}
