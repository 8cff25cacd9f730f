/**
 * Custom SQL's MySQL mirror in a deployment (docs/interface.md §20, docs/deploying.md "Custom SQL on Aurora"), on
 * AWS's own parts:
 *
 * - an EventBridge schedule starts the mirror function every minute with the cluster, database and writer secret
 *   (the rule's input); each run keeps the mirror in step with the change log for 65 s, so runs overlap and queries
 *   never wait on a gap (shared/mirror/mirror-run.ts). A run that fails is not retried (the next minute's run goes
 *   on from what was saved) and goes to the dead-letter queue, as does a run EventBridge could not start;
 * - the function reads the change log (the events table's feed index), the records (a backfill), the catalog, and
 *   writes the mirror through the Data API as the writer: the only function that may read the writer's secret;
 * - a custom resource makes the SELECT-only query user on every deploy (shared/mirror/query-user.ts);
 * - alarms: a run in the dead-letter queue, and the mirror's lag (`sqlMirrorLagSeconds`) above 60 s for 5 minutes,
 *   which also fires when no run reports it at all (a stopped schedule, a cluster out of reach).
 */
import { CustomResource, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { MIRROR_BACKFILLING_METRIC, MIRROR_LAG_METRIC } from '../shared/observability/mirror-metrics';
import { FEED_INDEX } from '../shared/storage/table-definitions';
import { backgroundFunction } from './background-function';
import { acknowledge } from './nag-acknowledgements';
import type { SqlClusterResource } from './sql-cluster';
import type { StatefulResources } from './stateful-stack';

export interface SqlMirrorProps {
  stage: string;
  resources: StatefulResources;
  sql: SqlClusterResource;
  projectRoot: string;
  metricNamespace: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  encryptionKey?: IKey;
  alarmAction?: IAlarmAction;
}

/** The mirror's lag that raises its alarm once it has lasted `MIRROR_LAG_ALARM_MINUTES` (docs/interface.md §20). */
export const MIRROR_LAG_ALARM_SECONDS = 60;
export const MIRROR_LAG_ALARM_MINUTES = 5;
/** A run lasts 65 s and stops 20 s before this, whatever it was doing (mirror-run.ts). */
const MIRROR_TIMEOUT = Duration.seconds(90);
/** Data API statements the writer makes: one at a time, no transaction. */
export const SQL_WRITER_ACTIONS = ['rds-data:ExecuteStatement'];

export type SqlMirrorMetric = 'lag' | 'backfilling' | 'failedRuns';

export class SqlMirror extends Construct {
  readonly mirrorFunction: NodejsFunction;
  readonly queryUserFunction: NodejsFunction;
  readonly failures: Queue;
  readonly schedule: Rule;
  readonly queryUser: CustomResource;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: SqlMirrorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { resources, sql } = props;
    const tableArn = (tableName: string) =>
      stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: tableName });

    this.failures = new Queue(this, 'MirrorFailures', {
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
      ...(props.encryptionKey
        ? { encryption: QueueEncryption.KMS, encryptionMasterKey: props.encryptionKey }
        : { encryption: QueueEncryption.SQS_MANAGED }),
    });
    acknowledge(this.failures, [
      {
        id: 'AwsSolutions-SQS3',
        reason:
          "It is the mirror function's dead-letter queue, watched by an alarm: a failed run loses nothing (the next " +
          "minute's run applies the change log from the position saved for good).",
      },
    ]);

    const fn = (name: string, description: string, entry: string, timeout: Duration) => {
      const made = backgroundFunction(this, props, { name, description, entry, timeout });
      const { role } = made;
      // The writer's statements on this cluster, with the writer's secret, which only these two functions read.
      role.addToPolicy(new PolicyStatement({ actions: SQL_WRITER_ACTIONS, resources: [sql.clusterArn] }));
      role.addToPolicy(
        new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [sql.writerSecretArn] }),
      );
      if (props.encryptionKey) {
        role.addToPolicy(
          new PolicyStatement({
            actions: ['kms:Decrypt'],
            resources: [props.encryptionKey.keyArn],
            conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${stack.region}.amazonaws.com` } },
          }),
        );
      }
      return made;
    };

    // The mirror: the change log and the records in, the mirror out.
    const mirror = fn('Mirror', 'custom SQL mirror (change log to Aurora)', 'sql-mirror', MIRROR_TIMEOUT);
    this.mirrorFunction = mirror.fn;
    const events = tableArn(resources.tables.events.tableName);
    mirror.role.addToPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
        resources: [events, `${events}/index/${FEED_INDEX.indexName}`],
      }),
    );
    mirror.role.addToPolicy(
      new PolicyStatement({ actions: ['dynamodb:Query'], resources: [tableArn(resources.tables.records.tableName)] }),
    );
    mirror.role.addToPolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [tableArn(resources.tables.catalog.tableName)] }),
    );
    // A failed run is not retried: the next one starts within the minute and goes on from what was saved.
    this.mirrorFunction.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.minutes(2),
      onFailure: new SqsDestination(this.failures),
    });
    this.schedule = new Rule(this, 'Schedule', {
      description: `${props.stage}: keep custom SQL's mirror in step with the change log`,
      schedule: Schedule.rate(Duration.minutes(1)),
    });
    this.schedule.addTarget(
      new LambdaFunction(this.mirrorFunction, {
        event: RuleTargetInput.fromObject({
          clusterArn: sql.clusterArn,
          database: sql.database,
          writerSecretArn: sql.writerSecretArn,
        }),
        deadLetterQueue: this.failures,
        retryAttempts: 2,
        maxEventAge: Duration.minutes(2),
      }),
    );

    // The query user, made as the writer with the query secret's password on every deploy.
    const users = fn('QueryUser', 'custom SQL query user (deploy)', 'sql-query-user', Duration.minutes(6));
    this.queryUserFunction = users.fn;
    users.role.addToPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [sql.querySecretArn] }),
    );
    const provider = new Provider(this, 'QueryUserProvider', {
      onEventHandler: this.queryUserFunction,
      logGroup: new LogGroup(this, 'QueryUserProviderLogs', {
        retention: props.logRetention,
        removalPolicy: props.logRemovalPolicy,
        ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
      }),
    });
    this.queryUser = new CustomResource(this, 'QueryUserResource', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::SqlQueryUser',
      properties: {
        ClusterArn: sql.clusterArn,
        Database: sql.database,
        WriterSecretArn: sql.writerSecretArn,
        QuerySecretArn: sql.querySecretArn,
      },
    });

    const handlerLogicalId = stack.getLogicalId(this.queryUserFunction.node.defaultChild as CfnFunction);
    acknowledge(provider, [
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          'The custom-resources Provider framework function is created by the CDK with AWSLambdaBasicExecutionRole; ' +
          'it only relays CloudFormation events to the query-user function.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${handlerLogicalId}.Arn>:*]`,
        reason:
          'The CDK grants the Provider framework lambda:InvokeFunction on the query-user function and its ' +
          'versions (<arn>:*); nothing broader.',
      },
    ]);
    acknowledge(this, [
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only X-Ray (tracing: active) is granted on "*": xray:PutTraceSegments and xray:PutTelemetryRecords ' +
          'have no resource-level permissions. The cluster, tables and secrets are listed by ARN.',
      },
      {
        id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
        reason:
          'With a customer-managed key, sending a failed run to the encrypted dead-letter queue needs ' +
          'kms:GenerateDataKey*, on that one key only; the wildcard is in the action name, not the resource.',
      },
      {
        id: 'AwsSolutions-IAM5[Action::kms:ReEncrypt*]',
        reason: 'As above: the queue grant of a customer-managed key, on that one key only.',
      },
      {
        id: 'AwsSolutions-L1',
        reason: 'Node.js 22 is the runtime the design fixes for the service, as for the operations.',
      },
    ]);

    const alarm = (alarmId: string, description: string, options: ConstructorParameters<typeof Alarm>[2]) => {
      const created = new Alarm(this, alarmId, {
        ...options,
        alarmName: `data-access-service-${props.stage}-${alarmId.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}`,
        alarmDescription: `${props.stage}: ${description}`,
      });
      if (props.alarmAction) {
        created.addAlarmAction(props.alarmAction);
        created.addOkAction(props.alarmAction);
      }
      this.alarms.push(created);
    };
    alarm('SqlMirrorFailures', 'runs of the custom SQL mirror failed or could not start (the dead-letter queue)', {
      metric: this.failures.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm(
      'SqlMirrorLag',
      `the custom SQL mirror has been more than ${MIRROR_LAG_ALARM_SECONDS} s behind the change log for ` +
        `${MIRROR_LAG_ALARM_MINUTES} minutes, or no run has reported its lag (docs/deploying.md, Custom SQL on Aurora)`,
      {
        metric: this.metrics(props.metricNamespace).lag,
        threshold: MIRROR_LAG_ALARM_SECONDS,
        evaluationPeriods: MIRROR_LAG_ALARM_MINUTES,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        // No run reporting is the mirror standing still.
        treatMissingData: TreatMissingData.BREACHING,
      },
    );
  }

  /** The dashboard's metrics of the mirror: its lag, datasets still being copied, runs that failed. */
  metrics(namespace: string): Record<SqlMirrorMetric, Metric> {
    const emf = (metricName: string) =>
      new Metric({ namespace, metricName, statistic: 'Maximum', period: Duration.minutes(1) });
    return {
      lag: emf(MIRROR_LAG_METRIC),
      backfilling: emf(MIRROR_BACKFILLING_METRIC),
      failedRuns: this.failures.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
    };
  }
}
