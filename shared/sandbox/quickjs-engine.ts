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
 *   counted) passes `timeoutMs`. Memory: the runtime's allocation limit (`memoryMb`) and a stack limit. Past
 *   either, or on an uncaught error, `runInEngine` throws `SandboxFailure`; nothing partial is returned. A long
 *   built-in call checks for no interrupt: for that the host's hard deadline terminates the whole thread.
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

let modulePromise: Promise<QuickJSWASMModule> | undefined;

/** The engine, loaded once per thread on first use, from the .wasm file beside the emscripten loader. */
export function loadEngine(): Promise<QuickJSWASMModule> {
  modulePromise ??= (async () => {
    // `require`, not `import()`: the package's own loader uses a dynamic import, which neither a CommonJS
    // bundle nor the test runner's module sandbox resolves; the emscripten loader finds the .wasm beside it.
    const core = require('quickjs-emscripten-core') as typeof import('quickjs-emscripten-core');
    const { QuickJSFFI } = require('@jitl/quickjs-wasmfile-release-sync/ffi') as {
      QuickJSFFI: new (module: unknown) => unknown;
    };
    const loader = require('@jitl/quickjs-wasmfile-release-sync/emscripten-module');
    const base = {
      type: 'sync',
      importFFI: async () => QuickJSFFI,
      importModuleLoader: async () => loader.default ?? loader,
    } as unknown as QuickJSSyncVariant;
    return core.newQuickJSWASMModuleFromVariant(base);
  })();
  modulePromise.catch(() => {
    modulePromise = undefined;
  });
  return modulePromise;
}

/** Run `fn(params, context)` in a fresh sandbox; its JSON result, or `SandboxFailure`. */
export async function runInEngine(fn: SandboxFunction, input: RunInput): Promise<unknown> {
  const engine = await loadEngine();
  const runtime = engine.newRuntime();
  const vm = runtime.newContext();
  const guard = new Guard(fn, runtime);
  try {
    return await run(fn, input, vm, runtime, guard);
  } finally {
    guard.closed = true;
    try {
      vm.dispose();
      runtime.dispose();
    } catch {
      // A runtime stopped mid-way may keep objects its dispose asserts on: start the next run on a new engine.
      modulePromise = undefined;
    }
  }
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
    if (/out of memory/i.test(message)) return fail('memory', `exceeded its memory limit of ${fn.memoryMb} MiB`);
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
