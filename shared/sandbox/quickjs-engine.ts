/**
 * The engine that runs a partner's backend function (docs/hooks.md): QuickJS compiled to WebAssembly, the
 * release build of the synchronous variant. It runs inside the sandbox's worker thread (`sandbox-worker.ts`),
 * never in the thread that serves requests. Partner code is untrusted and runs inside the functions that hold
 * every application's data, so Node's `vm` is no boundary; here the guest reaches the host only through what
 * this module hands it: its input as JSON, a frozen `context`, and `context.client` reads that the host performs.
 *
 * - **Sync, not asyncify.** The guest never blocks on the host: a host read returns a guest promise at once,
 *   the host performs it, then settles that promise and runs the guest's pending jobs. The engine is never
 *   suspended with host frames on its stack, several reads may be in flight, and the sync build is the smaller
 *   and faster one.
 * - **Fresh runtime per run.** Every run gets its own QuickJS runtime and context, disposed afterwards:
 *   nothing a run leaves behind (globals, prototypes, closures) exists for the next run, application or user.
 * - **Limits.** CPU: an interrupt handler stops the guest once the time it spent executing (host reads not
 *   counted) passes `timeoutMs`. Memory: the WebAssembly heap a run may hold (`memoryMb`, below) and a stack
 *   limit. Past either, or on an uncaught error, `runInEngine` throws `SandboxFailure`; nothing partial is
 *   returned. A long built-in call checks for no interrupt: for that the host's hard deadline terminates the
 *   whole thread.
 * - **Memory is bounded by the heap, not by QuickJS's count.** Built for WebAssembly, QuickJS cannot see the size
 *   of a block it allocated, so its own allocation limit counts a few bytes per block and stops only a single
 *   request larger than the limit: alone, it let a hook hold hundreds of MiB in typed arrays or strings. So the
 *   engine's heap is a `WebAssembly.Memory` of ours (`BoundedHeap`) that grows only as a run's budget allows:
 *   - when the engine is loaded, the spare room of its initial heap (16 MiB, the build's minimum) is taken by
 *     blocks never freed and never touched (address space, not resident memory), all but `RESERVE_BYTES`;
 *   - a run may grow the heap by its `memoryMb` less that reserve: a growth past it is refused, the allocation
 *     fails, and QuickJS throws "out of memory", which fails the run as its memory limit. So a run holds at most
 *     `max(memoryMb, RESERVE_BYTES)` of heap, whatever its blocks' sizes. (The engine's loader grows the heap in
 *     steps of 5-20 % of its size; a step that would pass the budget is refused, so a run may be stopped up to
 *     that step before its limit, never after it.);
 *   - the heap never shrinks: after a run that grew it, the room it grew is taken the same way (a few
 *     allocations; that memory stays resident, as any heap's would), so that no run finds room another run's
 *     limit allowed; once runs have grown the heap by `GROWN_HEAP_BOUND_BYTES`, the engine is dropped and a fresh
 *     one loads at once, off the next run's time. Runs within the reserve (most hooks) cost none of this;
 *   - runs on one engine take turns (`runInEngine` queues them; the worker runs one at a time anyway), so a run's
 *     budget is its own, never shared with or taken by another run;
 *   - the heap's own `maximum` is the initial heap, that bound and the largest `memoryMb` (128 MiB): a worker
 *     holds at most 16 + 32 + 128 = 176 MiB of WebAssembly heap for its engine (plus a dropped one until the
 *     garbage collector frees it), whatever the rest did.
 *   QuickJS's own limit stays set too: it still refuses a single request larger than `memoryMb` at once.
 */
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSSyncVariant,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import {
  cpuLimitMessage,
  type RunInput,
  SandboxFailure,
  type SandboxFailureKind,
  type SandboxFunction,
  scriptOf,
} from './sandbox-contract';

const STACK_BYTES = 256 * 1024;

