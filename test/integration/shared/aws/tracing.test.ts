/**
 * X-Ray: each AWS call of a traced client becomes a subsegment of the invocation's trace. Here a real DynamoDB
 * call (embedded store) inside a segment, as the Lambda runtime provides one; Secrets Manager gets the same
 * instrumentation (checked on its middleware stack: it has no local twin to call). And a fresh process set up as
 * a traced Lambda container (the runtime's variables, a UDP socket in the daemon's place) sends the subsegment of
 * a call to the daemon under the invocation's trace id: the instrumentation loads only parts of the X-Ray SDK,
 * and the Lambda set-up the SDK's main entry would do must still happen.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import path from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { getNamespace, Segment, setSegment } from 'aws-xray-sdk-core';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { traced, XRAY_MIDDLEWARE_NAME } from '../../../../shared/aws/tracing';
import { readEnvironment } from '../../../../shared/runtime/environment';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';
import { REPO_ROOT } from '../../../support/paths';

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

describe('in a traced Lambda container', () => {
  const TRACE_ROOT = '1-5759e988-bd862e3fe1be46a994272793';
  const PARENT = '53995c3f42cd8ad8';

  it('sends each call as a subsegment of the invocation trace to the X-Ray daemon', async () => {
    const daemon = createSocket('udp4');
    const received: string[] = [];
    daemon.on('message', (message) => received.push(message.toString('utf8')));
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    const port = daemon.address().port;
    // A Secrets Manager call to a port that answers nothing: the call fails at once, and its subsegment says so.
    const script = `
      const { SecretsManagerClient, GetSecretValueCommand } = require('@aws-sdk/client-secrets-manager');
      const { traced } = require(${JSON.stringify(path.join(REPO_ROOT, 'shared', 'aws', 'tracing.ts'))});
      const client = traced(new SecretsManagerClient({
        endpoint: 'http://127.0.0.1:9', region: 'eu-west-1', maxAttempts: 1,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }));
      client.send(new GetSecretValueCommand({ SecretId: 'app' })).catch(() => setTimeout(() => process.exit(0), 200));
    `;
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        LAMBDA_TASK_ROOT: '/var/task',
        AWS_LAMBDA_FUNCTION_NAME: 'get-one',
        AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${port}`,
        _X_AMZN_TRACE_ID: `Root=${TRACE_ROOT};Parent=${PARENT};Sampled=1`,
        RECORDS_TABLE: 'records',
        CATALOG_TABLE: 'catalog',
        QUOTA_TABLE: 'quota',
        SECRET_PREFIX: 'data-access-service/test',
        DEFAULT_SECRET_ID: 'data-access-service/test/default',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    daemon.close();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    // Each datagram is a header line, then the (sub)segment document.
    const documents = received.map((datagram) => JSON.parse(datagram.split('\n')[1] as string));
    expect(documents).toEqual([
      expect.objectContaining({
        type: 'subsegment',
        name: 'SecretsManager',
        namespace: 'aws',
        trace_id: TRACE_ROOT,
        parent_id: PARENT,
        aws: expect.objectContaining({ operation: 'GetSecretValue' }),
      }),
    ]);
  }, 30_000);
});
