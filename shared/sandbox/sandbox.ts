/**
 * Runs a partner's backend function (docs/hooks.md) in the sandbox: QuickJS compiled to WebAssembly
 * (`quickjs-engine.ts`), inside a worker thread (`sandbox-worker.ts`) that this host can terminate. The engine's
 * interrupt handler stops a JavaScript loop at the CPU limit, but a single long built-in call (a huge
 * `String.prototype.repeat`, regular expression or sort) checks for no interrupt; so the host keeps a hard
 * deadline of the limit plus a small margin and, past it, terminates the thread: the run fails closed and the
 * thread that serves requests never stalls.
 *
 * - **One warm worker per container, started lazily.** The first hook run starts it (or `prewarmSandbox`, when
 *   an operation with hooks starts, so that the start overlaps the operation); later runs reuse it while it is
 *   healthy. A worker that passed its deadline, crashed or ran out of memory is terminated and a new one starts
 *   at once, for the next run. Runs at the same time (only the local server has several requests in flight) each
 *   get a worker of their own, so one runaway never delays another's run; at most `MAX_IDLE_WORKERS` are kept,
 *   or as many as the local server keeps warm (`LOCAL_WARM_WORKERS`, started as it starts). A
 *   provisioned container's init blocks until its worker has started (`readySandboxIfProvisioned`), through a
 *   shared-memory signal, since a blocked thread receives no message.
 * - **Each worker loads the engine itself** from the .wasm beside its file, as soon as it starts: nothing waits
 *   for this thread, which is busy with the function's init when a hooked function starts its worker.
 * - **A run's wall time is bounded from the moment it is asked for.** Its deadline is `timeoutMs` + 100 ms on its
 *   worker, and a run that must wait for a worker to start (a container's first, or requests overlapping in the
 *   local server) waits at most `START_ALLOWANCE_MS` of its own before the wait comes out of that time: the host
 *   ends a run by `timeoutMs` + 500 ms after it was asked for, its reads and copies aside, and the documented bound
 *   keeps `HOST_LATENCY_MS` more for the host's own timer, which fires late when runs saturate the CPU (the worker
 *   runs below the host's priority to keep that short: `sandbox-worker.ts`). So: `timeoutMs` + 600 ms at most.
 * - **The copies are not the function's time.** The deadline starts when the worker says the input is in the
 *   guest and stops when it says the result's copy begins, as the engine's CPU limit counts only the guest's own
 *   code (`cpu-guard.ts`); each copy has a wall-clock bound of its own (`COPY_LIMIT_MS`), past which the worker is
 *   terminated. A 1 MB body copied in and out again takes tens of milliseconds each way, which a 200 ms limit
 *   would otherwise lose on a loaded machine.
 * - **Reads are the host's.** A `context.client` read arrives as a message; the host performs it (as the
 *   caller, with the caller's grant) and answers with its JSON. The deadline does not run from the read until its
 *   answer is in the guest, as the engine's CPU limit counts only the guest's own time; the reads of one run
 *   have a wall-clock limit of their own (`READS_LIMIT_MS` together, their answers' copies included), past which
 *   the run fails closed.
 * - **Memory.** The guest may hold its `memoryMb` of the engine's WebAssembly heap and no more (`quickjs-engine.ts`
 *   bounds the heap's growth per run); the worker's own heap is capped too (`resourceLimits`), so a result too big
 *   to handle ends that worker, not the process.
 *
 * Functions without hooks never load this module's engine files: nothing is read or started until a run.
 */
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { locateSandboxAssets, resolveFromSource, type SandboxAssetPaths, sandboxShippedBeside } from './bundle-assets';
import {
  cpuLimitMessage,
  type FromWorker,
  type RunInput,
  SandboxFailure,
  type SandboxFunction,
  type SandboxWorkerData,
  type ToWorker,
} from './sandbox-contract';

export {
  type HostRead,
  type RunInput,
  SandboxFailure,
  type SandboxFailureKind,
  type SandboxFunction,
  scriptOf,
} from './sandbox-contract';

