/**
 * `npm run bench -- capacity`: the DynamoDB capacity each operation consumes, as its request log line reports
 * it (docs/interface.md §11), through the real local service with the demo configuration. These are product figures:
 * what a partner pays per request.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type LocalServer, startLocalServer } from '../bin/local-server';
import { signRequest } from '../packages/client/src/signature';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { environment } from '../shared/runtime/environment';
import { RECORDS_TABLE, RecordAttr } from '../shared/storage/table-definitions';
import { indexWriteUnits } from './index-writes';
import { writeSection } from './report';

const APP = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', secret: 'sk-demo-secret' };

interface Measured {
  label: string;
  readUnits: number;
  writeUnits: number;
  /** Index (GSI) write units, computed from the record before and after (dynalite does not report them). */
  indexWriteUnits: number;
  errorCode?: number;
}

type Item = Record<string, unknown>;

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
  const env = environment();
  const doc = createDocumentClient(
    new DynamoDBClient({
      endpoint: env.dynamodbEndpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  const readRecord = async (datasetCode: string, id: unknown): Promise<Item | undefined> => {
    if (typeof id !== 'string') return undefined;
    const result = await doc.send(
      new GetCommand({
        TableName: env.recordsTable,
        Key: { [RecordAttr.partitionKey]: `ds#${datasetCode}`, [RecordAttr.sortKey]: id },
        ConsistentRead: true,
      }),
    );
    return result.Item;
  };
  const results: Measured[] = [];
  /**
   * Measure one request. `written` names the record the request writes (dataset and id), read before and
   * after, to compute the index writes; the id of a created record comes from the answer.
   */
  const measure = async <T>(
    label: string,
    action: () => Promise<T>,
    written?: { datasetCode: string; id?: unknown },
  ): Promise<T> => {
    const before = lines.length;
    const old = written?.id === undefined ? undefined : await readRecord(written.datasetCode, written.id);
    const value = await action();
    // The request's own log line (a hook's lines may come after it).
    const line =
      lines
        .slice(before)
        .filter((logged) => logged.readUnits !== undefined)
        .at(-1) ?? {};
    const createdId = (value as { data?: { id?: unknown } } | undefined)?.data?.id;
    const next = written ? await readRecord(written.datasetCode, written.id ?? createdId) : undefined;
    results.push({
      label,
      readUnits: Number(line.readUnits),
      writeUnits: Number(line.writeUnits),
      indexWriteUnits: written && !line.errorCode ? indexWriteUnits(RECORDS_TABLE, old, next) : 0,
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
    const createdOrder = await measure(
      'create (orders: 4 indexed fields)',
      () => call('/openapi/data/create', { paramMap: order }, 'orders'),
      { datasetCode: 'orders' },
    );
    await measure(
      'create (products: 2 indexed fields)',
      () => call('/openapi/data/create', { paramMap: { sku: 'SKU-1', name: 'Widget', price: 9.5 } }, 'products'),
      { datasetCode: 'products' },
    );
    await measure('get-one', () => call('/openapi/data/get-one', { paramMap: { id: createdOrder.data.id } }, 'orders'));
    await measure(
      'update (one indexed field)',
      () => call('/openapi/data/update', { paramMap: { id: createdOrder.data.id, status: 'paid' } }, 'orders'),
      { datasetCode: 'orders', id: createdOrder.data.id },
    );
    await measure(
      'update (one field no index holds)',
      () =>
        call(
          '/openapi/data/update',
          { paramMap: { id: createdOrder.data.id, shipping: { carrier: 'UPS' } } },
          'orders',
        ),
      { datasetCode: 'orders', id: createdOrder.data.id },
    );
    await measure('update of a missing id (2002)', () =>
      call('/openapi/data/update', { paramMap: { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', status: 'paid' } }, 'orders'),
    );
    await measure('get-list, first page of 20 (of 50 records; the first count of a dataset)', () =>
      call('/openapi/data/get-list', { paramMap: {} }, 'customers'),
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
    await call(
      '/openapi/data/create',
      { paramMap: { name: 'Customer late', tier: 'gold', country: 'DE' } },
      'customers',
    );
    await measure('execute-sql, warm, after one create (catches up by the change)', () =>
      call('/api/custom/executeSql', sql),
    );
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
    doc.destroy();
    await server.close();
  }
  const section = [
    '## Capacity per operation',
    '',
    'Measured by `npm run bench -- capacity` through the local service with the demo configuration (records of a',
    'few hundred bytes). Read and write units come from the request log (`readUnits`, `writeUnits`), the quota',
    "included: a request's environment writes the quota item only when its slot lease or its block of tokens needs",
    'it (docs/limits.md), so one request in a row of them may carry a write the others do not.',
    '**Index writes are computed, not measured**: the local store maintains the indexes but leaves their writes',
    'out of the consumed capacity it reports, while DynamoDB bills each index entry put or deleted (⌈size/1 KB⌉',
    'units). The benchmark reads the written record before and after the request and applies those rules with the',
    "table's index definitions (`bench/index-writes.ts`).",
    '',
    '| request | read units | write units (reported) | index writes (computed) | write units in all |',
    '|---|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.label} | ${r.readUnits} | ${r.writeUnits} | ${r.indexWriteUnits} | ${r.writeUnits + r.indexWriteUnits} |`,
    ),
  ].join('\n');
  console.log(section);
  writeSection('capacity', section);
}
