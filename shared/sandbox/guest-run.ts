/**
 * One run of a partner's function in a fresh QuickJS context (docs/hooks.md): its input copied in, its script and
 * `context` set up, the function called and driven until the promise it returned settles (host reads in between),
 * its result copied out. Only JSON crosses: the input, the `context` and every read's answer are parsed inside the
 * guest, the result is printed inside it; no host object is ever reachable.
 *
 * The copies are not the guest's time (`cpu-guard.ts`): the input is in the guest before its script runs, with
 * the engine's own `JSON` taken before the guest can touch its globals, and the host is told when the function's
 * own time starts (`entered`) and when its result's copy begins (`returning`), so that its deadline counts the
 * function alone and the copies have a bound of their own (`sandbox.ts`).
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import type { CpuGuard } from './cpu-guard';
import {
  cpuLimitMessage,
  type RunInput,
  SandboxFailure,
  type SandboxFailureKind,
  type SandboxFunction,
  scriptOf,
} from './sandbox-contract';

/** Told as a run moves between the copies and the function's own time (the worker tells its host). */
export interface RunPhases {
  /** The input is in the guest: the function's own time starts. */
  entered?(): void;
  /** The function's promise settled: the copy of its result begins. */
  returning?(): void;
}

/**
 * Builds `context.client` inside the guest from one host function, then forgets the host function: guest code
 * sees only these closures. A read's answer arrives already parsed (copied in by the host, not the guest).
 */
const PRELUDE = `(function (host, context) {
  const call = (kind, target, args) => host(kind, target, JSON.stringify(args));
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

export function memoryLimit(fn: SandboxFunction): SandboxFailure {
  return new SandboxFailure('memory', fn.name, `exceeded its memory limit of ${fn.memoryMb} MiB`);
}

/** The engine's own `JSON.parse` and `JSON.stringify`, taken before any guest code runs. */
interface Json {
  parse: QuickJSHandle;
  stringify: QuickJSHandle;
}

export async function runGuest(
  fn: SandboxFunction,
  input: RunInput,
  vm: QuickJSContext,
  runtime: QuickJSRuntime,
  guard: CpuGuard,
  phases: RunPhases,
): Promise<unknown> {
  const jsonObject = vm.getProp(vm.global, 'JSON');
  const json: Json = { parse: vm.getProp(jsonObject, 'parse'), stringify: vm.getProp(jsonObject, 'stringify') };
  jsonObject.dispose();
  try {
    return await runWith(fn, input, vm, runtime, guard, phases, json);
  } finally {
    json.parse.dispose();
    json.stringify.dispose();
  }
}

async function runWith(
  fn: SandboxFunction,
  input: RunInput,
  vm: QuickJSContext,
  runtime: QuickJSRuntime,
  guard: CpuGuard,
  phases: RunPhases,
  json: Json,
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
  /** JSON text → a guest value, through the engine's own parser: a copy, not the guest's time. */
  const copyIn = (text: string): ReturnType<QuickJSContext['evalCode']> =>
    guard.copy(() => {
      const handle = vm.newString(text);
      try {
        return vm.callFunction(json.parse, vm.undefined, handle);
      } finally {
        handle.dispose();
      }
    });

  let script: string;
  try {
    script = scriptOf(fn.source);
  } catch (error) {
    throw fail('engine', (error as Error).message);
  }
  // The input first, before any guest code runs: the copy is not the function's time.
  const params = unwrap(copyIn(JSON.stringify(input.params ?? null)));
  phases.entered?.();
  try {
    return await call(params);
  } finally {
    if (params.alive) params.dispose();
  }

  /** The function's own part: its script, its `context`, the call, its jobs and reads; then its result out. */
  async function call(params: QuickJSHandle): Promise<unknown> {
    unwrap(guard.slice(() => vm.evalCode(script, `${fn.name}.js`, { type: 'global' }))).dispose();
    const entry = vm.getProp(vm.global, '__function__');
    if (vm.typeof(entry) !== 'function') {
      entry.dispose();
      throw fail('engine', 'its default export is not a function');
    }
    vm.setProp(vm.global, '__function__', vm.undefined);

    // Host reads: each returns a guest promise, settled with the answer copied in when the host's read completes.
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
          const answer = copyIn(JSON.stringify(value ?? null));
          if (answer.error) {
            deferred.reject(answer.error);
            answer.error.dispose();
            return;
          }
          deferred.resolve(answer.value);
          answer.value.dispose();
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
    const context = unwrap(copyIn(JSON.stringify(input.context)));
    const contextHandle = unwrap(guard.slice(() => vm.callFunction(prelude, vm.undefined, host, context)));
    prelude.dispose();
    context.dispose();
    host.dispose();

    const returned = unwrap(guard.slice(() => vm.callFunction(entry, vm.undefined, params, contextHandle)));
    entry.dispose();
    params.dispose();
    contextHandle.dispose();

    /** The result out: printed by the engine's own `JSON.stringify`, a copy unless it runs guest code. */
    const copyOut = (handle: QuickJSHandle): unknown => {
      phases.returning?.();
      const printed = guard.copy(() => vm.callFunction(json.stringify, vm.undefined, handle));
      if (printed.error) {
        if (guard.interrupted || /out of memory/i.test(String(vm.dump(printed.error)))) throw failureOf(printed.error);
        printed.error.dispose();
        throw fail('result', 'returned a value that is not JSON');
      }
      const text = vm.typeof(printed.value) === 'string' ? vm.getString(printed.value) : undefined;
      printed.value.dispose();
      if (text === undefined) throw fail('result', 'returned nothing (undefined)');
      return JSON.parse(text);
    };

    // Drive the guest until the promise it returned settles: run its jobs, then wait for a host read.
    try {
      for (;;) {
        const jobs = guard.slice(() => runtime.executePendingJobs());
        if (jobs.error) throw failureOf(jobs.error);
        const state = vm.getPromiseState(returned);
        if (state.type === 'fulfilled') {
          if (state.notAPromise) return copyOut(returned);
          try {
            return copyOut(state.value);
          } finally {
            state.value.dispose();
          }
        }
        if (state.type === 'rejected') throw failureOf(state.error);
        if (pending.size === 0) throw fail('result', 'returned a promise that never settles');
        await Promise.race(pending);
      }
    } finally {
      returned.dispose();
    }
  }
}
