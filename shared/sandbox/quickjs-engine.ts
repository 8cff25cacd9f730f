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
 * - **Limits.** CPU: an interrupt handler stops the guest once the time it spent executing (host reads and the
 *   copies of its input and result not counted: `cpu-guard.ts`, `guest-run.ts`) passes `timeoutMs`. Memory: the WebAssembly heap a run may hold (`memoryMb`, below) and a stack
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
import type { QuickJSSyncVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { CpuGuard } from './cpu-guard';
import { memoryLimit, type RunPhases, runGuest } from './guest-run';
import { type RunInput, SandboxFailure, type SandboxFunction } from './sandbox-contract';

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

/**
 * Run `fn(params, context)` in a fresh sandbox; its JSON result, or `SandboxFailure`. `phases` is told when the
 * function's own time starts and ends, between the copies of its input and result (`guest-run.ts`).
 */
export function runInEngine(fn: SandboxFunction, input: RunInput, phases: RunPhases = {}): Promise<unknown> {
  const result = turn.then(() => runOnce(fn, input, phases));
  turn = result.catch(() => undefined);
  return result;
}

async function runOnce(fn: SandboxFunction, input: RunInput, phases: RunPhases): Promise<unknown> {
  const current = await engine();
  const { heap } = current;
  const startBytes = heap.bytes;
  heap.allowGrowth(fn.memoryMb * MIB - RESERVE_BYTES);
  const runtime = current.module.newRuntime();
  const vm = runtime.newContext();
  const guard = new CpuGuard(fn, runtime);
  try {
    return await runGuest(fn, input, vm, runtime, guard, phases);
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
