/**
 * The deployment's index state machine (lib/index-builds.ts) run by moto's Step Functions interpreter: the
 * definition `cdk synth` writes, its tasks invoking the index jobs' Lambda handler (functions/index-job.ts) through
 * Lambda's Invoke API (test/support/lambda-invoke-endpoint.ts, since moto runs Lambda functions in Docker), over the
 * records table and catalog of a service running against moto's DynamoDB. Records written before a field was
 * indexed get their index through the state machine, and a build whose function crashed and whose execution was
 * stopped mid-way completes when the state machine is started again, without counting a record twice.
 *
 * Runs in .ci/integration-on-moto, which starts moto's server with MOTO_PORT naming the Lambda endpoint's port, on
 * a server of its own (no execution may have run in its us-east-1 before: see SECOND_REGION).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { parseIndexRegistry } from '../../../shared/catalog/index-registry';
import { applyDeployResource } from '../../../shared/catalog-store/catalog-resource';
import { loadConfigFile } from '../../../shared/catalog-store/load-config';
import { readCatalogItem } from '../../../shared/storage/catalog-item';
import { indexSlot } from '../../../shared/storage/index-attributes';
import { datasetPartitionKey } from '../../../shared/storage/item-keys';
import { RecordAttr } from '../../../shared/storage/table-definitions';
import { LiveConfiguration } from '../../support/live-configuration';
import { FIXTURES_DIR, REPO_ROOT } from '../../support/paths';
import { buildService } from '../../support/service-fixture';
import { TEST_DYNAMODB_ENDPOINT } from '../../support/service-harness';

const MOTO = TEST_DYNAMODB_ENDPOINT;
const LAMBDA_PORT = Number(process.env.DAS_TEST_LAMBDA_ENDPOINT_PORT);
if (!MOTO || !Number.isInteger(LAMBDA_PORT)) {
  throw new Error(
    'run by .ci/integration-on-moto: DAS_TEST_DYNAMODB_ENDPOINT names moto and DAS_TEST_LAMBDA_ENDPOINT_PORT its MOTO_PORT',
  );
}
const REGION = process.env.AWS_REGION ?? 'us-east-1';
const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const FUNCTION_ARN = `arn:aws:lambda:${REGION}:123456789012:function:data-access-service-dev-index-jobs`;
const ROLE_ARN = 'arn:aws:iam::123456789012:role/index-builds';
const RECORDS = 300;

const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');
const live = new LiveConfiguration(FIXTURE);
const sfn = new SFNClient({ endpoint: MOTO, region: REGION, credentials: CREDENTIALS });
/**
 * The second run's region. moto 5.2 copies a state machine with every execution of its region (and account) when it
 * starts an execution, and an execution that has run holds locks, which cannot be copied: after the first
 * execution of a region, every StartExecution there fails ("cannot pickle '_thread.RLock' object"). The second run
 * is therefore started from a copy of the state machine in another region. The function's own client stays in
 * REGION, where it finds the first run stopped.
 */
const SECOND_REGION = 'us-west-2';
const secondSfn = new SFNClient({ endpoint: MOTO, region: SECOND_REGION, credentials: CREDENTIALS });

/** The synthesized state machine's definition, its function's ARN put in as CloudFormation resolves `Fn::GetAtt`. */
let definition: string;
/** The index jobs' function's environment as the template sets it. */
let functionEnvironment: Record<string, string>;
let stateMachineArn: string;
let secondStateMachineArn: string;
let endpoint: { child: ChildProcess; output: () => string } | undefined;

type TemplateValue = string | { 'Fn::GetAtt': [string, string] } | { Ref: string };

function resolve(value: TemplateValue, functionId: string): string {
  if (typeof value === 'string') return value;
  if ('Fn::GetAtt' in value && value['Fn::GetAtt'][0] === functionId && value['Fn::GetAtt'][1] === 'Arn') {
    return FUNCTION_ARN;
  }
  throw new Error(`the definition refers to something other than the index jobs' function: ${JSON.stringify(value)}`);
}

/** The Lambda endpoint: a fresh process is a fresh container. */
async function startFunction(): Promise<void> {
  const { tables } = live.harness.dynamo();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'test/support/lambda-invoke-endpoint.ts'),
      'functions/index-job.ts',
      'handler',
    ],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...functionEnvironment,
        // The tables this test's service made on moto, in place of the stage's.
        RECORDS_TABLE: tables.records,
        CATALOG_TABLE: tables.catalog,
        // Slow enough that the build is stopped mid-way: about 12 s for the 300 records.
        INDEX_BUILD_WRITES_PER_SECOND: '25',
        DYNAMODB_ENDPOINT: MOTO,
        AWS_ENDPOINT_URL_SFN: MOTO,
        AWS_REGION: REGION,
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
        PORT: String(LAMBDA_PORT),
      },
    },
  );
  let printed = '';
  child.stdout?.on('data', (chunk) => {
    printed += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    printed += chunk;
  });
  await new Promise<void>((ready, failed) => {
    child.once('exit', (code) => failed(new Error(`the Lambda endpoint exited with ${code}:\n${printed}`)));
    const check = setInterval(() => {
      if (printed.includes('"listening"')) {
        clearInterval(check);
        ready();
      }
    }, 50);
  });
  child.removeAllListeners('exit');
  endpoint = { child, output: () => printed };
}

