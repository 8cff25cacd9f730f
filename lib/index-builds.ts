/**
 * Index builds in a deployment (docs/interface.md §17, docs/deploying.md "Index builds"): a Step Functions state
 * machine that runs the steps of shared/indexing/index-jobs.ts with one Lambda function (functions/index-job.ts):
 *
 *   Next ─┬─ scan ─> Scan (Distributed Map over the job's segments; each child execution runs one segment in
 *         │          turns of a few minutes until it is done) ─> Finish ─> Next
 *         ├─ wait ─> Wait ($.seconds) ─> Next
 *         └─ done ─> Done
 *
 * A failed scan or finish waits a minute and asks Next again, which resumes the same job from the positions its
 * segments saved in the catalog table; so does a new execution after a crash or a redeploy (the deploy starts
 * one, and a run still going keeps the work). The state machine itself never writes a record: the function does,
 * at the pace the deployment sets (writes a second, all segments together), so the API's own writes keep most of
 * a dataset partition's throughput.
 */
import { ArnFormat, type CfnElement, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  Choice,
  Condition,
  DefinitionBody,
  DistributedMap,
  JsonPath,
  LogLevel,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { acknowledge } from './nag-acknowledgements';
import { FUNCTION_BUNDLING } from './operation-function';
import type { TableResource } from './stateful-stack';

export interface IndexBuildsProps {
  stage: string;
  projectRoot: string;
  tables: { records: TableResource; catalog: TableResource };
  metricNamespace: string;
  /** Writes a second one job may make, all its segments together. */
  writesPerSecond: number;
  /** Segments that run at once (the Distributed Map's concurrency). */
  concurrency: number;
  /** At most this many segments per dataset. */
  maxSegments: number;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  encryptionKey?: IKey;
}

/** The state machine's name in a stage: known before it exists, so the deploy's custom resource can name it. */
export function indexBuildsStateMachineName(stage: string): string {
  return `data-access-service-${stage}-index-builds`;
}

/** The Lambda errors a task retries (a throttled or restarted function), besides the function's own failures. */
const RETRIED_ERRORS = [
  'States.TaskFailed',
  'States.Timeout',
  'Lambda.ServiceException',
  'Lambda.TooManyRequestsException',
];

export class IndexBuilds extends Construct {
  readonly function: NodejsFunction;
  readonly stateMachine: StateMachine;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: IndexBuildsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const stateMachineName = indexBuildsStateMachineName(props.stage);
    const logKey = props.encryptionKey ? { encryptionKey: props.encryptionKey } : {};

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
      ...logKey,
    });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.stage} index jobs: read records, write their index keys, keep the jobs in the catalog table`,
    });
    role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    const tableArn = (table: TableResource) =>
      stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: table.tableName });
    const records = tableArn(props.tables.records);
    const countIndex = props.tables.records.definition.globalSecondaryIndexes.map(
      (index) => `${records}/index/${index.indexName}`,
    );
    // Reads: a segment's records (Query), a record again after a conflict (GetItem), the record count (its
    // checkpoint item and the count index), records a job's end folds (BatchGetItem). Writes: one UpdateItem per
    // record whose index keys change; at a job's end a build's count pages, list and head (PutItem, UpdateItem,
    // DeleteItem of a former list) and the removal of a dropped index's (BatchWriteItem of deletes).
    role.addToPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [records, ...countIndex] }));
    role.addToPolicy(
      new PolicyStatement({
        actions: [
          'dynamodb:BatchGetItem',
          'dynamodb:BatchWriteItem',
          'dynamodb:DeleteItem',
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
        ],
        resources: [records],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        // The registry and the jobs' items: read, replaced, counted, removed when a job ends.
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
        resources: [tableArn(props.tables.catalog)],
      }),
    );
    // Whether the execution holding the runner lease still runs (a run that crashed leaves the lease behind).
    role.addToPolicy(
      new PolicyStatement({
        actions: ['states:DescribeExecution'],
        resources: [
          stack.formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${stateMachineName}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );

    this.function = new NodejsFunction(this, 'Function', {
      description: `${props.stage}: index jobs (build and drop indexes over stored records)`,
      entry: `${props.projectRoot}/functions/index-job.ts`,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      // A segment works 4 minutes per invocation (shared/composition/index-job-task.ts); the rest is margin.
      timeout: Duration.minutes(5),
      tracing: Tracing.ACTIVE,
      role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      environment: {
        RECORDS_TABLE: props.tables.records.tableName,
        CATALOG_TABLE: props.tables.catalog.tableName,
        METRIC_NAMESPACE: props.metricNamespace,
        INDEX_BUILD_WRITES_PER_SECOND: String(props.writesPerSecond),
        INDEX_BUILD_CONCURRENCY: String(props.concurrency),
        INDEX_BUILD_MAX_SEGMENTS: String(props.maxSegments),
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: FUNCTION_BUNDLING,
    });

    const step = (name: string, payload: Record<string, unknown>, resultPath?: string) =>
      new LambdaInvoke(this, name, {
        lambdaFunction: this.function,
        payload: TaskInput.fromObject(payload),
        payloadResponseOnly: true,
        retryOnServiceExceptions: false,
        ...(resultPath ? { resultPath } : {}),
      }).addRetry({
        errors: RETRIED_ERRORS,
        interval: Duration.seconds(5),
        backoffRate: 2,
        maxAttempts: 6,
        maxDelay: Duration.minutes(5),
      });

    const next = step('Next', { step: 'next', owner: JsonPath.stringAt('$$.Execution.Id') });
    // One segment (the child execution's input: {jobId, datasetCode, segment}), turn after turn, until it says it
    // is done; each turn's answer goes to $.turn, so the next turn gets the same reference.
    const segment = step(
      'Segment',
      {
        step: 'segment',
        jobId: JsonPath.stringAt('$.jobId'),
        datasetCode: JsonPath.stringAt('$.datasetCode'),
        segment: JsonPath.numberAt('$.segment'),
      },
      '$.turn',
    );
    const segmentLoop = segment.next(
      new Choice(this, 'SegmentDone?')
        .when(Condition.booleanEquals('$.turn.done', true), new Succeed(this, 'SegmentDone'))
        .otherwise(segment),
    );
    const scan = new DistributedMap(this, 'Scan', {
      itemsPath: '$.segments',
      maxConcurrency: props.concurrency,
      // Long segments: a Standard child execution may run for up to a year, an Express one five minutes.
      mapExecutionType: StateMachineType.STANDARD,
      resultPath: JsonPath.DISCARD,
      toleratedFailurePercentage: 0,
    }).itemProcessor(segmentLoop);
    const finish = step('Finish', { step: 'finish', jobId: JsonPath.stringAt('$.jobId') });
    const pause = new Wait(this, 'PauseAfterFailure', { time: WaitTime.duration(Duration.minutes(1)) }).next(next);
    scan.addCatch(pause, { resultPath: JsonPath.DISCARD });
    finish.addCatch(pause, { resultPath: JsonPath.DISCARD });

    const definition = next.next(
      new Choice(this, 'WhatNext?')
        .when(Condition.stringEquals('$.action', 'scan'), scan.next(finish.next(next)))
        .when(
          Condition.stringEquals('$.action', 'wait'),
          new Wait(this, 'WaitForSettle', { time: WaitTime.secondsPath('$.seconds') }).next(next),
        )
        .otherwise(new Succeed(this, 'Done')),
    );

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(definition),
      tracingEnabled: true,
      logs: {
        destination: new LogGroup(this, 'StateMachineLogs', {
          retention: props.logRetention,
          removalPolicy: props.logRemovalPolicy,
          ...logKey,
        }),
        level: LogLevel.ALL,
        includeExecutionData: false,
      },
    });

    const functionId = stack.getLogicalId(this.function.node.defaultChild as CfnElement);
    const machineId = stack.getLogicalId(this.stateMachine.node.defaultChild as CfnElement);
    acknowledge(this, [
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray (tracing: active) and CloudWatch Logs delivery of the state machine have no resource-level ' +
          'permissions; every table is listed by name.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${stateMachineName}:*]`,
        reason:
          "Executions of this stage's index state machine only: the function asks whether the run holding the " +
          'runner lease still runs, and the Distributed Map manages its child executions.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${functionId}.Arn>:*]`,
        reason: "The state machine invokes the index jobs' function and its versions: the Step Functions task's grant.",
      },
      ...[':*', '/*:*'].map((tail) => ({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${machineId}"}]}]}${tail}]`,
        reason:
          "The Distributed Map starts, reads and stops the child executions of this state machine's own runs only " +
          '(the policy CDK writes for it).',
      })),
      {
        id: 'AwsSolutions-L1',
        reason: 'Node.js 22 is the runtime the design fixes for every function of the service.',
      },
    ]);
  }
}
