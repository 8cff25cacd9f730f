/**
 * The stateless half of the service: one Lambda per operation in the shared route list, the REST API in front of
 * them, the custom resource that deploys the configuration into the catalog table, the dashboard and the alarms.
 * It receives the tables and secrets through typed props, so it can be redeployed (or destroyed) at will
 * without touching data.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { type CatalogConfig, HOOK_OPERATIONS } from '../shared/catalog/schema';
import { operationRoutes } from '../shared/contract/client-routes';
import type { OperationName, RouteDefinition } from '../shared/contract/routes';
import { MAX_BODY_BYTES } from '../shared/http/body-middleware';
import { CatalogDeployment } from './catalog-deployment';
import { ChangeLogFunctions } from './change-log-functions';
import type { DeploymentSettings } from './deployment-settings';
import { IndexBuilds } from './index-builds';
import { acknowledge } from './nag-acknowledgements';
import { type BundleAsset, OperationFunction } from './operation-function';
import { ServiceAlarms } from './service-alarms';
import { ServiceApi } from './service-api';
import { ServiceDashboard } from './service-dashboard';
import { ServiceFirewall } from './service-firewall';
import type { ServiceMetricSources } from './service-metrics';
import { SqlMirror } from './sql-mirror';
import type { StatefulResources } from './stateful-stack';

export interface StatelessStackProps extends StackProps {
  settings: DeploymentSettings;
  resources: StatefulResources;
  config: CatalogConfig;
  /** Repository root: where `functions/`, `shared/` and the lockfile are. */
  projectRoot: string;
  /** Files copied next to an operation's bundle (e.g. the SQL engine's WebAssembly for execute-sql). */
  extraAssets?: Partial<Record<OperationName, readonly BundleAsset[]>>;
  /** The handler source of a route; `functions/<functionFile>.ts` unless a test supplies a stand-in. */
  entryFor?: (route: RouteDefinition) => string;
}

/**
 * Memory and timeout per operation, typed by operation name so a new route cannot ship without a decision.
 * Memory also buys CPU (and so latency) in Lambda. Timeouts stay under API Gateway's 29 s so a slow request
 * ends in the function (which can answer 2001) rather than in the gateway.
 */
export const OPERATION_SIZING: Record<OperationName, { memorySize: number; timeout: Duration }> = {
  'get-list': { memorySize: 1024, timeout: Duration.seconds(15) },
  'get-one': { memorySize: 1024, timeout: Duration.seconds(10) },
  // One record per request, and the dataset's version when custom SQL reads the dataset.
  create: { memorySize: 1024, timeout: Duration.seconds(20) },
  // Up to 1,000 records in one request: 40 BatchWriteItem calls, with retries of what DynamoDB leaves unprocessed.
  'batch-create': { memorySize: 1024, timeout: Duration.seconds(25) },
  update: { memorySize: 1024, timeout: Duration.seconds(10) },
  // Registered queries may run up to 25 s (schema: timeoutMs ≤ 25000), after loading their datasets in memory.
  // Memory: the SQL worker is capped at 512 MB of SQLite heap plus 512 MB of JavaScript heap (sqljs-engine.ts),
  // beside the main thread's loaded datasets; 3 GB leaves headroom so that a query ends as an answer, never
  // by killing the function.
  'execute-sql': { memorySize: 3072, timeout: Duration.seconds(28) },
  // Aggregate runs on custom SQL's engine over a loaded copy of one dataset: the same memory as execute-sql, and
  // two statements of at most 10 s each after loading.
  aggregate: { memorySize: 3072, timeout: Duration.seconds(28) },
  // The change feed: a query of the change log per readable dataset, merged; pages of at most 500 events.
  changes: { memorySize: 1024, timeout: Duration.seconds(15) },
  // The index status: the catalog, and one read of each index job's progress.
  indexes: { memorySize: 512, timeout: Duration.seconds(10) },
  // Client-key mode's "who am I": a catalog lookup and the quota write.
  'login-user-info': { memorySize: 512, timeout: Duration.seconds(10) },
  // A backend function's description and version: a catalog lookup and the quota write, like loginUserInfo.
  'bff-endpoint': { memorySize: 512, timeout: Duration.seconds(10) },
};

/**
 * The operations that run SQL: execute-sql, aggregate (compiled to SQL on the same engine), get-list (a related
 * condition or sort past its read budget runs on the cluster, docs/interface.md §21), and every operation a hook may
 * run in (a hook's `context.client.sql`), hooked in this configuration or not: hooks are configuration, and a change
 * of configuration must not change a function's role or environment (docs/deploying.md, "Custom SQL on Aurora").
 */
export const SQL_OPERATIONS: ReadonlySet<OperationName> = new Set<OperationName>([
  'execute-sql',
  'aggregate',
  ...HOOK_OPERATIONS,
]);