/** What the host allows past a function's CPU limit before it terminates the worker (messages, setup). */
export const HARD_DEADLINE_MARGIN_MS = 100;
/**
 * How long a run may wait for a worker to start before the wait is taken from its own time. A worker started
 * ahead of the run (at init, or left warm by an earlier run) costs nothing here.
 */
export const START_ALLOWANCE_MS = 400;
/** What the documented bound keeps beyond the host's deadlines for the host to end a run on a saturated CPU. */
export const HOST_LATENCY_MS = 100;
/**
 * The wall-clock time each copy of a run may take, its input into the guest and its result out (a megabyte of JSON
 * takes tens of milliseconds each way): they are not the function's time (`cpu-guard.ts`), and this bounds them
 * whatever the input or result; past it the worker is terminated.
 */
export const COPY_LIMIT_MS = 5_000;
/** The wall-clock time the `context.client` reads of one run may take together (they pause its deadline). */
export const READS_LIMIT_MS = 5_000;
/** Time a new worker may take to load the engine before it is dropped (a run stops waiting for it sooner). */
const START_LIMIT_MS = 10_000;
/** Warm workers kept between runs; in Lambda (one request at a time per container) only one is ever used. */
const MAX_IDLE_WORKERS = 2;
/**
 * Workers the local server keeps warm, for hooked requests at the same time: a worker's start costs about 130 ms
 * of CPU, which on a busy machine a run would otherwise spend waiting, within its time.
 */
export const LOCAL_WARM_WORKERS = 8;
/** The worker's own JavaScript heap (results and reads as JSON); the guest's memory is the engine's, apart. */
const WORKER_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: 16 };

export interface SandboxHostOptions {
  /** Where the worker and the .wasm are; found beside the running code, or from source, by default. */
  assets?: SandboxAssetPaths;
  resourceLimits?: ResourceLimits;
  /** @default HARD_DEADLINE_MARGIN_MS */
  marginMs?: number;
  /** @default START_ALLOWANCE_MS */
  startAllowanceMs?: number;
  /** @default READS_LIMIT_MS */
  readsLimitMs?: number;
  /** @default COPY_LIMIT_MS */
  copyLimitMs?: number;
}

/** A worker being started or ready: `ready` settles once its engine is loaded. */
interface Slot {
  worker: Worker;
  ready: Promise<void>;
  /** The engine is loaded: `ready` has resolved. */
  started: boolean;
  /** A run waits for this worker, which then skips its warm-up run (the worker has been told). */
  awaited: boolean;
  /** Set to 1 by the worker once it has started (engine loaded, or failed to): what `waitForStart` blocks on. */
  startSignal: Int32Array;
}

/** From source, the worker's TypeScript runs through tsx (a development dependency, never in a bundle). */
function sourceBootstrap(): string {
  const tsx = resolveFromSource('tsx/cjs/api');
  return `const { workerData } = require('node:worker_threads');
require(${JSON.stringify(tsx)}).require(workerData.entry, workerData.entry);`;
}

export class SandboxHost {
  private readonly idle: Slot[] = [];
  /** Workers to keep warm: one once any has started; more for a process serving runs at the same time. */
  private warm = 1;
  private assetPaths: SandboxAssetPaths | undefined;
  private started = 0;

  constructor(private readonly options: SandboxHostOptions = {}) {}

  /** Workers started so far: 1 after the first run, one more after each worker that had to be replaced. */
  get workersStarted(): number {
    return this.started;
  }

  /** Starts a worker now, if none is warm, so that its start overlaps other work before the first run. */
  prewarm(): void {
    if (this.idle.length === 0) this.idle.push(this.start());
  }

  /**
   * Keep `count` workers warm from now on: start them now, keep that many when runs end, and start the
   * replacement of one that was terminated at once. Settles once they have started (or failed to).
   */
  async keepWarm(count: number): Promise<void> {
    this.warm = Math.max(this.warm, count);
    while (this.idle.length < this.warm) this.idle.push(this.start());
    await Promise.allSettled(this.idle.map((slot) => slot.ready));
  }

