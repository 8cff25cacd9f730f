/**
 * Hooks over HTTP (docs/interface.md §15): before and after functions around get-list, get-one, create,
 * batch create and update, in signed and client-key mode, and the sandbox's refusals and limits as a caller
 * and an operator see them.
 */
import path from 'node:path';
import { failureWith } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const CONFIG = path.join(FIXTURES_DIR, 'hooks-config.json');
const MAIN: AppCredentials = {
  appCode: 'app-main',
  accessKey: 'ak-main-client-fixture-0001',
  secret: 'sk-main-client-fixture',
};
const OTHER: AppCredentials = {
  appCode: 'app-other',
  accessKey: 'ak-other-client-fixture-0001',
  secret: 'client-key-fixture-default-secret',
};
const ALICE_KEY = 'dasu_alice-primary-key-0001-Qm9vdHN0cmFwcGVk';

// The functions' sources also when the suite runs against the synthesized bundles: a bundle carries the
// sandbox only where the deployed configuration hooks its operation, and this fixture hooks other operations
// than the demo configuration the bundles were synthesized with.
const harness = new ServiceHarness(CONFIG, { sources: true });
beforeAll(() => harness.start());
afterAll(() => harness.stop());

async function asAlice(route: string, body: Record<string, unknown>): Promise<CallResult> {
  const response = await fetch(`${harness.url}${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-User-AK': ALICE_KEY },
    body: JSON.stringify({ appCode: 'app-main', ...body }),
  });
  return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
}

const main = { app: MAIN };

function logOf(result: CallResult): Record<string, unknown> | undefined {
  const requestId = (result.body as { requestId?: string }).requestId ?? result.headers.get('x-request-id');
  return harness.logLines.find((line) => line.requestId === requestId);
}

async function createPerson(name: string, email: string): Promise<string> {
  const created = await harness.create('people', { name, email }, main);
  expect(created.body).toMatchObject({ success: true });
  return String((created.body as { data: { id: string } }).data.id);
}

describe('after hooks', () => {
  it('what the caller of get-one receives is what the hooks returned, in declared order', async () => {
    const id = await createPerson('Ann Lee', 'ann.lee@example.com');
    const got = await harness.getOne('people', id, main);
    expect(got.body).toMatchObject({
      success: true,
      data: { id, name: 'Ann Lee', email: 'a***@example.com', stamped: 'a***@example.com' },
    });
  });

  it('get-list rows are masked too, in both modes', async () => {
    await createPerson('Bea Moss', 'bea@example.com');
    const signed = await harness.getList('people', { name: 'Bea Moss' }, main);
    const client = await asAlice('/client/data/get-list', { datasetCode: 'people', paramMap: { name: 'Bea Moss' } });
    for (const result of [signed, client]) {
      const rows = (result.body as { data: { tableData: Record<string, unknown>[] } }).data.tableData;
      expect(rows.map((row) => row.email)).toEqual(['b***@example.com']);
    }
  });

  it('a hook adds related data read as the caller (get-list and custom SQL through context.client)', async () => {
    const id = await createPerson('Cy Park', 'cy@example.com');
    for (const amount of [5, 7]) {
      expect((await harness.create('orders', { person_id: id, amount }, main)).body).toMatchObject({ success: true });
    }
    const updated = await harness.update('people', { id, name: 'Cy Park II' }, main);
    expect(updated.body).toMatchObject({ success: true, data: { orders: [7, 5], total: 12 } });
  });

  it('context.client reads run under the caller’s grant: a dataset the caller cannot read is refused', async () => {
    const id = await createPerson('Dee Fox', 'dee@example.com');
    const got = await harness.getOne('people', id, { app: OTHER });
    expect(got.body).toMatchObject({
      success: true,
      data: { id, email: 'd***@example.com', denied: "application 'app-other' has no access to dataset 'orders'" },
    });
  });
});

describe('before hooks', () => {
  it('a throw refuses the request with 1001 and the message, and nothing is written', async () => {
    const refused = await harness.create('people', { email: 'nobody@example.com' }, main);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ ...failureWith(1001), errorMsg: 'a person needs a name' });
    const list = await harness.getList('people', { email: 'nobody@example.com' }, main);
    expect((list.body as { data: { tableData: unknown[] } }).data.tableData).toEqual([]);
  });

  it('what the hook returns is what runs: the name is trimmed', async () => {
    const created = await harness.create('people', { name: '  Eve  ', email: 'eve@example.com' }, main);
    const id = String((created.body as { data: { id: string } }).data.id);
    expect((await harness.getOne('people', id, main)).body).toMatchObject({ data: { name: 'Eve' } });
  });

  it('cannot widen access: a field outside the caller’s writeFields, added by the hook, is refused as if sent', async () => {
    const viaHook = await harness.create('people', { name: 'Fay', widen: true }, main);
    const sent = await harness.create('people', { name: 'Fay', salary: 99999 }, main);
    expect(sent.body).toMatchObject({ success: false, errorCode: 1006 });
    expect(viaHook.body).toEqual({
      ...sent.body,
      requestId: (viaHook.body as unknown as { requestId: string }).requestId,
    });
  });

  it('batch create: the paramList goes through the hook, each record labelled', async () => {
    const batch = await harness.batchCreate('probe', [{ n: 1 }, { n: 2 }], main);
    expect(batch.body).toMatchObject({ success: true });
    const ids = (batch.body as { data: unknown[] }).data as string[];
    const labels = [];
    for (const id of ids) labels.push((await harness.getOne('probe', id, main)).body);
    expect(labels.map((body) => (body as { data: { label: string } }).data.label)).toEqual(['#1', '#2']);
  });
});

describe('the sandbox', () => {
  /** A probe record, written by batch create (create of probe has a failing after hook). */
  async function probeRecord(): Promise<string> {
    const batch = await harness.batchCreate('probe', [{ n: 1 }], main);
    return String((batch.body as { data: string[] }).data[0]);
  }

  it('offers no process, require, fetch, timers, std/os or import, and nothing of a previous run', async () => {
    const id = await probeRecord();
    const first = await harness.getOne('probe', id, main);
    const second = await asAlice('/client/data/get-one', { datasetCode: 'probe', paramMap: { id } });
    const none = ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined'];
    for (const result of [first, second]) {
      expect(result.body).toMatchObject({ success: true, data: { seen: none, imported: 'refused' } });
    }
    expect(logOf(first)?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect((first.body as { data: Record<string, unknown> }).data.context).toEqual({
      appCode: 'app-main',
      datasetCode: 'probe',
      operation: 'get-one',
      requestId: logOf(first)?.requestId,
      userInfo: null,
    });
    expect((second.body as { data: Record<string, unknown> }).data.context).toEqual({
      appCode: 'app-main',
      datasetCode: 'probe',
      operation: 'get-one',
      requestId: logOf(second)?.requestId,
      userInfo: { userId: 'alice', userName: 'Alice Martin', loginName: 'alice@example.com', role: 'admin' },
    });
    expect((second.body as { data: Record<string, unknown> }).data.clientKeys).toEqual(['models', 'sql']);
  });

  it('a runaway hook is interrupted at its CPU limit: 3001, the log names the function, the service answers on', async () => {
    const started = Date.now();
    const result = await harness.getList('probe', {}, main);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ success: false, errorCode: 3001 });
    expect(JSON.stringify(result.body)).not.toContain('runaway');
    expect(logOf(result)).toMatchObject({
      errorCode: 3001,
      errorMessage: "before hook function 'runaway' failed: exceeded its CPU time limit of 50 ms",
    });
    const after = await harness.getOne('people', await createPerson('Gil', 'gil@example.com'), main);
    expect(after.body).toMatchObject({ success: true, data: { email: 'g***@example.com' } });
  });

  it('a before hook that overflows its stack fails closed with 3001, and the log names the function', async () => {
    // recurse: a function that calls itself without end. The engine's stack limit stops it; that is a limit, not
    // the function's own throw, so the caller gets no 1001 with the engine's message.
    const result = await harness.getOne('reports', 'any-id', main);
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ success: false, errorCode: 3001 });
    expect(logOf(result)).toMatchObject({
      errorCode: 3001,
      errorMessage: "before hook function 'recurse' failed: exceeded its stack limit",
      hookFailure: 'recurse',
    });
    const run = harness.logLines.find((line) => line.requestId === logOf(result)?.requestId && line.hookFunction);
    expect(run).toMatchObject({ hookFunction: 'recurse', hookNode: 'before', hookFailures: 1 });
  });

  it('a memory-hungry after hook fails closed with 3001; the update it followed stays written', async () => {
    // hungry keeps buffers of 1, 2 and 4 MiB, then asks for 8 MiB: its 8 MiB limit stops it at the fourth
    // allocation, after a few milliseconds of CPU. Its time limit (2,000 ms, counted on the wall clock while the
    // guest runs: docs/hooks.md) is so far away that no load on the machine lets it end the run first. Built from
    // 300,000 small objects instead, the same memory took 260-550 ms of CPU, and on a machine busy enough to give
    // the sandbox's thread less than a quarter of a core the time limit ended it with the wrong failure.
    const id = await probeRecord();
    const result = await harness.update('probe', { id, label: 'after' }, main);
    expect(result.body).toMatchObject({ success: false, errorCode: 3001 });
    expect(logOf(result)).toMatchObject({
      errorMessage: "after hook function 'hungry' failed: exceeded its memory limit of 8 MiB",
    });
    const got = await harness.getOne('probe', id, main);
    expect((got.body as { data: { label: string } }).data.label).toBe('after');
  });

  it('a runaway built-in call is stopped at the hard deadline; a request at the same time and the next are served', async () => {
    // spin: 'x'.repeat(1 << 20) over and over, 1,000 ms limit. Each call is one built-in, which checks for no
    // interrupt: only the host's deadline (the limit plus 100 ms) stops it, by terminating the sandbox's thread.
    const task = await harness.create('tasks', { title: 'served meanwhile' }, main);
    const taskId = String((task.body as { data: { id: string } }).data.id);
    const person = await createPerson('Hal Ode', 'hal@example.com');
    const started = Date.now();
    let otherDoneAt = 0;
    const runaway = harness.getList('tasks', {}, main);
    const other = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const got = await harness.getOne('tasks', taskId, main);
      otherDoneAt = Date.now();
      return got;
    })();
    const hooked = harness.getOne('people', person, main);
    const result = await runaway;
    const answeredAt = Date.now();

    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ success: false, errorCode: 3001 });
    expect(JSON.stringify(result.body)).not.toContain('spin');
    expect(logOf(result)).toMatchObject({
      errorCode: 3001,
      errorMessage: "before hook function 'spin' failed: exceeded its CPU time limit of 1000 ms",
    });
    // 1,000 ms of limit, 100 ms of margin, and room for a loaded machine; without the deadline it runs for minutes.
    expect(answeredAt - started).toBeLessThan(4000);
    // The thread that serves requests never stalled: the request sent meanwhile was answered before the runaway.
    expect((await other).body).toMatchObject({ success: true, data: { id: taskId, title: 'served meanwhile' } });
    expect(otherDoneAt).toBeLessThan(answeredAt);
    expect((await hooked).body).toMatchObject({ success: true, data: { id: person, email: 'h***@example.com' } });

    const next = await harness.getOne('people', person, main);
    expect(next.body).toMatchObject({ success: true, data: { id: person, stamped: 'h***@example.com' } });
  });

  it('a hook hoarding megabyte strings fails closed at its 32 MiB limit with 3001, in time; the process answers on', async () => {
    // hoard: megabyte strings kept without end. The heap its run may grow stops it at 32 MiB, after about 0.3 s of
    // CPU (each string costs some 9 ms to build); its time limit (2,000 ms, counted on the wall clock while the
    // guest runs: docs/hooks.md) is far enough away that a machine giving the sandbox's thread a quarter of a core
    // still sees the memory limit first.
    const created = await harness.create('tasks', { title: 'to hoard' }, main);
    const id = String((created.body as { data: { id: string } }).data.id);
    const started = Date.now();
    const result = await harness.update('tasks', { id, title: 'hoarded' }, main);
    expect(Date.now() - started).toBeLessThan(3500);
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ success: false, errorCode: 3001 });
    expect(logOf(result)).toMatchObject({
      errorMessage: "after hook function 'hoard' failed: exceeded its memory limit of 32 MiB",
    });
    const after = await harness.getOne('people', await createPerson('Ida Roe', 'ida@example.com'), main);
    expect(after.body).toMatchObject({ success: true, data: { email: 'i***@example.com' } });
  });

  it('more than 10 context.client reads in one run fail closed', async () => {
    const result = await harness.create('probe', { label: 'reads', n: 1 }, main);
    expect(result.body).toMatchObject({ success: false, errorCode: 3001 });
    expect(logOf(result)).toMatchObject({
      errorMessage: "after hook function 'too-many-reads' failed: at most 10 context.client reads per run",
    });
  });
});
