/**
 * `npm run bench -- hook-limits`: whether a hook's documented wall-clock bounds hold when runs compete for the
 * CPU. A local server (from source, as `npm start` runs) on this machine, then 8 hooked requests at once, in
 * rounds: a function that never returns (a JavaScript loop, which the engine interrupts; a built-in call repeated,
 * which only the host's deadline stops, terminating its worker) at the 2,000 ms maximum, a trivial function, and a
 * function that returns a 1 MB `paramMap` unchanged (its copies in and out are not its time), and a function that
 * spends its reads on slow custom SQL; the built-in runaway last, and a pause after each function,
 * so that workers terminated in one case are replaced before the next. For each run, its wall time as the request
 * log reports it (`hookDurationMs`: from the moment the run is asked for, waiting for a worker included) against
 * its bound: `timeoutMs` + 600 ms, its reads and copies aside, which have their own 5,000 ms (together) and 5,000 ms
 * (each copy). Figures go to
 * docs/performance.md ("Hook limits under contention").
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import {
  COPY_LIMIT_MS,
  HARD_DEADLINE_MARGIN_MS,
  HOST_LATENCY_MS,
  READS_LIMIT_MS,
  START_ALLOWANCE_MS,
} from '../shared/sandbox/sandbox';
import { writeSection } from './report';

const PARALLEL = 8;
/** Between functions: time for terminated workers' replacements to start. */
const PAUSE_MS = 3000;
const ROUNDS = 3;
const APP = { appCode: 'app-bench', accessKey: 'ak-bench-hook-limits', secret: 'sk-bench-hook-limits' };

/** Each case: a function, the dataset whose get-list runs it before, and its time limit. */
const CASES = [
  {
    label: 'JavaScript loop, never returns',
    name: 'loop',
    timeoutMs: 2000,
    source: 'export default async function loop() { for (;;) {} }',
  },
  {
    label: 'trivial (`return params`)',
    name: 'trivial',
    timeoutMs: 200,
    source: 'export default async function trivial(params) { return params; }',
  },
  {
    label: 'a 1 MB paramMap returned unchanged (get-one)',
    name: 'copied',
    timeoutMs: 200,
    source: 'export default async function copied(params) { return params; }',
  },
  {
    label: 'ten slow custom SQL reads',
    name: 'reader',
    timeoutMs: 200,
    source: `export default async function reader(params, context) {
      for (let i = 0; i < 10; i += 1) await context.client.sql.execute('slow', {});
      return params;
    }`,
  },
  {
    label: 'built-in call repeated, never returns',
    name: 'builtin',
    timeoutMs: 2000,
    source: "export default async function builtin() { let n = 0; for (;;) n += 'x'.repeat(1 << 20).length; }",
  },
] as const;

/** The copied case runs before get-one, which reads only `id` from its 1 MB `paramMap`; the others before get-list. */
function operationOf(name: string): 'get-one' | 'get-list' {
  return name === 'copied' ? 'get-one' : 'get-list';
}

/** About 1 MB of small objects beside the id: a body just under its limit. */
const PADDING = Array.from({ length: 8_900 }, (_, i) => ({ line: i, text: `line ${i} ${'x'.repeat(80)}` }));

const CONFIG = {
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      quota: { perMinute: 100_000, perHour: 1_000_000, perDay: 10_000_000, concurrent: 100 },
      grants: CASES.map((c) => ({ datasetCode: c.name, operations: ['read', 'create'] })),
    },
  ],
  datasets: CASES.map((c) => ({ appCode: APP.appCode, datasetCode: c.name, fields: [{ name: 'n', type: 'integer' }] })),
  functions: CASES.map((c) => ({ appCode: APP.appCode, name: c.name, timeoutMs: c.timeoutMs, source: c.source })),
  hooks: CASES.map((c) => ({ datasetCode: c.name, operation: operationOf(c.name), node: 'before', function: c.name })),
  // About a second of SQL each: a recursive count the engine cannot shortcut.
  queries: [
    {
      appCode: APP.appCode,
      sqlCode: 'slow',
      sql: 'WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3000000) SELECT count(*) AS c FROM r',
      timeoutMs: 5000,
    },
  ],
};

interface Run {
  hookMs: number;
  requestMs: number;
  errorCode?: number;
  message?: string;
}

