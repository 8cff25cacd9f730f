/**
 * The sandbox's host and its worker thread (docs/hooks.md), with real threads and the real engine: the hard
 * deadline, the wait for a worker and the reads' own limit, the worker's own memory cap, the engine's stack
 * limit, and when workers are started, reused and replaced.
 *
 * A worker started from source (through tsx) can take a second on a loaded machine, which a run's limit counts
 * beyond `START_ALLOWANCE_MS`: the hosts here give starts a long allowance, except where the wait is the subject.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunInput, SandboxFailure, type SandboxFunction, SandboxHost } from '../../../../shared/sandbox/sandbox';

const hosts: SandboxHost[] = [];
function newHost(options: ConstructorParameters<typeof SandboxHost>[0] = {}): SandboxHost {
  const host = new SandboxHost({ startAllowanceMs: 30_000, ...options });
  hosts.push(host);
  return host;
}
afterAll(() => Promise.all(hosts.map((host) => host.close())));

function fn(name: string, source: string, timeoutMs = 200, memoryMb = 32): SandboxFunction {
  return { name, source, timeoutMs, memoryMb };
}

const input = (params: unknown, read: RunInput['read'] = async () => null): RunInput => ({
  params,
  context: { appCode: 'app-main' },
  read,
  maxReads: 10,
});

async function failureOf(run: Promise<unknown>): Promise<SandboxFailure> {
  try {
    await run;
  } catch (error) {
    if (error instanceof SandboxFailure) return error;
    throw error;
  }
  throw new Error('the run succeeded');
}

const PASS = fn('pass', 'export default async function pass(data, context) { return { data, app: context.appCode }; }');
const SPIN = fn(
  'spin',
  "export default async function spin() { let n = 0; for (;;) n += 'x'.repeat(1 << 20).length; }",
  300,
);

it('starts no worker before the first run, then one that later runs reuse', async () => {
  const host = newHost();
  expect(host.workersStarted).toBe(0);
  for (const n of [1, 2, 3]) {
    expect(await host.run(PASS, input({ n }))).toEqual({ data: { n }, app: 'app-main' });
  }
  expect(host.workersStarted).toBe(1);
});

it('prewarm starts the worker the first run then uses', async () => {
  const host = newHost();
  host.prewarm();
  host.prewarm();
  expect(host.workersStarted).toBe(1);
  expect(await host.run(PASS, input('warm'))).toEqual({ data: 'warm', app: 'app-main' });
  expect(host.workersStarted).toBe(1);
});

describe('waiting for the worker to start (a provisioned container’s init)', () => {
  it('blocks until the prewarmed worker has started, which the first run then uses', async () => {
    const host = newHost();
    host.prewarm();
    expect(host.waitForStart(10_000)).toBe(true);
    expect(await host.run(PASS, input('ready'))).toEqual({ data: 'ready', app: 'app-main' });
    expect(host.workersStarted).toBe(1);
  });

  it('returns at once when no worker is starting', () => {
    expect(newHost().waitForStart(10_000)).toBe(true);
  });

  it('gives up after its time when the worker does not start', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-'));
    const workerFile = path.join(dir, 'silent-worker.js');
    writeFileSync(workerFile, 'setInterval(() => undefined, 1000);');
    const host = newHost({ assets: { workerFile, fromSource: false } });
    host.prewarm();
    expect(host.waitForStart(50)).toBe(false);
  });
});

it('a runaway built-in is stopped at the limit plus the margin, the worker replaced, a run beside it answered', async () => {
  const host = newHost();
  // Two runs at once: two warm workers, as the local server has when two hooked requests overlap.
  await Promise.all([host.run(PASS, input(1)), host.run(PASS, input(2))]);
  expect(host.workersStarted).toBe(2);
  const started = performance.now();
  let besideAt = 0;
  const runaway = failureOf(host.run(SPIN, input(null)));
  const beside = host.run(PASS, input('beside')).then((value) => {
    besideAt = performance.now();
    return value;
  });
  const failure = await runaway;
  const stoppedAt = performance.now();
  expect(failure).toMatchObject({
    kind: 'timeout',
    functionName: 'spin',
    message: 'exceeded its CPU time limit of 300 ms',
  });
  // 300 ms of limit and 100 ms of margin; the rest is room for a loaded machine (each call is ~1 ms of work,
  // which the engine's interrupt counter sees only every 10,000 calls).
  expect(stoppedAt - started).toBeGreaterThanOrEqual(300);
  expect(stoppedAt - started).toBeLessThan(2500);
  expect(await beside).toEqual({ data: 'beside', app: 'app-main' });
  expect(besideAt).toBeLessThan(stoppedAt);
  // The runaway's worker was terminated; the other one is warm, so none is started in its place. The next run is
  // served by the warm one, and the one beside it by a new one.
  expect(host.workersStarted).toBe(2);
  expect(await host.run(PASS, input('next'))).toEqual({ data: 'next', app: 'app-main' });
  await Promise.all([host.run(PASS, input(3)), host.run(PASS, input(4))]);
  expect(host.workersStarted).toBe(3);
});

it('time the host spends on context.client reads does not count towards the deadline', async () => {
  const host = newHost();
  const reader = fn(
    'reader',
    `export default async function reader(data, context) {
      const first = await context.client.models.people.getOne('p-1');
      const second = await context.client.sql.execute('totals', { year: 2026 });
      return { first, second };
    }`,
    50,
  );
  const slowRead: RunInput['read'] = async (kind, target, args) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { kind, target, args };
  };
  expect(await host.run(reader, input(null, slowRead))).toEqual({
    first: { kind: 'getOne', target: 'people', args: ['p-1'] },
    second: { kind: 'sql', target: 'totals', args: [{ year: 2026 }] },
  });
});

it('a read the host refuses rejects in the guest with its message', async () => {
  const host = newHost();
  const denied = fn(
    'denied',
    `export default async function denied(data, context) {
      try { await context.client.models.orders.getList({}); return 'read'; } catch (error) { return error.message; }
    }`,
  );
  const refuse: RunInput['read'] = async () => {
    throw new Error("application 'app-other' has no access to dataset 'orders'");
  };
  expect(await host.run(denied, input(null, refuse))).toBe("application 'app-other' has no access to dataset 'orders'");
});

it('a result too big for the worker’s own heap ends that worker, not the process; the next run gets a new one', async () => {
  // A small cap, so that a 15 MB result (one string repeated: little guest memory) exhausts the worker's heap.
  // Turning the result into JSON and copying it out takes a few hundred milliseconds of CPU; the run's time limit
  // is far enough away that a machine giving the worker a small share of a core still sees the heap run out first.
  const host = newHost({ resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 } });
  await host.run(PASS, input(0));
  const big = fn(
    'big',
    "export default async function big() { return Array(120).fill('x'.repeat(1 << 17)); }",
    10_000,
    64,
  );
  const failure = await failureOf(host.run(big, input(null)));
  expect(failure).toMatchObject({ kind: 'memory', functionName: 'big', message: 'exceeded the memory of its sandbox' });
  expect(await host.run(PASS, input('after'))).toEqual({ data: 'after', app: 'app-main' });
  expect(host.workersStarted).toBe(2);
});

it('a run waiting for a worker that does not start fails within its limit, the margin and the start allowance', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-'));
  const workerFile = path.join(dir, 'silent-worker.js');
  writeFileSync(workerFile, 'setInterval(() => undefined, 1000);');
  const host = newHost({ assets: { workerFile, fromSource: false }, startAllowanceMs: 100 });
  const failure = await failureOf(
    host.run(fn('waiting', 'export default async function waiting() {}', 50), input(null)),
  );
  expect(failure).toMatchObject({
    kind: 'timeout',
    functionName: 'waiting',
    message: 'exceeded its time limit of 50 ms waiting for its sandbox to start',
  });
});

it('a function that overflows its stack fails as a limit, named, not as its own throw', async () => {
  const host = newHost();
  const recurse = fn(
    'recurse',
    'export default async function recurse() { const down = (n) => down(n + 1) + 1; return down(0); }',
  );
  expect(await failureOf(host.run(recurse, input(null)))).toMatchObject({
    kind: 'memory',
    functionName: 'recurse',
    message: 'exceeded its stack limit',
  });
  // Caught by the function itself, the overflow is its own business.
  const caught = fn(
    'caught',
    'export default async function caught() { const down = (n) => down(n + 1) + 1; try { down(0); } catch (e) { return e.name; } }',
  );
  expect(await host.run(caught, input(null))).toBe('InternalError');
});

it('the reads of one run have a wall-clock limit of their own: past it the run fails closed, named', async () => {
  const host = newHost({ readsLimitMs: 300 });
  const reader = fn(
    'slow-reader',
    `export default async function slowReader(data, context) {
      await context.client.models.people.getOne('p-1');
      return context.client.models.people.getOne('p-2');
    }`,
    50,
  );
  // Two reads of 200 ms: the first is within the limit, the second takes the reads past it.
  const slowRead: RunInput['read'] = async (_kind, _target, args) => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    return args[0];
  };
  expect(await failureOf(host.run(reader, input(null, slowRead)))).toMatchObject({
    kind: 'timeout',
    functionName: 'slow-reader',
    message: 'its context.client reads took longer than 300 ms',
  });
  // With reads that fit, the same function answers.
  const quickRead: RunInput['read'] = async (_kind, _target, args) => args[0];
  expect(await host.run(reader, input(null, quickRead))).toBe('p-2');
});

it('a worker terminated at its deadline is replaced at once when no other is warm', async () => {
  const host = newHost();
  await host.run(PASS, input(0));
  expect(await failureOf(host.run(SPIN, input(null)))).toMatchObject({ kind: 'timeout', functionName: 'spin' });
  expect(host.workersStarted).toBe(2);
  expect(await host.run(PASS, input('after'))).toEqual({ data: 'after', app: 'app-main' });
  expect(host.workersStarted).toBe(2);
});

describe('memoryMb bounds the memory a run holds, in blocks of any size', () => {
  const holding = (name: string, block: string, count: number, memoryMb: number) =>
    fn(
      name,
      `export default async function hold() {
        const held = [];
        for (let i = 0; i < ${count}; i++) held.push(${block});
        return held.length;
      }`,
      2000,
      memoryMb,
    );
  const typedArrays = (count: number, memoryMb: number) =>
    holding('arrays', 'new Uint8Array(1 << 20).fill(i)', count, memoryMb);

  it('64 MiB of typed arrays under an 8 MiB limit fails closed as the memory limit', async () => {
    const host = newHost();
    expect(await failureOf(host.run(typedArrays(64, 8), input(null)))).toMatchObject({
      kind: 'memory',
      functionName: 'arrays',
      message: 'exceeded its memory limit of 8 MiB',
    });
  });

  it('64 MiB of large strings under an 8 MiB limit fails closed as the memory limit', async () => {
    const host = newHost();
    const strings = holding('strings', "'x'.repeat(1 << 20) + i", 64, 8);
    expect(await failureOf(host.run(strings, input(null)))).toMatchObject({
      kind: 'memory',
      functionName: 'strings',
      message: 'exceeded its memory limit of 8 MiB',
    });
  });

  it('many small objects past the limit fail closed as the memory limit', async () => {
    const host = newHost();
    const objects = holding('objects', '{ i, label: "item" }', 4_000_000, 8);
    expect(await failureOf(host.run(objects, input(null)))).toMatchObject({
      kind: 'memory',
      functionName: 'objects',
      message: 'exceeded its memory limit of 8 MiB',
    });
  });

  it('a run under its limit succeeds, also after a run that failed at its own; the worker is kept', async () => {
    const host = newHost();
    expect(await host.run(typedArrays(4, 8), input(null))).toBe(4);
    expect(await failureOf(host.run(typedArrays(64, 8), input(null)))).toMatchObject({ kind: 'memory' });
    expect(await host.run(typedArrays(4, 8), input(null))).toBe(4);
    // A larger limit allows more: the limit is the run's, not what an earlier run left.
    expect(await host.run(typedArrays(40, 64), input(null))).toBe(40);
    expect(await failureOf(host.run(typedArrays(16, 8), input(null)))).toMatchObject({ kind: 'memory' });
    expect(await host.run(PASS, input('after'))).toEqual({ data: 'after', app: 'app-main' });
    expect(host.workersStarted).toBe(1);
  });
});