/**
 * Builds `context.client` inside the guest from one host function, then forgets the host function: guest code
 * sees only these closures. Results cross as JSON text, so no host object is ever reachable.
 */
const PRELUDE = `(function (host, contextJson) {
  const call = (kind, target, args) => host(kind, target, JSON.stringify(args)).then((text) => JSON.parse(text));
  const context = JSON.parse(contextJson);
  const models = new Proxy({}, {
    get(_, datasetCode) {
      if (typeof datasetCode !== 'string') return undefined;
      return Object.freeze({
        getOne: (id) => call('getOne', datasetCode, [id]),
        getList: (paramMap) => call('getList', datasetCode, [paramMap ?? {}]),
      });
    },
  });
  context.client = Object.freeze({
    models,
    sql: Object.freeze({ execute: (sqlCode, params) => call('sql', String(sqlCode), [params ?? {}]) }),
  });
  return Object.freeze(context);
})`;

const MIB = 1024 * 1024;
const PAGE_BYTES = 64 * 1024;
/** The engine's initial heap: the minimum its build declares for the memory it imports. */
const INITIAL_HEAP_BYTES = 16 * MIB;
/** The largest `memoryMb` a function may have (the catalog's bound): with the initial heap, the heap's maximum. */
const LARGEST_MEMORY_MB = 128;
/**
 * How far runs may have grown an engine's heap before it is dropped for a fresh one (the heap never shrinks);
 * below it, the room a run grew is taken again, like a new heap's, so that the next run finds only the reserve.
 */
const GROWN_HEAP_BOUND_BYTES = 32 * MIB;
/**
 * Room left free in an engine's heap between runs: a run's runtime and context (about 0.3 MiB) and a hook's first
 * tens of thousands of objects fit in it, so that most runs never grow the heap. It counts towards each run's
 * `memoryMb` (a function with less may still hold this much).
 */
export const RESERVE_BYTES = 4 * MIB;
/** Below this size the spare room of a heap is left as it is (fragments too small to matter). */
const SMALLEST_FILL_BYTES = 4 * 1024;

/** `WebAssembly.Memory`, which the project's type library (ES2024, no DOM) does not declare. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory };
  }
).WebAssembly.Memory;

/** What a refused growth throws (the loader catches it): made once, as refusals come in bursts. */
const GROWTH_REFUSED = new RangeError('past the run’s memory limit');

/** The engine's WebAssembly heap: it grows only up to `ceilingBytes`, which each run sets from its `memoryMb`. */
class BoundedHeap extends WasmMemory {
  ceilingBytes: number;
  /** A growth was refused since the ceiling was last set: the run that failed did so for its memory limit. */
  refused = false;

  constructor() {
    super({
      initial: INITIAL_HEAP_BYTES / PAGE_BYTES,
      maximum: (INITIAL_HEAP_BYTES + GROWN_HEAP_BOUND_BYTES + LARGEST_MEMORY_MB * MIB) / PAGE_BYTES,
    });
    this.ceilingBytes = this.bytes;
  }

  /** From now on, the heap may grow by `bytes` at most. */
  allowGrowth(bytes: number): void {
    this.ceilingBytes = this.bytes + Math.max(0, bytes);
    this.refused = false;
  }

  get bytes(): number {
    return this.buffer.byteLength;
  }

  /** The engine's loader grows the heap through this; a refusal makes the allocation that needed it fail. */
  override grow(pages: number): number {
    if (this.bytes + pages * PAGE_BYTES > this.ceilingBytes) {
      this.refused = true;
      throw GROWTH_REFUSED;
    }
    return super.grow(pages);
  }
}

