/**
 * X-Ray: each AWS call of a traced client becomes a subsegment of the invocation's trace. Here a real DynamoDB
 * call (embedded store) inside a segment, as the Lambda runtime provides one; Secrets Manager gets the same
 * instrumentation (checked on its middleware stack: it has no local twin to call).
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { getNamespace, Segment, setSegment } from 'aws-xray-sdk-core';
import {
  type EmbeddedDynamo,
  ensureTables,
  localTableNames,
  startEmbeddedDynamo,
} from '../../../../bin/local/embedded-dynamo';
import { traced, XRAY_MIDDLEWARE_NAME } from '../../../../shared/aws/tracing';
import { readEnvironment } from '../../../../shared/runtime/environment';

let dynamo: EmbeddedDynamo;
const names = localTableNames('traced');

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  await ensureTables(dynamo.client, names);
});
afterAll(() => dynamo.close());

const middlewareNames = (client: { middlewareStack: { identify(): string[] } }) =>
  client.middlewareStack.identify().map((entry) => entry.split(' - ')[0]);

describe('traced AWS clients', () => {
  it('record each DynamoDB call as a subsegment named after the service, with its operation', async () => {
    const client = traced(dynamo.client, true);
    const segment = new Segment('get-list');
    await getNamespace().runPromise(async () => {
      setSegment(segment);
      await client.send(new DescribeTableCommand({ TableName: names.Records }));
    });
    const subsegments = (segment.subsegments ?? []).map((s) => ({
      name: s.name,
      operation: (s as unknown as { aws?: { operation?: string } }).aws?.operation,
    }));
    expect(subsegments).toEqual([{ name: 'DynamoDB', operation: 'DescribeTable' }]);
  });

  it('instrument the Secrets Manager client the same way, and neither client when tracing is off', () => {
    expect(middlewareNames(traced(new SecretsManagerClient({ region: 'eu-west-1' }), true))).toContain(
      XRAY_MIDDLEWARE_NAME,
    );
    expect(middlewareNames(traced(new SecretsManagerClient({ region: 'eu-west-1' }), false))).not.toContain(
      XRAY_MIDDLEWARE_NAME,
    );
  });

  it('are traced only in a Lambda function with active tracing', () => {
    const base = { RECORDS_TABLE: 'r', CATALOG_TABLE: 'c', QUOTA_TABLE: 'q', KEY_STORE: 'file', KEY_FILE: 'f' };
    expect(readEnvironment(base).tracing).toBe(false);
    expect(readEnvironment({ ...base, AWS_LAMBDA_FUNCTION_NAME: 'get-list' }).tracing).toBe(false);
    expect(
      readEnvironment({ ...base, AWS_LAMBDA_FUNCTION_NAME: 'get-list', AWS_XRAY_DAEMON_ADDRESS: '169.254.79.129:2000' })
        .tracing,
    ).toBe(true);
  });
});
