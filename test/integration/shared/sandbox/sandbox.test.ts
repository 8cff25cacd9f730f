/**
 * The sandbox's host and its worker thread (docs/hooks.md), with real threads and the real engine: the hard
 * deadline, the worker's own memory cap, reads served by the host outside the deadline, and when workers are
 * started, reused and replaced.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunInput, SandboxFailure, type SandboxFunction, SandboxHost } from '../../../../shared/sandbox/sandbox';

const hosts: SandboxHost[] = [];
function newHost(options?: ConstructorParameters<typeof SandboxHost>[0]): SandboxHost {
  const host = new SandboxHost(options);
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
  // The runaway's worker was terminated; the next run is served by the other warm one, and the one after by a new one.
  expect(await host.run(PASS, input('next'))).toEqual({ data: 'next', app: 'app-main' });
  expect(host.workersStarted).toBe(2);
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
  const host = newHost({ resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 } });
  await host.run(PASS, input(0));
  const big = fn(
    'big',
    "export default async function big() { return Array(120).fill('x'.repeat(1 << 17)); }",
    2000,
    64,
  );
  const failure = await failureOf(host.run(big, input(null)));
  expect(failure).toMatchObject({ kind: 'memory', functionName: 'big', message: 'exceeded the memory of its sandbox' });
  expect(await host.run(PASS, input('after'))).toEqual({ data: 'after', app: 'app-main' });
  expect(host.workersStarted).toBe(2);
});
