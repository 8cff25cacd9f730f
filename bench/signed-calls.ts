/**
 * Signed calls to a local server as a partner's client makes them, for benchmarks that measure what one request
 * costs: each answer carries the read units its request log line reports and the milliseconds it took.
 */
import type { LocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';

export interface BenchApp {
  appCode: string;
  accessKey: string;
  secret: string;
}

/** One signed POST to a server at `url` (an operation's path under it), answering the envelope as JSON. */
export async function signedPost(
  url: string,
  app: BenchApp,
  datasetCode: string,
  route: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const timeStamp = String(Date.now());
  const token = signRequest({ accessKey: app.accessKey, appCode: app.appCode, datasetCode, timeStamp }, app.secret);
  const response = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': app.appCode,
      'X-Dataset-Code': datasetCode,
      'X-Token': token,
    },
    body: JSON.stringify({ appCode: app.appCode, datasetCode, ...body }),
  });
  return (await response.json()) as Record<string, unknown>;
}

/**
 * A bench's application in its configuration: signing as `app`, a quota no bench reaches, and read and create on
 * its datasets.
 */
export function benchApplication(app: BenchApp, name: string, datasetCodes: readonly string[] = ['orders']) {
  return {
    appCode: app.appCode,
    name,
    accessKey: app.accessKey,
    signingSecret: app.secret,
    quota: { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 100 },
    grants: datasetCodes.map((datasetCode) => ({ datasetCode, operations: ['read', 'create'] })),
  };
}

export interface Answer {
  errorCode?: number;
  errorMsg?: string;
  data?: unknown;
  retryAfter?: number;
  readUnits: number;
  ms: number;
}

/** Collects the request log lines of a local server (its `logSink`), the newest 2,500 at least. */
export function requestLines(): { lines: Record<string, unknown>[]; sink: (line: string) => void } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    sink: (line: string) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.requestId) lines.push(parsed);
      if (lines.length > 5000) lines.splice(0, 2500);
    },
  };
}

export function signedCaller(app: BenchApp, server: () => LocalServer, lines: Record<string, unknown>[]) {
  return async (
    datasetCode: string,
    route: string,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const timeStamp = String(Date.now());
    const token = signRequest({ accessKey: app.accessKey, appCode: app.appCode, datasetCode, timeStamp }, app.secret);
    const started = performance.now();
    const response = await fetch(`${server().url}${route}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': app.appCode,
        'X-Dataset-Code': datasetCode,
        'X-Token': token,
        ...headers,
      },
      body: JSON.stringify({ appCode: app.appCode, datasetCode, ...body }),
    });
    const envelope = (await response.json()) as { errorCode?: number; errorMsg?: string; data?: unknown };
    const ms = performance.now() - started;
    const line = lines.find((l) => l.requestId === response.headers.get('x-request-id'));
    const retryAfter = response.headers.get('retry-after');
    return {
      ...(envelope.errorCode === undefined
        ? { data: envelope.data }
        : { errorCode: envelope.errorCode, errorMsg: envelope.errorMsg }),
      ...(retryAfter === null ? {} : { retryAfter: Number(retryAfter) }),
      readUnits: Number(line?.readUnits ?? Number.NaN),
      ms,
    };
  };
}

/**
 * A batch stopped by the request time limit (2001: a store slowed by other work) is sent again with its
 * Idempotency-Key, which completes it and writes no record twice; while the stopped attempt still runs that answers
 * 4001, and it is sent again a second later.
 */
export async function loadBatch(send: () => Promise<Answer>): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send();
    if ((answer.errorCode !== 2001 && answer.errorCode !== 4001) || attempt === 120) return answer;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * Loads `size` records through batch-create as a bulk load does: batches of 1,000, 4 at a time, each with its own
 * Idempotency-Key (`<keyPrefix>-<first record>`) so that a batch sent again writes nothing twice.
 */
export async function loadThroughBatchCreate(
  size: number,
  record: (i: number) => Record<string, unknown>,
  send: (paramList: Record<string, unknown>[], idempotencyKey: string) => Promise<Answer>,
  keyPrefix: string,
): Promise<void> {
  for (let held = 0; held < size; ) {
    const batches: Promise<Answer>[] = [];
    for (let b = 0; b < 4 && held < size; b++) {
      const from = held;
      const count = Math.min(1000, size - held);
      held += count;
      const paramList = Array.from({ length: count }, (_, k) => record(from + k));
      batches.push(loadBatch(() => send(paramList, `${keyPrefix}-${from}`)));
    }
    for (const answer of await Promise.all(batches)) {
      if (answer.errorCode) throw new Error(`batch-create failed: ${answer.errorCode} ${answer.errorMsg ?? ''}`);
    }
  }
}
