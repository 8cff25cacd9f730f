/**
 * The sandbox's worker thread (docs/hooks.md): where partner functions run, so that a run the engine cannot
 * interrupt (one long built-in call) stalls only this thread, which the host then terminates. As it starts it
 * loads the engine from the .wasm beside its file and, unless the host says a run is already waiting, runs a
 * trivial function once (so that a caller's first run does not pay for compiling the engine's code; a run
 * already waiting would only be delayed by it); it says `ready`, then runs one function at a time as the host asks. A
 * `context.client` read becomes a message to the host, which performs it as the caller and answers; the guest's
 * promise settles with that answer.
 *
 * Shipped as its own file beside a hooked function's bundle (built with its engine glue by the bundling step),
 * so that functions without hooks carry none of it.
 */
import { setPriority } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine, runInEngine } from './quickjs-engine';
import { type FromWorker, SandboxFailure, type SandboxWorkerData, type ToWorker } from './sandbox-contract';

const port = parentPort;
if (!port) throw new Error('sandbox-worker runs only as a worker thread');
const post = (message: FromWorker) => port.postMessage(message);

const answers = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextReadId = 0;

function readFromHost(kind: string, target: string, args: unknown[]): Promise<unknown> {
  nextReadId += 1;
  const readId = nextReadId;
  return new Promise((resolve, reject) => {
    answers.set(readId, { resolve, reject });
    post({ type: 'read', readId, kind, target, args });
  });
}

/** A trivial function run once before `ready`: the engine's code is compiled on its first run, not a caller's. */
const WARM_UP = {
  name: 'warm-up',
  source: 'export default async function warmUp(data, context) { return { ...data, client: typeof context.client }; }',
  timeoutMs: 1000,
  memoryMb: 8,
};

/** Set when the host has a run waiting for this worker: the warm-up would only delay it. */
let awaited = false;

async function start(): Promise<void> {
  await loadEngine();
  if (!awaited) await runInEngine(WARM_UP, { params: { warm: true }, context: {}, read: readFromHost, maxReads: 0 });
}

async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  try {
    const value = await runInEngine(
      message.fn,
      { params: message.params, context: message.context, read: readFromHost, maxReads: message.maxReads },
      {
        entered: () => post({ type: 'entered', at: performance.timeOrigin + performance.now() }),
        returning: () => post({ type: 'returning', at: performance.timeOrigin + performance.now() }),
      },
    );
    post({ type: 'done', value });
  } catch (error) {
    if (error instanceof SandboxFailure) post({ type: 'failed', kind: error.kind, message: error.message });
    else post({ type: 'failed', kind: 'engine', message: error instanceof Error ? error.message : String(error) });
  }
}

// The engine's code stays in V8's baseline WebAssembly compiler. By default V8 recompiles the functions a run
// makes hot with its optimising compiler, in the background: for the QuickJS interpreter that is 120-150 ms of CPU
// after the first run, which on a function's single vCPU is taken from its first request, while fresh runtimes
// for short hooks run no slower without it (docs/hooks.md, "Cold start"). The flag is the process's: in a
// hooked function the only other WebAssembly is custom SQL a hook's `context.client.sql` runs.
setFlagsFromString('--liftoff-only');

/**
 * Once started, this thread runs below the host's (on Linux a thread's priority is its own; elsewhere it would be
 * the process's, so nothing changes there): when runs saturate the CPU, the host's deadlines and the requests it
 * serves still get the CPU at once, and a run ends at its bound instead of whenever the host's timer gets to run.
 * Its start keeps the process's priority, so that it does not wait behind a function's init.
 */
const GUEST_NICENESS = 10;
function runBelowHost(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(GUEST_NICENESS);
  } catch {
    // Not permitted here: runs keep the process's priority.
  }
}

// The engine loads as the thread starts, without waiting for the host's thread (busy with init when a hooked
// function starts its worker).
start()
  .then(
    () => {
      runBelowHost();
      post({ type: 'ready' });
    },
    (error: unknown) => post({ type: 'failed', kind: 'engine', message: `could not load: ${String(error)}` }),
  )
  .finally(() => {
    // For a host thread blocked until this worker has started (a provisioned container's init).
    const signal = (workerData as SandboxWorkerData | undefined)?.startSignal;
    if (!signal) return;
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  });

port.on('message', (message: ToWorker) => {
  if (message.type === 'awaited') {
    awaited = true;
    return;
  }
  if (message.type === 'run') {
    void run(message);
    return;
  }
  const waiting = answers.get(message.readId);
  answers.delete(message.readId);
  if (!waiting) return;
  if (message.ok) waiting.resolve(JSON.parse(message.json));
  else waiting.reject(new Error(message.message));
});