/** A route of the shared list has no handler file: the app must not deploy an API with a dead route. */
export class MissingHandlerError extends Error {
  constructor(readonly entries: readonly string[]) {
    super(`operation handler(s) missing, every route needs one:\n  ${entries.join('\n  ')}`);
    this.name = 'MissingHandlerError';
  }
}

export class StatelessStack extends Stack {
  readonly operations: OperationFunction[];
  readonly api: ServiceApi;
  readonly catalogDeployment: CatalogDeployment;
  readonly indexBuilds: IndexBuilds;
  readonly alarms: ServiceAlarms;
  readonly dashboard: ServiceDashboard;
  readonly changeLog: ChangeLogFunctions;
  readonly alarmTopic?: ITopic;
  readonly firewall?: ServiceFirewall;
  readonly sqlMirror?: SqlMirror;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const { settings, resources } = props;
    // RetentionDays' values are the days CloudWatch accepts; the settings checked the number against that list.
    const logRetention = settings.logRetentionDays as RetentionDays;
    const logRemovalPolicy = settings.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const encryptionKey = resources.encryptionKey;
    // One function per operation; the API adds each operation's /client/ path to the same function.
    const routes = operationRoutes();

    const entryFor =
      props.entryFor ?? ((route: RouteDefinition) => join(props.projectRoot, 'functions', `${route.functionFile}.ts`));
    const missing = routes.map(entryFor).filter((entry) => !existsSync(entry));
    if (missing.length > 0) {
      throw new MissingHandlerError(missing);
    }

    this.operations = routes.map((route) => {
      const sizing = OPERATION_SIZING[route.operation];
      const sql = resources.sql && SQL_OPERATIONS.has(route.operation) ? resources.sql : undefined;
      return new OperationFunction(this, `Op-${route.operation}`, {
        route,
        entry: entryFor(route),
        projectRoot: props.projectRoot,
        stage: settings.stage,
        tables: resources.tables,
        secrets: {
          prefix: resources.secretPrefix,
          applicationSecretNames: resources.applicationSecretNames,
          defaultSecretName: resources.defaultSecretName,
        },
        metricNamespace: settings.metricNamespace,
        ...(settings.corsAllowOrigin ? { corsAllowOrigin: settings.corsAllowOrigin } : {}),
        memorySize: sizing.memorySize,
        timeout: sizing.timeout,
        logRetention,
        logRemovalPolicy,
        ...(encryptionKey ? { encryptionKey } : {}),
        // Aggregate loads and queries datasets as custom SQL does: the same reservation caps each of the two.
        ...((route.operation === 'execute-sql' || route.operation === 'aggregate') && settings.sqlReservedConcurrency
          ? { reservedConcurrentExecutions: settings.sqlReservedConcurrency }
          : {}),
        ...(settings.provisionedConcurrency?.[route.operation]
          ? { provisionedConcurrentExecutions: settings.provisionedConcurrency[route.operation] }
          : {}),
        extraAssets: props.extraAssets?.[route.operation] ?? [],
        ...(sql
          ? {
              sql: {
                clusterArn: sql.clusterArn,
                database: sql.database,
                querySecretArn: sql.querySecretArn,
                writerSecretArn: sql.writerSecretArn,
              },
            }
          : {}),
      });
    });

    if (settings.waf) {
      this.firewall = new ServiceFirewall(this, 'Firewall', {
        stage: settings.stage,
        maxBodyBytes: MAX_BODY_BYTES,
        rateLimitPer5Minutes: settings.wafRateLimitPer5Minutes,
      });
    }
    const wafAclArn = this.firewall?.webAcl.attrArn ?? settings.wafAclArn;
    this.api = new ServiceApi(this, 'Api', {
      stage: settings.stage,
      operations: this.operations,
      ...(settings.corsAllowOrigin ? { corsAllowOrigin: settings.corsAllowOrigin } : {}),
      throttleRateLimit: settings.throttleRateLimit,
      throttleBurstLimit: settings.throttleBurstLimit,
      methodThrottles: {
        'execute-sql': { rateLimit: settings.sqlThrottleRateLimit, burstLimit: settings.sqlThrottleBurstLimit },
        // Aggregate runs on the same SQL engine: it shares custom SQL's method throttle.
        aggregate: { rateLimit: settings.sqlThrottleRateLimit, burstLimit: settings.sqlThrottleBurstLimit },
      },
      logRetention,
      logRemovalPolicy,
      ...(encryptionKey ? { logEncryptionKey: encryptionKey } : {}),
      ...(wafAclArn ? { wafAclArn } : {}),
    });

    this.catalogDeployment = new CatalogDeployment(this, 'CatalogDeployment', {
      stage: settings.stage,
      catalogTableName: resources.tables.catalog.tableName,
      records: resources.tables.records,
      config: props.config,
      projectRoot: props.projectRoot,
      logRetention,
      logRemovalPolicy,
      ...(encryptionKey ? { logEncryptionKey: encryptionKey } : {}),
    });

