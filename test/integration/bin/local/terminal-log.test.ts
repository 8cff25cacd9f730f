/**
 * The local server's log on a terminal: one short readable line per request — method, path, HTTP status (with
 * the error code of a failure), milliseconds, read and write units — instead of the deployment's JSON lines.
 */
import { formatBackgroundLine, formatRequestLine } from '../../../../bin/local/terminal-log';
import { startLocalServer } from '../../../../bin/local-server';
import { signRequest } from '../../../../packages/client/src/signature';
import { FIXTURE_CONFIG, MAIN_APP } from '../../../support/service-harness';

it('formats a request as one line', () => {
  expect(
    formatRequestLine(
      { method: 'POST', path: '/openapi/data/get-list', status: 200, durationMs: 14, requestId: 'r' },
      { readUnits: 5.5, writeUnits: 2 },
    ),
  ).toBe('POST /openapi/data/get-list 200 14 ms · 5.5 RU · 2 WU');
  expect(
    formatRequestLine(
      { method: 'POST', path: '/openapi/data/get-one', status: 404, durationMs: 3, requestId: 'r' },
      { errorCode: 2002, readUnits: 1, writeUnits: 2 },
    ),
  ).toBe('POST /openapi/data/get-one 404 (2002) 3 ms · 1 RU · 2 WU');
  expect(formatRequestLine({ method: 'GET', path: '/health', status: 200, durationMs: 0 }, undefined)).toBe(
    'GET /health 200 0 ms',
  );
});

it('writes one such line per request, and no JSON', async () => {
  const lines: string[] = [];
  const server = await startLocalServer({ configFile: FIXTURE_CONFIG, port: 0, textLog: (line) => lines.push(line) });
  try {
    const timeStamp = String(Date.now());
    const headers = {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': MAIN_APP.appCode,
      'X-Dataset-Code': 'notes',
      'X-Token': signRequest({ ...MAIN_APP, datasetCode: 'notes', timeStamp }, MAIN_APP.secret),
    };
    const body = (paramMap: object) => JSON.stringify({ appCode: MAIN_APP.appCode, datasetCode: 'notes', paramMap });
    const list = await fetch(`${server.url}/openapi/data/get-list`, { method: 'POST', headers, body: body({}) });
    const missing = await fetch(`${server.url}/openapi/data/get-one`, {
      method: 'POST',
      headers,
      body: body({ id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8' }),
    });
    const health = await fetch(`${server.url}/health`);
    expect([list.status, missing.status, health.status]).toEqual([200, 404, 200]);
    await Promise.all([list.text(), missing.text(), health.text()]);
  } finally {
    await server.close();
  }
  expect(lines).toEqual([
    // The units are what the request consumed (docs/performance.md has the figures); here, that they are shown.
    expect.stringMatching(/^POST \/openapi\/data\/get-list 200 \d+ ms · \d+(\.\d+)? RU · \d+(\.\d+)? WU$/),
    expect.stringMatching(/^POST \/openapi\/data\/get-one 404 \(2002\) \d+ ms · \d+(\.\d+)? RU · \d+(\.\d+)? WU$/),
    expect.stringMatching(/^GET \/health 200 \d+ ms$/),
  ]);
});

it('gives work beside the requests a short line when it did something, and none when it did nothing', () => {
  const line = (record: Record<string, unknown>) => formatBackgroundLine(record, JSON.stringify(record));
  expect(line({ level: 'INFO', operation: 'change-log', records: 1, changeEventsLogged: 0 })).toBeUndefined();
  expect(line({ level: 'INFO', operation: 'change-log', records: 3, changeEventsLogged: 2 })).toBe(
    'change log · 2 events logged',
  );
  expect(
    line({
      level: 'ERROR',
      operation: 'change-log',
      changeEventsLogged: 0,
      changeBatchFailures: 1,
      error: 'throttled',
    }),
  ).toBe('change log · 0 events logged · 1 failed — throttled');
  expect(line({ level: 'INFO', operation: 'webhook-delivery', outcome: 'waiting', eventId: 'e1' })).toBeUndefined();
  expect(
    line({
      level: 'INFO',
      operation: 'webhook-delivery',
      subscription: 'crm',
      outcome: 'delivered',
      eventId: 'e1',
      status: 204,
      attempt: 1,
    }),
  ).toBe('webhook crm delivered e1 · HTTP 204 · attempt 1');
  expect(
    line({
      level: 'WARN',
      operation: 'webhook-delivery',
      subscription: 'crm',
      outcome: 'failed',
      eventId: 'e1',
      status: 500,
      attempt: 2,
      reason: 'HTTP 500',
    }),
  ).toBe('webhook crm failed e1 · HTTP 500 · attempt 2 — HTTP 500');
  expect(line({ level: 'INFO', operation: 'index-job', step: 'next', indexBuildRecords: 0 })).toBeUndefined();
  expect(
    line({ level: 'INFO', operation: 'index-job', step: 'segment', datasetCode: 'orders', indexBuildRecords: 250 }),
  ).toBe('index job orders segment · 250 records');
  expect(line({ level: 'INFO', operation: 'value-fold', datasetCode: 'orders', valueFoldRecords: 0 })).toBeUndefined();
  expect(line({ level: 'INFO', operation: 'value-fold', datasetCode: 'orders', valueFoldRecords: 4000 })).toBe(
    'totals orders · 4000 records folded',
  );
  expect(
    line({
      level: 'ERROR',
      operation: 'value-fold',
      datasetCode: 'orders',
      valueFoldRecords: 0,
      error: 'Error: count page of orders 1 changed under its fold',
    }),
  ).toBe('totals orders · 0 records folded — Error: count page of orders 1 changed under its fold');
  expect(line({ level: 'INFO', operation: 'something-else' })).toBe('{"level":"INFO","operation":"something-else"}');
});
