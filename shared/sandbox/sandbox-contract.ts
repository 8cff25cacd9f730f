/**
 * What the host and the sandbox's worker thread agree on (docs/hooks.md): the function to run, what it is run
 * with, why a run failed, and the messages that cross between the two threads. No engine code here, so the
 * modules every function bundle carries (the hooks wrapper, the configuration loader) stay small.
 */

export interface SandboxFunction {
  name: string;
  source: string;
  /** CPU time the guest may spend, ms. */
  timeoutMs: number;
  /** Memory the guest's runtime may allocate, MiB. */
  memoryMb: number;
}

/** A read the guest asks the host for: `kind` and `target` name it, `args` are JSON values. */
export type HostRead = (kind: string, target: string, args: unknown[]) => Promise<unknown>;

export interface RunInput {
  /** The function's first argument (JSON). */
  params: unknown;
  /** The function's second argument (JSON), frozen; `client` is added to it. */
  context: Record<string, unknown>;
  /** Performs `context.client` reads. */
  read: HostRead;
  /** Most `context.client` reads one run may make. */
  maxReads: number;
}

/** Why a run failed. `threw`: the guest's own error (its message); the others are limits or bad results. */
export type SandboxFailureKind = 'threw' | 'timeout' | 'memory' | 'result' | 'engine';

export class SandboxFailure extends Error {
  constructor(
    readonly kind: SandboxFailureKind,
    readonly functionName: string,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxFailure';
  }
}

/** The message of a run stopped at its CPU limit, whichever of the engine or the host stopped it. */
export function cpuLimitMessage(timeoutMs: number): string {
  return `exceeded its CPU time limit of ${timeoutMs} ms`;
}

/** Rewrites the one `export default` into an assignment the global script can read back. */
export function scriptOf(source: string): string {
  const matches = source.match(/(^|[\s;])export\s+default\s+/g) ?? [];
  if (matches.length !== 1) throw new Error('must have exactly one `export default` (the function)');
  return `${source.replace(/(^|[\s;])export\s+default\s+/, '$1globalThis.__function__ = ')}\n;`;
}

/**
 * What the host gives a worker as it starts. `startSignal`: one 32-bit cell the worker sets to 1 and notifies once
 * it has started (engine loaded and warm-up run done, or failed), for a host thread that blocks until then
 * (`SandboxHost.waitForStart`): messages would reach a blocked thread only after it unblocks.
 */
export interface SandboxWorkerData {
  entry?: string;
  startSignal: Int32Array;
}

/** Host → worker. `awaited`: a run waits for this worker still loading its engine, so it skips the warm-up run. */
export type ToWorker =
  | { type: 'awaited' }
  | { type: 'run'; fn: SandboxFunction; params: unknown; context: Record<string, unknown>; maxReads: number }
  | { type: 'read-answer'; readId: number; ok: true; json: string }
  | { type: 'read-answer'; readId: number; ok: false; message: string };

/**
 * Worker → host. `entered`: the run's input is in the guest, its function's own time starts; `answered`: the
 * answer of a read the host performed is in the guest; `returning`: the function's promise settled, the copy of
 * its result begins. `at`: when, as `performance.timeOrigin` +
 * `performance.now()` (comparable between threads), so that a host busy elsewhere still counts from then.
 */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'entered'; at: number }
  | { type: 'answered'; at: number }
  | { type: 'returning'; at: number }
  | { type: 'read'; readId: number; kind: string; target: string; args: unknown[] }
  | { type: 'done'; value: unknown }
  | { type: 'failed'; kind: SandboxFailureKind; message: string };
