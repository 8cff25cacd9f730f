/**
 * A run's CPU limit counts the function's own code, not the copies of its input, its reads' answers and its
 * result (docs/hooks.md, "Limits"; `shared/sandbox/cpu-guard.ts`), with real threads and the real engine; the
 * copies have a bound of their own, and guest code that runs inside a copy is counted.
 *
 * The inputs here are 4 MiB of JSON: copying one in and its result out takes 100 ms or more of CPU, twice a
 * 50 ms limit, while the function's own code (returning what it got) takes well under a millisecond.
 */
import { type RunInput, SandboxFailure, type SandboxFunction, SandboxHost } from '../../../../shared/sandbox/sandbox';

const hosts: SandboxHost[] = [];
function newHost(options: ConstructorParameters<typeof SandboxHost>[0] = {}): SandboxHost {
  // A long start allowance and copy bound: a worker started from source can take seconds on a loaded machine.
  const host = new SandboxHost({ startAllowanceMs: 30_000, copyLimitMs: 30_000, ...options });
  hosts.push(host);
  return host;
}
afterAll(() => Promise.all(hosts.map((host) => host.close())));

function fn(name: string, source: string, timeoutMs = 50): SandboxFunction {
  return { name, source, timeoutMs, memoryMb: 64 };
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

/** About 4 MiB of JSON: 36,000 small objects, as a large request body holds them. */
const LARGE = {
  rows: Array.from({ length: 36_000 }, (_, i) => ({ id: `row-${i}`, name: `name ${'x'.repeat(80)}`, n: i })),
};

const PASS = fn('pass', 'export default async function pass(params) { return params; }');

it('a 4 MiB input copied in and out again is not counted against a 50 ms limit', async () => {
  expect(JSON.stringify(LARGE).length).toBeGreaterThan(4_000_000);
  const host = newHost();
  for (let run = 0; run < 3; run += 1) {
    const result = (await host.run(PASS, input(LARGE))) as typeof LARGE;
    expect(result.rows).toHaveLength(36_000);
    expect(result.rows[35_999]).toEqual({ id: 'row-35999', name: `name ${'x'.repeat(80)}`, n: 35_999 });
  }
});

it('a 4 MiB answer of a context.client read is copied in outside the limit too', async () => {
  const host = newHost();
  const reader = fn(
    'reader',
    `export default async function reader(params, context) {
      const answer = await context.client.models.orders.getList({});
      return answer.rows.length;
    }`,
  );
  expect(
    await host.run(
      reader,
      input(null, async () => LARGE),
    ),
  ).toBe(36_000);
});

it('the copies use the engine’s own JSON: a function that replaces it still gets its input and gives its result', async () => {
  const host = newHost();
  const replacer = fn(
    'replacer',
    `JSON.parse = () => 'replaced';
    JSON.stringify = () => 'replaced';
    export default async function replacer(params) { return { count: params.rows.length }; }`,
  );
  expect(await host.run(replacer, input(LARGE))).toEqual({ count: 36_000 });
});

it('a function that loops on a 4 MiB input is still stopped at its limit', async () => {
  const host = newHost();
  const loop = fn('loop', 'export default async function loop(params) { for (;;) { params.rows.length; } }');
  const failure = await failureOf(host.run(loop, input(LARGE)));
  expect(failure).toMatchObject({
    kind: 'timeout',
    functionName: 'loop',
    message: 'exceeded its CPU time limit of 50 ms',
  });
});

it('guest code that runs inside the copy of its result counts: a looping toJSON is stopped at the limit', async () => {
  const host = newHost();
  const hidden = fn('hidden', 'export default async function hidden() { return { toJSON() { for (;;) {} } }; }');
  const failure = await failureOf(host.run(hidden, input(null)));
  expect(failure).toMatchObject({
    kind: 'timeout',
    functionName: 'hidden',
    message: 'exceeded its CPU time limit of 50 ms',
  });
  // A toJSON that does little is the function's to use.
  const dated = fn('dated', 'export default async function dated() { return { at: new Date(0) }; }');
  expect(await host.run(dated, input(null))).toEqual({ at: '1970-01-01T00:00:00.000Z' });
});

it('a copy past its own bound ends the run, named, and the worker is replaced', async () => {
  const host = newHost({ copyLimitMs: 1 });
  const failure = await failureOf(host.run(PASS, input(LARGE)));
  expect(failure).toMatchObject({
    kind: 'timeout',
    functionName: 'pass',
    message: 'copying its input into the sandbox took longer than 1 ms',
  });
  expect(host.workersStarted).toBe(2);
});