  /**
   * Blocks this thread until the warm worker has started (its engine loaded and its warm-up run done), for at
   * most `timeoutMs`: for a container whose init is not on a request's path (provisioned concurrency), so that
   * its first request finds the sandbox ready. Returns at once when no worker is starting; false when the worker
   * had not started within `timeoutMs` (the first run then waits for it, as in any container).
   */
  waitForStart(timeoutMs: number): boolean {
    const slot = this.idle.find((candidate) => !candidate.started);
    return !slot || Atomics.wait(slot.startSignal, 0, 0, timeoutMs) !== 'timed-out';
  }

  /**
   * Run `fn(params, context)` in the sandbox; its JSON result, or `SandboxFailure`. It ends within `timeoutMs` +
   * the margin + `START_ALLOWANCE_MS` of this call, the time its reads and its copies take aside.
   */
  async run(fn: SandboxFunction, input: RunInput): Promise<unknown> {
    const askedAt = performance.now();
    const limitMs = fn.timeoutMs + (this.options.marginMs ?? HARD_DEADLINE_MARGIN_MS);
    const boundMs = limitMs + (this.options.startAllowanceMs ?? START_ALLOWANCE_MS);
    const slot = this.take();
    if (!slot.started && !slot.awaited) {
      slot.awaited = true;
      slot.worker.postMessage({ type: 'awaited' } satisfies ToWorker);
    }
    if (!slot.started) {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        slot.ready.then(
          () => 'ready' as const,
          (error: Error) => error,
        ),
        new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), boundMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (outcome instanceof Error) {
        throw new SandboxFailure('engine', fn.name, `the sandbox did not start: ${outcome.message}`);
      }
      if (outcome === 'late') {
        // The worker goes on starting, for a later run.
        slot.ready.then(
          () => this.release(slot),
          () => undefined,
        );
        throw new SandboxFailure(
          'timeout',
          fn.name,
          `exceeded its time limit of ${fn.timeoutMs} ms waiting for its sandbox to start`,
        );
      }
    }
    slot.worker.ref();
    // The wait for the worker is free up to the allowance; past it, it comes out of the run's own time.
    return this.runOn(slot, fn, input, Math.min(limitMs, boundMs - (performance.now() - askedAt)));
  }

  /** A warm worker for a run: a started one if any, else one still starting, else a new one. */
  private take(): Slot {
    const started = this.idle.findLastIndex((slot) => slot.started);
    const index = started >= 0 ? started : this.idle.length - 1;
    return index >= 0 ? (this.idle.splice(index, 1)[0] as Slot) : this.start();
  }

  /** Terminates every warm worker (tests, and a server that stops). */
  async close(): Promise<void> {
    const slots = this.idle.splice(0);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /**
   * Run on a started worker. The run's own time, from the moment its input is in the guest until its result's
   * copy begins, must end within `remainingMs` (reads aside); each of the copies, in and out, within
   * `copyLimitMs`. Past either the worker is terminated.
   */
  private runOn(slot: Slot, fn: SandboxFunction, input: RunInput, remainingMs: number): Promise<unknown> {
    const { worker } = slot;
    const readsLimitMs = this.options.readsLimitMs ?? READS_LIMIT_MS;
    const copyLimitMs = this.options.copyLimitMs ?? COPY_LIMIT_MS;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      /** Where the run is: its input's copy, the function's own time, its result's copy. */
      let phase: 'copy-in' | 'function' | 'copy-out' = 'copy-in';
      let remaining = remainingMs;
      let readsRemaining = readsLimitMs;
      let armedAt = 0;
      let timer: NodeJS.Timeout | undefined;
      let readsTimer: NodeJS.Timeout | undefined;
      let readsSince = 0;
      let readsInFlight = 0;
      let reads = 0;

      const copyDeadline = (what: string) => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            end(false, new SandboxFailure('timeout', fn.name, `copying ${what} took longer than ${copyLimitMs} ms`)),
          copyLimitMs,
        );
      };
      // The function's deadline runs while no read is in flight; the reads' own limit while one is. It runs from
      // `since`: when the worker said the function's time started, however late this thread heard it.
      const arm = (since = performance.now()) => {
        armedAt = Math.min(since, performance.now());
        timer = setTimeout(
          () => end(false, new SandboxFailure('timeout', fn.name, cpuLimitMessage(fn.timeoutMs))),
          Math.max(0, remaining - (performance.now() - armedAt)),
        );
      };
      const disarm = () => {
        clearTimeout(timer);
        remaining -= performance.now() - armedAt;
        readsSince = performance.now();
        readsTimer = setTimeout(
          () =>
            end(
              false,
              new SandboxFailure('timeout', fn.name, `its context.client reads took longer than ${readsLimitMs} ms`),
            ),
          Math.max(0, readsRemaining),
        );
      };
      const readsDone = (at: number) => {
        clearTimeout(readsTimer);
        readsRemaining -= at - readsSince;
        arm(at);
      };
      const end = (healthy: boolean, failure: SandboxFailure | undefined, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(readsTimer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (healthy) this.release(slot);
        else {
          void worker.terminate();
          // Its replacement starts now, not inside the next run's time.
          while (this.idle.length < this.warm) this.idle.push(this.start());
        }
        if (failure) reject(failure);
        else resolve(value);
      };
      const answer = (message: ToWorker) => {
        if (!settled) worker.postMessage(message);
      };
      const onMessage = (message: FromWorker) => {
        if (message.type === 'done') end(true, undefined, message.value);
        else if (message.type === 'failed') end(true, new SandboxFailure(message.kind, fn.name, message.message));
        else if (message.type === 'entered' && phase === 'copy-in') {
          phase = 'function';
          clearTimeout(timer);
          arm(message.at - performance.timeOrigin);
        } else if (message.type === 'answered') {
          // A read is over once its answer is in the guest: its copy is the read's time, not the function's.
          readsInFlight -= 1;
          if (readsInFlight === 0 && phase === 'function') readsDone(message.at - performance.timeOrigin);
        } else if (message.type === 'returning' && phase === 'function') {
          phase = 'copy-out';
          // A read still in flight (one the function did not wait for) no longer holds the run.
          clearTimeout(readsTimer);
          copyDeadline('its result out of the sandbox');
        } else if (message.type === 'read') {
          reads += 1;
          readsInFlight += 1;
          if (readsInFlight === 1 && phase === 'function') disarm();
          const { readId } = message;
          const work =
            reads > input.maxReads
              ? Promise.reject(new Error(`at most ${input.maxReads} context.client reads per run`))
              : Promise.resolve().then(() => input.read(message.kind, message.target, message.args));
          work.then(
            (value) => answer({ type: 'read-answer', readId, ok: true, json: JSON.stringify(value ?? null) }),
            (error: unknown) =>
              answer({
                type: 'read-answer',
                readId,
                ok: false,
                message: error instanceof Error ? error.message : String(error),
              }),
          );
        }
      };
      const onError = (error: Error & { code?: string }) => {
        const outOfMemory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
        end(
          false,
          new SandboxFailure(
            outOfMemory ? 'memory' : 'engine',
            fn.name,
            outOfMemory ? 'exceeded the memory of its sandbox' : `the sandbox stopped: ${error.message}`,
          ),
        );
      };
      const onExit = () => end(false, new SandboxFailure('engine', fn.name, 'the sandbox stopped unexpectedly'));

      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      try {
        worker.postMessage({
          type: 'run',
          fn,
          params: input.params,
          context: input.context,
          maxReads: input.maxReads,
        } satisfies ToWorker);
      } catch (error) {
        // The input could not be copied to the worker (it is JSON from a bounded body: this is a defect).
        end(true, new SandboxFailure('engine', fn.name, `its input could not be sent: ${(error as Error).message}`));
        return;
      }
      copyDeadline('its input into the sandbox');
    });
  }

  private start(): Slot {
    this.started += 1;
    this.assetPaths ??= this.options.assets ?? locateSandboxAssets();
    const assets = this.assetPaths;
    const resourceLimits = this.options.resourceLimits ?? WORKER_RESOURCE_LIMITS;
    const startSignal = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const worker = assets.fromSource
      ? new Worker(sourceBootstrap(), {
          eval: true,
          workerData: { entry: assets.workerFile, startSignal } satisfies SandboxWorkerData,
          resourceLimits,
        })
      : new Worker(assets.workerFile, { workerData: { startSignal } satisfies SandboxWorkerData, resourceLimits });
    // An idle worker never keeps the process alive; a run refs it while it lasts.
    worker.unref();
    const slot: Slot = {
      worker,
      started: false,
      awaited: false,
      startSignal,
      ready: new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not ready within ${START_LIMIT_MS} ms`)), START_LIMIT_MS);
        timer.unref();
        const onMessage = (message: FromWorker) => {
          if (message.type !== 'ready' && message.type !== 'failed') return;
          clearTimeout(timer);
          worker.off('message', onMessage);
          if (message.type === 'ready') {
            slot.started = true;
            resolve();
          } else reject(new Error(message.message));
        };
        worker.on('message', onMessage);
        worker.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`exited with code ${code}`));
        });
      }),
    };
    // Always listened to, so that a worker failing while idle is dropped instead of crashing the process.
    worker.on('error', () => this.drop(slot));
    worker.on('exit', () => this.drop(slot));
    slot.ready.catch(() => {
      this.drop(slot);
      void worker.terminate();
    });
    return slot;
  }

  private release(slot: Slot): void {
    slot.worker.unref();
    if (this.idle.length < Math.max(MAX_IDLE_WORKERS, this.warm)) this.idle.push(slot);
    else void slot.worker.terminate();
  }

  private drop(slot: Slot): void {
    const index = this.idle.indexOf(slot);
    if (index >= 0) this.idle.splice(index, 1);
  }
}

const sandbox = new SandboxHost();

/** Run `fn(params, context)` in this container's sandbox; its JSON result, or `SandboxFailure`. */
export function runFunction(fn: SandboxFunction, input: RunInput): Promise<unknown> {
  return sandbox.run(fn, input);
}

/** Start this container's sandbox worker now, if none is warm (see `SandboxHost.prewarm`). */
export function prewarmSandbox(): void {
  sandbox.prewarm();
}

/**
 * At a function's init: start the worker if the sandbox's files sit beside the bundle, which the bundling step
 * puts there only when the deployed configuration hooks this function's operation. The worker then loads during
 * init, before the first request; from source (tests, `npm start`) this does nothing until a hook runs.
 */
export function prewarmSandboxIfShipped(): void {
  if (sandboxShippedBeside()) sandbox.prewarm();
}

/**
 * The local server's start (`npm start`), which stands for every function's init and serves many requests at
 * once: `LOCAL_WARM_WORKERS` kept warm from now on, started before it answers.
 */
export function startSandboxes(): Promise<void> {
  return sandbox.keepWarm(LOCAL_WARM_WORKERS);
}

/** How long a provisioned container's init waits for its sandbox at most (it starts in well under a second). */
const PROVISIONED_START_WAIT_MS = 5_000;

/**
 * At the end of a function's init: in a container Lambda initialises ahead of requests (provisioned
 * concurrency, `AWS_LAMBDA_INITIALIZATION_TYPE=provisioned-concurrency`), wait until the sandbox's worker that
 * `prewarmSandboxIfShipped` started is ready, so that the container is frozen with its engine loaded and its first
 * request runs its hooks warm. Elsewhere (on-demand containers, whose init a request waits for; no worker) it
 * returns at once.
 */
export function readySandboxIfProvisioned(env: NodeJS.ProcessEnv = process.env): void {
  if (env.AWS_LAMBDA_INITIALIZATION_TYPE === 'provisioned-concurrency') sandbox.waitForStart(PROVISIONED_START_WAIT_MS);
}