/** The loaded engine's own allocator, through which a heap's spare room is taken. */
interface EngineAllocator {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

interface Engine {
  module: QuickJSWASMModule;
  heap: BoundedHeap;
  allocator: EngineAllocator;
  /** The heap's size once loaded: runs that grow it past this plus `GROWN_HEAP_BOUND_BYTES` drop the engine. */
  loadedBytes: number;
}

let enginePromise: Promise<Engine> | undefined;

/** The engine, loaded on first use and again after a run that grew its heap, from the .wasm beside its loader. */
function engine(): Promise<Engine> {
  enginePromise ??= loadFreshEngine();
  enginePromise.catch(() => {
    enginePromise = undefined;
  });
  return enginePromise;
}

async function loadFreshEngine(): Promise<Engine> {
  // `require`, not `import()`: the package's own loader uses a dynamic import, which neither a CommonJS
  // bundle nor the test runner's module sandbox resolves; the emscripten loader finds the .wasm beside it.
  const core = require('quickjs-emscripten-core') as typeof import('quickjs-emscripten-core');
  const { QuickJSFFI } = require('@jitl/quickjs-wasmfile-release-sync/ffi') as {
    QuickJSFFI: new (module: unknown) => unknown;
  };
  const loaderModule = require('@jitl/quickjs-wasmfile-release-sync/emscripten-module');
  const loader = (loaderModule.default ?? loaderModule) as (options: object) => Promise<EngineAllocator>;
  const heap = new BoundedHeap();
  let allocator: EngineAllocator | undefined;
  const variant = {
    type: 'sync',
    importFFI: async () => QuickJSFFI,
    importModuleLoader: async () => async (options: object) => {
      allocator = await loader({ ...options, wasmMemory: heap });
      return allocator;
    },
  } as unknown as QuickJSSyncVariant;
  const module = await core.newQuickJSWASMModuleFromVariant(variant);
  if (!allocator) throw new Error('the engine loaded without its allocator');
  takeSpareRoom(allocator, heap);
  return { module, heap, allocator, loadedBytes: heap.bytes };
}

/**
 * Takes the spare room of a heap, all but `RESERVE_BYTES`, with blocks that are never freed (the engine is
 * dropped whole) and never written (in a new heap they cost address space, not memory): a run then finds only the
 * reserve free, and anything more it holds is growth, which its budget bounds.
 */
function takeSpareRoom(allocator: EngineAllocator, heap: BoundedHeap): void {
  heap.allowGrowth(0);
  const reserve = allocator._malloc(RESERVE_BYTES);
  for (let size = heap.bytes; size >= SMALLEST_FILL_BYTES; ) {
    if (allocator._malloc(size) === 0) size /= 2;
  }
  if (reserve !== 0) allocator._free(reserve);
}

/** Load the engine now (the worker does as it starts), so that a first run does not wait for it. */
export async function loadEngine(): Promise<void> {
  await engine();
}

/** Runs on this thread's engine, one after another: each run's memory budget is its own. */
let turn: Promise<unknown> = Promise.resolve();

/** Run `fn(params, context)` in a fresh sandbox; its JSON result, or `SandboxFailure`. */
export function runInEngine(fn: SandboxFunction, input: RunInput): Promise<unknown> {
  const result = turn.then(() => runOnce(fn, input));
  turn = result.catch(() => undefined);
  return result;
}

async function runOnce(fn: SandboxFunction, input: RunInput): Promise<unknown> {
  const current = await engine();
  const { heap } = current;
  const startBytes = heap.bytes;
  heap.allowGrowth(fn.memoryMb * MIB - RESERVE_BYTES);
  const runtime = current.module.newRuntime();
  const vm = runtime.newContext();
  const guard = new Guard(fn, runtime);
  try {
    return await run(fn, input, vm, runtime, guard);
  } catch (error) {
    // Out of heap, QuickJS may fail without the memory to build its error, or the host's next step may: a refused
    // growth says what happened, whatever surfaced (a timeout aside, which is reported as such).
    if (heap.refused && !(error instanceof SandboxFailure && error.kind === 'timeout')) throw memoryLimit(fn);
    throw error;
  } finally {
    guard.closed = true;
    heap.allowGrowth(0);
    try {
      vm.dispose();
      runtime.dispose();
      // The heap never shrinks: room this run grew would be the next run's beyond its own limit. It is taken
      // again (a few allocations), or past the bound, the engine is replaced.
      if (heap.bytes > current.loadedBytes + GROWN_HEAP_BOUND_BYTES) dropEngine();
      else if (heap.bytes > startBytes) takeSpareRoom(current.allocator, heap);
    } catch {
      // A runtime stopped mid-way may keep objects its dispose asserts on: start the next run on a new engine.
      dropEngine();
    }
  }
}

/**
 * The next run gets a fresh engine, loaded as soon as this run's answer has gone (not in the next run's time);
 * this one's heap is freed once nothing holds it.
 */
function dropEngine(): void {
  enginePromise = undefined;
  setImmediate(() => void engine());
}

function memoryLimit(fn: SandboxFunction): SandboxFailure {
  return new SandboxFailure('memory', fn.name, `exceeded its memory limit of ${fn.memoryMb} MiB`);
}

/** Counts the guest's CPU time across its slices and interrupts it past the limit. */
class Guard {
  private spentMs = 0;
  private enteredAt: number | undefined;
  interrupted = false;
  closed = false;

