/**
 * The local server against a DynamoDB endpoint it did not start (`npm start -- --dynamodb-endpoint URL`): here a
 * second dynalite on its own port stands in for moto, DynamoDB Local or any other endpoint. The server creates
 * its tables there, under the region given, and every record goes there.
 */
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { type LocalServer, runServe, startLocalServer } from '../../../../bin/local-server';
import { signRequest } from '../../../../packages/client/src/signature';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { datasetPartitionKey } from '../../../../shared/storage/item-keys';
import { FIXTURE_CONFIG, MAIN_APP } from '../../../support/service-harness';

let external: EmbeddedDynamo;
let server: LocalServer;
const savedRegion = process.env.AWS_REGION;

beforeAll(async () => {
  external = await startEmbeddedDynamo();
  server = await startLocalServer({
    configFile: FIXTURE_CONFIG,
    port: 0,
    logSink: () => undefined,
    dynamodb: { endpoint: external.endpoint, region: 'eu-west-1', credentialsConfigured: false },
    tablePrefix: 'elsewhere',
  });
});

afterAll(async () => {
  await server.close();
  await external.close();
  if (savedRegion === undefined) delete process.env.AWS_REGION;
  else process.env.AWS_REGION = savedRegion;
});

async function create(title: string): Promise<{ status: number; body: { success: boolean; data: { id: string } } }> {
  const timeStamp = String(Date.now());
  const token = signRequest(
    { accessKey: MAIN_APP.accessKey, appCode: MAIN_APP.appCode, datasetCode: 'notes', timeStamp },
    MAIN_APP.secret,
  );
  const response = await fetch(`${server.url}/openapi/data/create`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': MAIN_APP.appCode,
      'X-Dataset-Code': 'notes',
      'X-Token': token,
    },
    body: JSON.stringify({ appCode: MAIN_APP.appCode, datasetCode: 'notes', paramMap: { title } }),
  });
  return { status: response.status, body: (await response.json()) as { success: boolean; data: { id: string } } };
}

describe('a DynamoDB endpoint given to the local server', () => {
  it('holds the service tables, named with the prefix given', async () => {
    const tables = await external.client.send(new ListTablesCommand({}));
    expect(tables.TableNames).toEqual([
      'elsewhere-catalog',
      'elsewhere-events',
      'elsewhere-quota',
      'elsewhere-records',
    ]);
  });

  it('receives the records the service writes, and signs for the region given', async () => {
    const created = await create('stored elsewhere');
    expect(created.status).toBe(200);
    expect(process.env.AWS_REGION).toBe('eu-west-1');
    const item = await createDocumentClient(external.client).send(
      new GetCommand({
        TableName: 'elsewhere-records',
        Key: { '@pk': datasetPartitionKey('notes'), '@sk': created.body.data.id },
      }),
    );
    expect(item.Item?.title).toBe('stored elsewhere');
  });
});

describe('npm start -- --dynamodb-endpoint', () => {
  it('refuses a value that is not an http(s) URL, saying what it expects', async () => {
    await expect(runServe(['--dynamodb-endpoint', 'localhost:8000'])).rejects.toThrow(
      '--dynamodb-endpoint must be an http(s) URL, not localhost:8000',
    );
  });
});
