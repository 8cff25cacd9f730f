/**
 * `npm run bench -- capacity`: the DynamoDB capacity each operation consumes, as its request log line reports
 * it (docs/interface.md §11), through the real local service with the demo configuration. These are product figures:
 * what a partner pays per request.
 */

import { type LocalServer, startLocalServer } from '../bin/local-server';
import { signRequest } from '../shared/auth/signature';

const APP = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', secret: 'sk-demo-secret' };

interface Measured {
  label: string;
  readUnits: number;
  writeUnits: number;
  errorCode?: number;
}

export async function run(): Promise<void> {
  const lines: Record<string, unknown>[] = [];
  const server: LocalServer = await startLocalServer({ port: 0, logSink: (line) => lines.push(JSON.parse(line)) });
  const call = async (path: string, body: Record<string, unknown>, datasetCode?: string) => {
    const timeStamp = String(Date.now());
    const token = signRequest({ accessKey: APP.accessKey, appCode: APP.appCode, datasetCode, timeStamp }, APP.secret);
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Time-Stamp': timeStamp,
        'X-App-Code': APP.appCode,
        'X-Token': token,
        ...(datasetCode ? { 'X-Dataset-Code': datasetCode } : {}),
      },
      body: JSON.stringify({ appCode: APP.appCode, ...(datasetCode ? { datasetCode } : {}), ...body }),
    });
    return (await response.json()) as { data: Record<string, unknown> };
  };
  const results: Measured[] = [];
  const measure = async <T>(label: string, action: () => Promise<T>): Promise<T> => {
    const before = lines.length;
    const value = await action();
    const line = lines.slice(before).at(-1) ?? {};
    results.push({
      label,
      readUnits: Number(line.readUnits),
      writeUnits: Number(line.writeUnits),
      ...(line.errorCode ? { errorCode: Number(line.errorCode) } : {}),
    });
    return value;
  };
  try {
    // Some records to read, of the demo's kind (a few hundred bytes each).
    const customers: string[] = [];
    for (let k = 0; k < 50; k += 1) {
      const created = await call(
        '/openapi/data/create',
        { paramMap: { name: `Customer ${k}`, tier: 'gold', country: k % 2 ? 'DE' : 'FR' } },
        'customers',
      );
      customers.push(created.data.id as string);
    }
    const order = {
      customer_id: customers[0],
      amount: 120.5,
      status: 'new',
      region: 'EU',
      placed_at: '2026-01-15 10:00:00',
      shipping: { carrier: 'DHL' },
    };
    const createdOrder = await measure('create (a dataset read by custom SQL: + version bump)', () =>
      call('/openapi/data/create', { paramMap: order }, 'orders'),
    );
    await measure('create (a dataset no query reads)', () =>
      call('/openapi/data/create', { paramMap: { sku: 'SKU-1', name: 'Widget', price: 9.5 } }, 'products'),
    );
    await measure('get-one', () => call('/openapi/data/get-one', { paramMap: { id: createdOrder.data.id } }, 'orders'));
    await measure('update (one field)', () =>
      call('/openapi/data/update', { paramMap: { id: createdOrder.data.id, status: 'paid' } }, 'orders'),
    );
    await measure('update of a missing id (2002)', () =>
      call('/openapi/data/update', { paramMap: { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', status: 'paid' } }, 'orders'),
    );
    await measure('get-list, first page of 20 (of 50 records)', () =>
      call('/openapi/data/get-list', { paramMap: {} }, 'customers'),
    );
    await measure('get-list, indexed equality (country)', () =>
      call('/openapi/data/get-list', { paramMap: { country: 'DE', pageSize: 10 } }, 'customers'),
    );
    const sql = { sqlCode: 'top-customers', params: { limit: 5 } };
    await measure('execute-sql, cold (loads 2 datasets)', () => call('/api/custom/executeSql', sql));
    await measure('execute-sql, warm (cached datasets)', () => call('/api/custom/executeSql', sql));
    await measure('refused before the quota (1002, wrong signature)', async () => {
      const response = await fetch(`${server.url}/openapi/data/get-list`, {
        method: 'POST',
        headers: {
          'X-Time-Stamp': String(Date.now()),
          'X-App-Code': APP.appCode,
          'X-Dataset-Code': 'orders',
          'X-Token': 'AAAA',
        },
        body: JSON.stringify({ appCode: APP.appCode, datasetCode: 'orders' }),
      });
      return response.json();
    });
  } finally {
    await server.close();
  }
  process.stdout.write(
    'Capacity per request, from the request log (read units / write units; every authenticated request includes\n' +
      'the quota: one write to admit it and one to release its in-flight slot).\n\n' +
      '| request | read units | write units |\n|---|---:|---:|\n' +
      results.map((r) => `| ${r.label} | ${r.readUnits} | ${r.writeUnits} |`).join('\n') +
      '\n',
  );
}