export async function run(): Promise<void> {
  const configFile = path.join(os.tmpdir(), `bench-hook-limits-${process.pid}.json`);
  writeFileSync(configFile, JSON.stringify(CONFIG));
  const lines: Record<string, unknown>[] = [];
  const server = await startLocalServer({ configFile, port: 0, logSink: (line) => lines.push(JSON.parse(line)) });
  const started = Date.now();
  /**
   * Requests sent again after their connection failed before any answer: on a saturated machine, an idle
   * keep-alive connection the server closes as the client reuses it (the requests here are reads).
   */
  let resent = 0;
  const post = async (route: string, datasetCode: string, paramMap: Record<string, unknown>): Promise<Response> => {
    try {
      return await postOnce(route, datasetCode, paramMap);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      resent += 1;
      return postOnce(route, datasetCode, paramMap);
    }
  };
  const postOnce = (route: string, datasetCode: string, paramMap: Record<string, unknown>) => {
    const timeStamp = String(Date.now());
    const token = signRequest({ ...APP, datasetCode, timeStamp }, APP.secret);
    return fetch(`${server.url}/openapi/data/${route}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': APP.appCode,
        'X-Dataset-Code': datasetCode,
        'X-Token': token,
      },
      body: JSON.stringify({ appCode: APP.appCode, datasetCode, paramMap }),
    });
  };
  const created = (await (await post('create', 'copied', { n: 1 })).json()) as { data: { id: string } };
  const call = async (datasetCode: string): Promise<Run> => {
    const t0 = performance.now();
    const operation = operationOf(datasetCode);
    const response = await post(
      operation,
      datasetCode,
      operation === 'get-one' ? { id: created.data.id, rows: PADDING } : {},
    );
    await response.text();
    const requestMs = performance.now() - t0;
    const requestId = response.headers.get('x-request-id');
    const line = lines.find((l) => l.requestId === requestId && l.hookDurationMs !== undefined && !l.hookNode);
    return {
      hookMs: Number(line?.hookDurationMs ?? Number.NaN),
      requestMs,
      ...(typeof line?.errorCode === 'number' ? { errorCode: line.errorCode } : {}),
      ...(typeof line?.errorCause === 'string' ? { message: line.errorCause.replace(/^SandboxFailure: /, '') } : {}),
    };
  };

  const rows: string[] = [];
  const outcomes: string[] = [];
  for (const c of CASES) {
    const runs: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      runs.push(...(await Promise.all(Array.from({ length: PARALLEL }, () => call(c.name)))));
    }
    const bound =
      c.timeoutMs +
      HARD_DEADLINE_MARGIN_MS +
      START_ALLOWANCE_MS +
      HOST_LATENCY_MS +
      (c.name === 'reader' ? READS_LIMIT_MS : 0) +
      (c.name === 'copied' ? 2 * COPY_LIMIT_MS : 0);
    const hook = runs.map((r) => r.hookMs).sort((a, b) => a - b);
    const request = runs.map((r) => r.requestMs).sort((a, b) => a - b);
    const within = hook.filter((ms) => ms <= bound).length;
    const failed = runs.filter((r) => r.errorCode !== undefined).length;
    rows.push(
      `| ${c.label} | ${c.timeoutMs.toLocaleString('en-US')} | ${bound.toLocaleString('en-US')} | ${fmt(hook[0])} | ${fmt(median(hook))} | ${fmt(hook.at(-1))} | ${fmt(request.at(-1))} | ${within} of ${runs.length} | ${failed} |`,
    );
    const messages = new Map<string, number>();
    for (const r of runs) {
      const key = r.errorCode === undefined ? 'answered' : `${r.errorCode}: ${r.message ?? ''}`;
      messages.set(key, (messages.get(key) ?? 0) + 1);
    }
    outcomes.push(`- ${c.label}: ${[...messages].map(([m, n]) => `${n} × ${m}`).join('; ')}`);
    process.stdout.write(`${rows.at(-1)}\n`);
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  await server.close();
  rmSync(configFile, { force: true });

  const report = [
    '## Hook limits under contention',
    '',
    `Measured by \`npm run bench -- hook-limits\` on this ${os.cpus().length}-core machine (load average at the end:`,
    `${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')}; other work may be running): a local server from source, as \`npm start\` runs, which keeps`,
    `eight sandbox workers warm from its start; then ${ROUNDS} rounds of ${PARALLEL} hooked requests at once`,
    'per function (a `before` hook), one function after another. "hook" is the run as the request log reports it',
    '(`hookDurationMs`: from the moment the run is asked for, the wait for a worker and the reads included);',
    '"bound" is the documented one, `timeoutMs` + 600 ms (100 ms past the limit on the worker, 400 ms a run may',
    "wait for a worker to start, 100 ms for the host's own timer on a busy machine), plus, for the reader, the",
    `5,000 ms its reads may take together, and for the 1 MB \`paramMap\` the ${COPY_LIMIT_MS.toLocaleString('en-US')} ms each of its two copies may`,
    "take (the copies are not the function's time: its 200 ms are its own code's). A run stopped by the host (the",
    'built-in runaway, reads past their limit) has its worker terminated and replaced at once: the next round finds',
    'eight workers starting, and a',
    'run that waits past its allowance spends that wait from its own time. "request max" is the whole request,',
    'the get-list or get-one it ran included.',
    '',
    '| function | timeoutMs | bound (ms) | hook min (ms) | hook median (ms) | hook max (ms) | request max (ms) | within the bound | failed (3001) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    'Outcomes:',
    '',
    ...outcomes,
    '',
    `Requests sent again after their connection failed before an answer (a reused idle connection the server had closed): ${resent}.`,
    '',
    `Total benchmark time: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  ].join('\n');
  writeSection('hook-limits', report);
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)];
const fmt = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? '–' : ms.toFixed(0));
