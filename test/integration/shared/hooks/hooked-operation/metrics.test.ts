/**
 * Per-function hook metrics over HTTP (docs/hooks.md, Observability): each hook run writes a line in CloudWatch
 * embedded metric format with `hookDurationMs` and `hookFailures` by the function's configured name, beside the
 * request's own line. The real handlers, real pipeline and real dynalite, with the hooks fixture.
 */
import path from 'node:path';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const CONFIG = path.join(FIXTURES_DIR, 'hooks-config.json');
const MAIN: AppCredentials = {
  appCode: 'app-main',
  accessKey: 'ak-main-client-fixture-0001',
  secret: 'sk-main-client-fixture',
};
const main = { app: MAIN };

// As in operations.test.ts beside this file: the functions' sources, also when the suite runs against bundles
// synthesized from another configuration.
const harness = new ServiceHarness(CONFIG, { sources: true });
beforeAll(() => harness.start());
afterAll(() => harness.stop());

function linesOf(result: CallResult): Record<string, unknown>[] {
  const requestId = result.headers.get('x-request-id');
  return harness.logLines.filter((line) => line.requestId === requestId);
}

/** The hook-run lines of a request, without their timing. */
function hookRunsOf(result: CallResult) {
  return linesOf(result)
    .filter((line) => line.hookNode !== undefined)
    .map(({ _aws, hookDurationMs, ...line }) => {
      expect(typeof hookDurationMs).toBe('number');
      expect(hookDurationMs as number).toBeGreaterThanOrEqual(0);
      return line;
    });
}

const EMF = {
  Timestamp: expect.any(Number),
  CloudWatchMetrics: [
    {
      Namespace: 'DataAccessService',
      Dimensions: [['hookFunction']],
      Metrics: [
        { Name: 'hookDurationMs', Unit: 'Milliseconds' },
        { Name: 'hookFailures', Unit: 'Count' },
      ],
    },
  ],
};

it('writes one line per hook run, in order, with the duration by function and no failure', async () => {
  const created = await harness.create('people', { name: 'Ida Moss', email: 'ida@example.com' }, main);
  const got = await harness.getOne('people', created.body.data.id, main);
  expect(got.status).toBe(200);
  const lines = linesOf(got);
  // The request's own line first, then a line per run of its two after hooks.
  expect(lines.map((line) => line.hookNode)).toEqual([undefined, 'after', 'after']);
  expect(lines[1]?._aws).toEqual(EMF);
  expect(hookRunsOf(got)).toEqual([
    {
      level: 'INFO',
      requestId: got.headers.get('x-request-id'),
      operation: 'get-one',
      hookFunction: 'mask-email',
      hookNode: 'after',
      hookFailures: 0,
    },
    {
      level: 'INFO',
      requestId: got.headers.get('x-request-id'),
      operation: 'get-one',
      hookFunction: 'stamp',
      hookNode: 'after',
      hookFailures: 0,
    },
  ]);
});

it('gives the request’s own line the time of all its hook runs together and their names, in order', async () => {
  const created = await harness.create('people', { name: 'Ida Moss', email: 'ida@example.com' }, main);
  const got = await harness.getOne('people', created.body.data.id, main);
  const [request, ...runs] = linesOf(got);
  expect(request).toEqual(
    expect.objectContaining({
      operation: 'get-one',
      hookFunctions: 'mask-email,stamp',
      hookDurationMs: expect.any(Number),
    }),
  );
  expect(request).not.toHaveProperty('hookFunction');
  const total = runs.reduce((sum, line) => sum + (line.hookDurationMs as number), 0);
  expect(request?.hookDurationMs as number).toBeCloseTo(total, 1);
  const metrics = (request?._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0];
  expect(metrics?.Metrics.map((metric) => metric.Name)).toContain('hookDurationMs');
});

it('counts a hook that fails closed (3001) as a failure of that function', async () => {
  const result = await harness.getList('probe', {}, main);
  expect(result.status).toBe(500);
  expect(hookRunsOf(result)).toEqual([
    expect.objectContaining({ operation: 'get-list', hookFunction: 'runaway', hookNode: 'before', hookFailures: 1 }),
  ]);
});

it('does not count a before hook’s deliberate refusal (1001) as a failure', async () => {
  const refused = await harness.create('people', { email: 'nobody@example.com' }, main);
  expect(refused.status).toBe(400);
  expect(hookRunsOf(refused)).toEqual([
    expect.objectContaining({ operation: 'create', hookFunction: 'require-name', hookNode: 'before', hookFailures: 0 }),
  ]);
});

it('writes no hook line for a request that runs no hook', async () => {
  const list = await harness.getList('orders', {}, main);
  expect(list.status).toBe(200);
  expect(linesOf(list)).toHaveLength(1);
});