  constructor(
    private readonly fn: SandboxFunction,
    runtime: QuickJSRuntime,
  ) {
    runtime.setMemoryLimit(fn.memoryMb * 1024 * 1024);
    runtime.setMaxStackSize(STACK_BYTES);
    runtime.setInterruptHandler(() => {
      if (this.enteredAt === undefined) return false;
      if (this.spentMs + (performance.now() - this.enteredAt) > this.fn.timeoutMs) this.interrupted = true;
      return this.interrupted;
    });
  }

  /** Run one slice of guest execution. */
  slice<T>(work: () => T): T {
    this.enteredAt = performance.now();
    try {
      return work();
    } finally {
      this.spentMs += performance.now() - this.enteredAt;
      this.enteredAt = undefined;
    }
  }
}

async function run(
  fn: SandboxFunction,
  input: RunInput,
  vm: QuickJSContext,
  runtime: QuickJSRuntime,
  guard: Guard,
): Promise<unknown> {
  const fail = (kind: SandboxFailureKind, message: string) => new SandboxFailure(kind, fn.name, message);
  /** A guest error handle → a failure: limits first (they surface as guest errors too). */
  const failureOf = (handle: QuickJSHandle): SandboxFailure => {
    const error = vm.dump(handle) as { name?: string; message?: string } | string | undefined;
    handle.dispose();
    const message =
      typeof error === 'object' && error !== null ? String(error.message ?? error.name ?? 'error') : String(error);
    if (guard.interrupted) return fail('timeout', cpuLimitMessage(fn.timeoutMs));
    if (/out of memory/i.test(message)) return memoryLimit(fn);
    // QuickJS reports its stack limit as `InternalError: stack overflow` (V8 as a RangeError): a limit, which fails
    // closed with the function's name, never the function's own throw (which a before hook's caller would see).
    if (typeof error === 'object' && /^(InternalError|RangeError)$/.test(error?.name ?? '') && /stack/i.test(message)) {
      return fail('memory', 'exceeded its stack limit');
    }
    return fail('threw', message);
  };
  const unwrap = (result: ReturnType<QuickJSContext['evalCode']>): QuickJSHandle => {
    if (result.error) throw failureOf(result.error);
    return result.value;
  };

  let script: string;
  try {
    script = scriptOf(fn.source);
  } catch (error) {
    throw fail('engine', (error as Error).message);
  }
  unwrap(guard.slice(() => vm.evalCode(script, `${fn.name}.js`, { type: 'global' }))).dispose();
  const entry = vm.getProp(vm.global, '__function__');
  if (vm.typeof(entry) !== 'function') {
    entry.dispose();
    throw fail('engine', 'its default export is not a function');
  }
  vm.setProp(vm.global, '__function__', vm.undefined);

  // Host reads: each returns a guest promise, settled when the host's read completes.
  const pending = new Set<Promise<void>>();
  let reads = 0;
  const host = vm.newFunction('host', (kindHandle, targetHandle, argsHandle) => {
    const kind = vm.getString(kindHandle);
    const target = vm.getString(targetHandle);
    const args = JSON.parse(vm.getString(argsHandle)) as unknown[];
    const deferred = vm.newPromise();
    reads += 1;
    const work =
      reads > input.maxReads
        ? Promise.reject(new Error(`at most ${input.maxReads} context.client reads per run`))
        : input.read(kind, target, args);
    const settled = work.then(
      (value) => {
        if (guard.closed) return;
        const text = vm.newString(JSON.stringify(value ?? null));
        deferred.resolve(text);
        text.dispose();
      },
      (error: unknown) => {
        if (guard.closed) return;
        const reason = vm.newError(error instanceof Error ? error.message : String(error));
        deferred.reject(reason);
        reason.dispose();
      },
    );
    const tracked = settled.finally(() => {
      deferred.dispose();
      pending.delete(tracked);
    });
    pending.add(tracked);
    return deferred.handle;
  });

  const prelude = unwrap(guard.slice(() => vm.evalCode(PRELUDE, 'prelude.js', { type: 'global' })));
  const contextJson = vm.newString(JSON.stringify(input.context));
  const contextHandle = unwrap(guard.slice(() => vm.callFunction(prelude, vm.undefined, host, contextJson)));
  prelude.dispose();
  contextJson.dispose();
  host.dispose();

  const paramsJson = vm.newString(JSON.stringify(input.params ?? null));
  const jsonObject = vm.getProp(vm.global, 'JSON');
  const parse = vm.getProp(jsonObject, 'parse');
  jsonObject.dispose();
  const params = unwrap(vm.callFunction(parse, vm.undefined, paramsJson));
  paramsJson.dispose();
  parse.dispose();

  const returned = unwrap(guard.slice(() => vm.callFunction(entry, vm.undefined, params, contextHandle)));
  entry.dispose();
  params.dispose();
  contextHandle.dispose();

  // Drive the guest until the promise it returned settles: run its jobs, then wait for a host read.
  try {
    for (;;) {
      const jobs = guard.slice(() => runtime.executePendingJobs());
      if (jobs.error) throw failureOf(jobs.error);
      const state = vm.getPromiseState(returned);
      if (state.type === 'fulfilled') {
        if (state.notAPromise) return guard.slice(() => resultOf(vm, returned, fail));
        const value = guard.slice(() => resultOf(vm, state.value, fail));
        state.value.dispose();
        return value;
      }
      if (state.type === 'rejected') throw failureOf(state.error);
      if (pending.size === 0) throw fail('result', 'returned a promise that never settles');
      await Promise.race(pending);
    }
  } finally {
    returned.dispose();
  }
}

/** The guest's result as JSON: what a caller can receive. */
function resultOf(
  vm: QuickJSContext,
  handle: QuickJSHandle,
  fail: (kind: SandboxFailureKind, message: string) => SandboxFailure,
): unknown {
  const json = vm.getProp(vm.global, 'JSON');
  const stringify = vm.getProp(json, 'stringify');
  json.dispose();
  const result = vm.callFunction(stringify, vm.undefined, handle);
  stringify.dispose();
  if (result.error) {
    result.error.dispose();
    throw fail('result', 'returned a value that is not JSON');
  }
  const text = vm.typeof(result.value) === 'string' ? vm.getString(result.value) : undefined;
  result.value.dispose();
  if (text === undefined) throw fail('result', 'returned nothing (undefined)');
  return JSON.parse(text);
}
