/**
 * Secrets Manager out of reach (mocked at the SDK client, the only AWS service here without a local twin): a
 * container that never read the keys answers 3001 saying requests cannot be verified right now, at once
 * during the back-off, and verifies again as soon as the store answers. A warm container keeps verifying with
 * the keys it has (see bounds.test.ts beside this file).
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { signRequest } from '../../../../../packages/client/src/signature';
import { SecretsManagerKeyStore } from '../../../../../shared/auth/secrets-manager-key-store';
import { createDocumentClient } from '../../../../../shared/aws/dynamodb';
import { StaticCatalogProvider } from '../../../../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../../../../shared/catalog/schema';
import { createHandler } from '../../../../../shared/composition/pipeline';
import { setLogSink } from '../../../../../shared/observability/request-log';
import { getOneOperation } from '../../../../../shared/operations/get-one';
import { DatasetBookkeeping } from '../../../../../shared/storage/dataset-bookkeeping';
import { IdempotencyStore } from '../../../../../shared/storage/idempotency-store';
import { IndexBuildStore } from '../../../../../shared/storage/index-build-store';
import { ListReader } from '../../../../../shared/storage/list-reader';
import { QuotaStore } from '../../../../../shared/storage/quota-store';
import { RecordBatchStore } from '../../../../../shared/storage/record-batch-store';
import { RecordStore } from '../../../../../shared/storage/record-store';

const config: CatalogConfig = {
  applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read'] }] }],
  datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
};

const secrets = mockClient(SecretsManagerClient);
const dynamo = mockClient(DynamoDBDocumentClient);
/** The quota store's low-level client (it writes its few values out itself). */
const quotaClient = new DynamoDBClient({ region: 'eu-west-1' });
const quota = mockClient(quotaClient);
const lines: Record<string, unknown>[] = [];
let restoreSink: (line: string) => void;
let clock = Date.now();

beforeAll(() => {
  restoreSink = setLogSink((line) => lines.push(JSON.parse(line)));
});
afterAll(() => {
  setLogSink(restoreSink);
  secrets.restore();
  dynamo.restore();
  quota.restore();
});

const keys = new SecretsManagerKeyStore({
  client: new SecretsManagerClient({ region: 'eu-west-1' }),
  secretPrefix: 'das/prod',
  defaultSecretId: 'das/prod/default-signing-secret',
  callTimeoutMs: 100,
  now: () => clock,
});
const documentClient = createDocumentClient(new DynamoDBClient({ region: 'eu-west-1' }));
const handler = createHandler(getOneOperation, {
  now: () => clock,
  ports: () => ({
    catalog: new StaticCatalogProvider(config),
    keys,
    records: new RecordStore(documentClient, 'records-table'),
    lists: new ListReader(documentClient, 'records-table'),
    bookkeeping: new DatasetBookkeeping(documentClient, 'records-table'),
    recordBatches: new RecordBatchStore(documentClient, 'records-table'),
    idempotency: new IdempotencyStore(documentClient, 'records-table'),
    indexBuilds: new IndexBuildStore(documentClient, { records: 'records-table', catalog: 'catalog-table' }),
    quota: new QuotaStore(quotaClient, 'quota-table'),
    metricNamespace: 'Test',
    responseHeaders: {},
  }),
});

function signedEvent(requestId: string): APIGatewayProxyEvent {
  const timeStamp = String(clock);
  const token = signRequest({ accessKey: 'ak-a-00000001', appCode: 'app-a', datasetCode: 'orders', timeStamp }, 'sk-a');
  return {
    body: JSON.stringify({ appCode: 'app-a', datasetCode: 'orders', paramMap: { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' } }),
    headers: { 'X-Time-Stamp': timeStamp, 'X-App-Code': 'app-a', 'X-Dataset-Code': 'orders', 'X-Token': token },
    isBase64Encoded: false,
    requestContext: { requestId },
  } as unknown as APIGatewayProxyEvent;
}

const context = { awsRequestId: 'lambda-request', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

it('answers 3001 saying requests cannot be verified right now, and logs the cause', async () => {
  secrets.on(GetSecretValueCommand).callsFake(() => new Promise(() => undefined));
  const result = await handler(signedEvent('req-cold-1'), context);
  expect(result.statusCode).toBe(500);
  expect(JSON.parse(result.body)).toEqual({
    success: false,
    msg: null,
    data: null,
    errorCode: 3001,
    errorMsg:
      'the service cannot verify requests right now: its key store is out of reach; retry in a few seconds; quote request id req-cold-1 if it persists',
  });
  expect(lines.at(-1)).toMatchObject({ requestId: 'req-cold-1', errorCode: 3001, level: 'ERROR' });
});

it('answers the next request at once during the back-off, without calling the store again', async () => {
  const calls = secrets.commandCalls(GetSecretValueCommand).length;
  clock += 500;
  const result = await handler(signedEvent('req-cold-2'), context);
  expect(JSON.parse(result.body)).toMatchObject({ errorCode: 3001 });
  expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(calls);
});

it('verifies again once the store answers, after the back-off', async () => {
  secrets.reset();
  secrets.on(GetSecretValueCommand, { SecretId: 'das/prod/apps/app-a' }).resolves({
    SecretString: '{"accessKey":"ak-a-00000001","signingSecret":"sk-a"}',
  });
  quota.on(UpdateItemCommand).resolves({ Attributes: { leases: { M: {} } }, ConsumedCapacity: { CapacityUnits: 1 } });
  dynamo.on(GetCommand).resolves({ Item: undefined, ConsumedCapacity: { CapacityUnits: 1 } });
  clock += 2_000;
  const result = await handler(signedEvent('req-back'), context);
  expect(JSON.parse(result.body)).toMatchObject({ errorCode: 2002 });
});
