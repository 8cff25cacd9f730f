/**
 * The envelope's last line of defence: an unexpected failure (here DynamoDB failing, mocked at the SDK client)
 * becomes 3001 with the request id, logged with its cause, and nothing internal reaches the caller.
 */
import { DynamoDBClient, InternalServerError, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { signRequest } from '../../../../packages/client/src/signature';
import { FileKeyStore } from '../../../../shared/auth/file-key-store';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { StaticCatalogProvider } from '../../../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { createHandler } from '../../../../shared/composition/pipeline';
import { setLogSink } from '../../../../shared/observability/request-log';
import { getOneOperation } from '../../../../shared/operations/get-one';
import { DatasetBookkeeping } from '../../../../shared/storage/dataset-bookkeeping';
import { IdempotencyStore } from '../../../../shared/storage/idempotency-store';
import { IndexBuildStore } from '../../../../shared/storage/index-build-store';
import { ListReader } from '../../../../shared/storage/list-reader';
import { QuotaStore } from '../../../../shared/storage/quota-store';
import { RecordBatchStore } from '../../../../shared/storage/record-batch-store';
import { RecordStore } from '../../../../shared/storage/record-store';
import { failureWith } from '../../../support/failure-envelope';

const config: CatalogConfig = {
  applications: [
    {
      appCode: 'app-a',
      accessKey: 'ak-a-00000001',
      signingSecret: 'sk-a-secret',
      grants: [{ datasetCode: 'orders', operations: ['read'] }],
    },
  ],
  datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
};

const dynamo = mockClient(DynamoDBDocumentClient);
/** The quota store's low-level client (it writes its few values out itself). */
const quotaClient = new DynamoDBClient({ region: 'eu-west-1' });
const quota = mockClient(quotaClient);
const lines: Record<string, unknown>[] = [];
let restoreSink: (line: string) => void;

beforeAll(() => {
  restoreSink = setLogSink((line) => lines.push(JSON.parse(line)));
});
afterAll(() => {
  setLogSink(restoreSink);
  dynamo.restore();
  quota.restore();
});

const prodClient = createDocumentClient(new DynamoDBClient({ region: 'eu-west-1' }));

const handler = createHandler(getOneOperation, {
  ports: () => ({
    catalog: new StaticCatalogProvider(config),
    keys: new FileKeyStore(config),
    records: new RecordStore(prodClient, 'records-table-prod'),
    lists: new ListReader(prodClient, 'records-table-prod'),
    bookkeeping: new DatasetBookkeeping(prodClient, 'records-table-prod'),
    recordBatches: new RecordBatchStore(prodClient, 'records-table-prod'),
    idempotency: new IdempotencyStore(prodClient, 'records-table-prod'),
    indexBuilds: new IndexBuildStore(prodClient, { records: 'records-table-prod', catalog: 'catalog-table' }),
    quota: new QuotaStore(quotaClient, 'quota-table-prod'),
    metricNamespace: 'Test',
    responseHeaders: {},
  }),
});

function signedEvent(): APIGatewayProxyEvent {
  const timeStamp = String(Date.now());
  const token = signRequest(
    { accessKey: 'ak-a-00000001', appCode: 'app-a', datasetCode: 'orders', timeStamp },
    'sk-a-secret',
  );
  return {
    body: JSON.stringify({ appCode: 'app-a', datasetCode: 'orders', paramMap: { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' } }),
    headers: { 'X-Time-Stamp': timeStamp, 'X-App-Code': 'app-a', 'X-Dataset-Code': 'orders', 'X-Token': token },
    isBase64Encoded: false,
    requestContext: { requestId: 'req-3001-test' },
  } as unknown as APIGatewayProxyEvent;
}

const context = {
  awsRequestId: 'lambda-request',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

/** The quota's admission (a conditional UpdateItem) succeeds: the failure under test is the record read's. */
function admitEveryRequest(): void {
  quota.on(UpdateItemCommand).resolves({ Attributes: { leases: { M: {} } }, ConsumedCapacity: { CapacityUnits: 1 } });
}

it('answers 3001 with the request id and no internals when DynamoDB fails', async () => {
  admitEveryRequest();
  dynamo
    .on(GetCommand)
    .rejects(new InternalServerError({ message: 'Internal error in table records-table-prod', $metadata: {} }));
  const result = await handler(signedEvent(), context);
  expect(result.statusCode).toBe(500);
  expect(JSON.parse(result.body)).toEqual(
    failureWith(3001, 'internal error; quote request id req-3001-test when reporting it'),
  );
  expect(result.body).not.toContain('records-table-prod');
  expect(result.headers?.['X-Request-Id']).toBe('req-3001-test');
  const line = lines.at(-1);
  expect(line).toMatchObject({
    requestId: 'req-3001-test',
    operation: 'get-one',
    errorCode: 3001,
    level: 'ERROR',
    errorName: 'InternalServerError',
    errorMessage: 'Internal error in table records-table-prod',
  });
});

it('answers a well-formed request normally once DynamoDB answers', async () => {
  dynamo.reset();
  admitEveryRequest();
  dynamo.on(GetCommand).resolves({ Item: undefined, ConsumedCapacity: { CapacityUnits: 1 } });
  const result = await handler(signedEvent(), context);
  expect(result.statusCode).toBe(404);
  expect(JSON.parse(result.body).errorCode).toBe(2002);
  expect(lines.at(-1)).toMatchObject({ requestId: 'req-3001-test', errorCode: 2002, readUnits: 1 });
});