    this.indexBuilds = new IndexBuilds(this, 'IndexBuilds', {
      stage: settings.stage,
      projectRoot: props.projectRoot,
      tables: { records: resources.tables.records, catalog: resources.tables.catalog },
      metricNamespace: settings.metricNamespace,
      writesPerSecond: settings.indexBuildWritesPerSecond,
      concurrency: settings.indexBuildConcurrency,
      maxSegments: settings.indexBuildMaxSegments,
      logRetention,
      logRemovalPolicy,
      ...(encryptionKey ? { encryptionKey } : {}),
    });
    // The configuration is applied (or refused) before any function changes: every function depends on it.
    for (const operation of this.operations) operation.node.addDependency(this.catalogDeployment.resource);
    this.indexBuilds.node.addDependency(this.catalogDeployment.resource);
    this.catalogDeployment.startIndexBuilds(this.indexBuilds.stateMachine);

    const topic = this.createAlarmTopic(settings, encryptionKey);
    if (topic) this.alarmTopic = topic;
    const sources: ServiceMetricSources = {
      metricNamespace: settings.metricNamespace,
      operations: this.operations,
      api: this.api.api,
      // References by name, for the metrics' TableName dimension (no export from the stateful stack).
      tables: (['records', 'catalog', 'quota'] as const).map((label) => ({
        label,
        table: Table.fromTableName(this, `TableRef-${label}`, resources.tables[label].tableName),
      })),
    };
    this.alarms = new ServiceAlarms(this, 'Alarms', {
      ...sources,
      stage: settings.stage,
      latencyAlarmP99Ms: settings.latencyAlarmP99Ms,
      authFailureAlarmThreshold: settings.authFailureAlarmThreshold,
      recordIndexNames: resources.tables.records.definition.globalSecondaryIndexes.map((index) => index.indexName),
      indexBuilds: this.indexBuilds.stateMachine,
      ...(topic ? { topic } : {}),
    });
    this.changeLog = new ChangeLogFunctions(this, 'ChangeLog', {
      stage: settings.stage,
      resources,
      projectRoot: props.projectRoot,
      metricNamespace: settings.metricNamespace,
      logRetention,
      logRemovalPolicy,
      ...(encryptionKey ? { encryptionKey } : {}),
      ...(topic ? { alarmAction: new SnsAction(topic) } : {}),
      subscriptionIds: (props.config.webhooks ?? []).map((webhook) => webhook.id),
      subscriptionConcurrency: settings.webhookConcurrency,
    });
    if (resources.sql) {
      this.sqlMirror = new SqlMirror(this, 'SqlMirror', {
        stage: settings.stage,
        resources,
        sql: resources.sql,
        projectRoot: props.projectRoot,
        metricNamespace: settings.metricNamespace,
        logRetention,
        logRemovalPolicy,
        ...(encryptionKey ? { encryptionKey } : {}),
        ...(topic ? { alarmAction: new SnsAction(topic) } : {}),
      });
    }
    this.dashboard = new ServiceDashboard(this, 'Dashboard', {
      ...sources,
      stage: settings.stage,
      alarms: [...this.alarms.alarms, ...this.changeLog.alarms, ...(this.sqlMirror?.alarms ?? [])],
      ...(this.sqlMirror ? { sqlMirror: this.sqlMirror.metrics(settings.metricNamespace) } : {}),
      hookFunctions: [...new Set((props.config.hooks ?? []).map((hook) => hook.function))],
      changeLog: this.changeLog.metrics(settings.metricNamespace),
      indexBuilds: this.indexBuilds.stateMachine,
    });
  }

  /** The alarm topic: an existing one (alarmTopicArn), a new one with an e-mail subscription (alarmEmail), or none. */
  private createAlarmTopic(settings: DeploymentSettings, encryptionKey: IKey | undefined): ITopic | undefined {
    if (settings.alarmTopicArn) return Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn);
    if (!settings.alarmEmail) return undefined;
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `data-access-service ${settings.stage} alarms`,
      enforceSSL: true,
      // The customer-managed key's policy lets CloudWatch alarms publish (lib/service-key.ts).
      ...(encryptionKey ? { masterKey: encryptionKey } : {}),
    });
    topic.addSubscription(new EmailSubscription(settings.alarmEmail));
    if (encryptionKey) return topic;
    acknowledge(topic, [
      {
        id: 'AwsSolutions-SNS2',
        reason:
          'CloudWatch alarms cannot publish to a topic encrypted with the AWS managed SNS key, and alarm ' +
          'notifications carry only alarm names and metric values, never keys or records.',
      },
    ]);
    return topic;
  }
}