/** The JSON lines the function printed: its invocations (`invocation`, `result`) and its own log lines. */
function functionLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

async function stopFunction(): Promise<void> {
  const running = endpoint;
  endpoint = undefined;
  if (!running || running.child.exitCode !== null) return;
  await new Promise<void>((done) => {
    running.child.once('exit', () => done());
    running.child.kill('SIGKILL');
  });
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${endpoint?.output() ?? ''}`);
    await new Promise((wake) => setTimeout(wake, 200));
  }
}

/** The `items` index as `das indexes` shows it (its route, POST /openapi/data/indexes). */
async function itemsIndex(): Promise<Record<string, unknown>> {
  const answer = await live.harness.call('/openapi/data/indexes', { appCode: 'app-main' }, { datasetCode: null });
  expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: expect.anything() });
  const orders = answer.body.data.datasets.find((d: { datasetCode: string }) => d.datasetCode === 'orders');
  return orders.indexes.find((index: { field: string }) => index.field === 'items');
}

/** get-list `items = 1`: every fourth record, newest first. */
async function expectItemsEqualOne(): Promise<void> {
  const served = await live.harness.getList('orders', { items: 1, pageSize: 100 });
  expect(served.body.success).toBe(true);
  expect(served.body.data.paging.totalCount).toBe(75);
  const customers = served.body.data.tableData.map((record: { customer: string }) => record.customer);
  expect(customers).toEqual(Array.from({ length: 75 }, (_, k) => `c-${297 - 4 * k}`));
}

/** The keys in the `items` index's generic index of moto's records table that carry its build's tag. */
async function buildKeys(): Promise<number> {
  const { client, tables } = live.harness.dynamo();
  const catalog = await readCatalogItem(client, tables.catalog);
  const index = parseIndexRegistry(catalog?.indexes)?.orders?.indexes.find((i) => i.field === 'items');
  if (index?.slot === undefined) throw new Error('the registry has no items index in a slot');
  const slot = indexSlot({ field: index.field, slot: index.slot, build: index.build });
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tables.records,
        IndexName: slot.indexName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#ix, :tag)',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#ix': slot.attribute },
        ExpressionAttributeValues: { ':pk': datasetPartitionKey('orders'), ':tag': slot.tag },
        Select: 'COUNT',
        ExclusiveStartKey,
      }),
    );
    count += page.Count ?? 0;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
}

async function execution(executionArn: string) {
  return (executionArn.includes(`:${SECOND_REGION}:`) ? secondSfn : sfn).send(
    new DescribeExecutionCommand({ executionArn }),
  );
}

async function history(executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await secondSfn.send(new GetExecutionHistoryCommand({ executionArn, nextToken }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

beforeAll(async () => {
  const template = buildService().statelessTemplate;
  const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  expect(machines).toHaveLength(1);
  const functionId = Object.entries(template.findResources('AWS::Lambda::Function')).find(([, resource]) =>
    String(resource.Properties?.Description).endsWith(': index jobs (build and drop indexes over stored records)'),
  )?.[0];
  if (!functionId) throw new Error("the template has no index jobs' function");
  const body = machines[0]?.Properties.DefinitionString as { 'Fn::Join': [string, TemplateValue[]] };
  definition = body['Fn::Join'][1].map((part) => resolve(part, functionId)).join(body['Fn::Join'][0]);
  functionEnvironment = template.findResources('AWS::Lambda::Function')[functionId]?.Properties.Environment.Variables;

  await live.start();
  const note = 'x'.repeat(200);
  for (let start = 0; start < RECORDS; start += 100) {
    const batch = Array.from({ length: 100 }, (_, k) => ({ customer: `c-${start + k}`, items: (start + k) % 4, note }));
    const created = await live.harness.batchCreate('orders', batch);
    expect(created.body.success).toBe(true);
  }

  // moto's Step Functions run a definition only with its interpreter switched on.
  const switched = await fetch(`${MOTO}/moto-api/config`, {
    method: 'POST',
    body: JSON.stringify({ stepfunctions: { execute_state_machine: true } }),
  });
  expect(switched.status).toBe(201);
  const create = async (client: SFNClient) => {
    const input = { name: `index-builds-${process.pid}`, definition, roleArn: ROLE_ARN, type: 'STANDARD' as const };
    return (await client.send(new CreateStateMachineCommand(input))).stateMachineArn as string;
  };
  stateMachineArn = await create(sfn);
  secondStateMachineArn = await create(secondSfn);
}, 180_000);

afterAll(async () => {
  await stopFunction();
  await live.stop();
  sfn.destroy();
  secondSfn.destroy();
});

it('builds the index of records written before the field was indexed, resuming after a crash and a stop', async () => {
  const next = structuredClone(loadConfigFile(FIXTURE));
  const items = next.datasets[0]?.fields.find((field) => field.name === 'items');
  if (!items) throw new Error('the fixture has an items field');
  items.indexed = true;
  const plan = await live.apply(next);
  expect(plan.datasets[0]?.indexesToBuild).toEqual([{ field: 'items', records: RECORDS }]);
  // Exact at once, answered without the index (moto's fixed read units keep such a list within any budget).
  await expectItemsEqualOne();

  // The first run: its segment's function crashes once the first page (200 records) is saved, and the run is stopped.
  await startFunction();
  // Started as a deploy starts it: the index-build-start custom resource's handler, with its Step Functions client.
  const startedByDeploy = await applyDeployResource(
    {
      RequestType: 'Create',
      ResourceType: 'Custom::IndexBuildStart',
      ResourceProperties: { ServiceToken: 'deploy-function', StateMachineArn: stateMachineArn, ConfigDigest: 'change' },
      ServiceToken: 'deploy-function',
      ResponseURL: 'https://cloudformation.example/response',
      StackId: 'stack',
      RequestId: 'request',
      LogicalResourceId: 'IndexBuildStart',
    },
    { dynamo: live.harness.dynamo().client, stepFunctions: () => sfn },
  );
  const first = { executionArn: String(startedByDeploy.Data?.executionArn) };
  expect(first.executionArn).toMatch(new RegExp(`^${stateMachineArn.replace(':stateMachine:', ':execution:')}:`));
  const midway = await waitFor('the first page of the build', async () => {
    const index = await itemsIndex();
    return typeof index.recordsDone === 'number' && index.recordsDone > 0 ? index : undefined;
  });
  const firstLines = functionLines(endpoint?.output() ?? '');
  await stopFunction();
  await sfn.send(new StopExecutionCommand({ executionArn: first.executionArn, cause: 'redeploy' }));
  expect(midway).toEqual(expect.objectContaining({ state: 'building', recordsDone: 200, recordsTotal: RECORDS }));
  expect(await itemsIndex()).toEqual(expect.objectContaining({ state: 'building', recordsDone: 200 }));
  const stopped = await waitFor('the first run to stop', async () => {
    const described = await execution(first.executionArn as string);
    return described.status === 'RUNNING' ? undefined : described;
  });
  expect(stopped.status).toBe('ABORTED');

  // The second run, on a fresh function: it takes the lease from the stopped run and finishes the job.
  await startFunction();
  const second = await secondSfn.send(
    new StartExecutionCommand({ stateMachineArn: secondStateMachineArn, name: 'second', input: '{}' }),
  );
  const finished = await waitFor('the second run to end', async () => {
    const described = await execution(second.executionArn as string);
    return described.status === 'RUNNING' ? undefined : described;
  });
  expect(finished.status).toBe('SUCCEEDED');
  expect(await itemsIndex()).toEqual(expect.objectContaining({ state: 'complete', percent: 100, recordsDone: null }));

  // The first run decided to scan a new job; the second took the same job up where the first run's segment had
  // saved its position: it read the 100 records after the first page, and finished the job.
  const firstCalls = firstLines.filter((line) => line.invocation);
  expect(firstCalls[0]).toEqual(
    expect.objectContaining({
      invocation: { step: 'next', owner: first.executionArn },
      result: { action: 'scan', jobId: expect.any(String), segments: [expect.any(Object)], pending: 1 },
    }),
  );
  const jobId = (firstCalls[0]?.result as { jobId: string }).jobId;
  const segment = { jobId, datasetCode: 'orders', segment: 0 };
  expect(firstCalls.map((call) => call.invocation)).toEqual([{ step: 'next', owner: first.executionArn }]);
  const secondLines = functionLines(endpoint?.output() ?? '');
  expect(
    secondLines.filter((line) => line.invocation).map(({ invocation, result }) => ({ invocation, result })),
  ).toEqual([
    {
      invocation: { step: 'next', owner: second.executionArn },
      result: { action: 'scan', jobId, segments: [segment], pending: 1 },
    },
    { invocation: { step: 'segment', ...segment }, result: { done: true } },
    { invocation: { step: 'finish', jobId }, result: { finished: true } },
    { invocation: { step: 'next', owner: second.executionArn }, result: { action: 'done', pending: 0 } },
  ]);
  const segmentWork = secondLines.filter((line) => line.operation === 'index-job' && line.step === 'segment');
  expect(segmentWork).toEqual([expect.objectContaining({ indexBuildRecords: 100, indexBuildErrors: 0 })]);

  // The second run scanned through a Distributed Map, whose map run succeeded.
  const types = (await history(second.executionArn as string)).map((event) => event.type);
  expect(types).toEqual(expect.arrayContaining(['MapRunStarted', 'MapRunSucceeded', 'ExecutionSucceeded']));

  await expectItemsEqualOne();
  // Every record has its key in the index's slot under the build's tag.
  expect(await buildKeys()).toEqual(RECORDS);
}, 300_000);
