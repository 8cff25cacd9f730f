/**
 * A function of the service's own machinery (the change log's writer, deliveries and folds; the custom SQL mirror):
 * a log group and a role of its own whose first statement writes that log group, the runtime, tracing and bundling
 * every function shares, and the tables and key store every function reads from its environment. Callers add the
 * actions it needs to the role and the variables of their own to the environment.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { FUNCTION_BUNDLING } from './operation-function';
import type { StatefulResources } from './stateful-stack';

export interface BackgroundFunctionProps {
  stage: string;
  projectRoot: string;
  resources: StatefulResources;
  metricNamespace: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  encryptionKey?: IKey;
}

/** `name` is the function's construct id in `scope` (its log group and role are `<name>Logs`, `<name>Role`). */
export function backgroundFunction(
  scope: Construct,
  props: BackgroundFunctionProps,
  fn: { name: string; description: string; entry: string; timeout: Duration; environment?: Record<string, string> },
): { fn: NodejsFunction; role: Role } {
  const logGroup = new LogGroup(scope, `${fn.name}Logs`, {
    retention: props.logRetention,
    removalPolicy: props.logRemovalPolicy,
    ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
  });
  const role = new Role(scope, `${fn.name}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `${props.stage} ${fn.description}: exactly the actions it needs`,
  });
  role.addToPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  const { resources } = props;
  const created = new NodejsFunction(scope, fn.name, {
    description: `${props.stage}: ${fn.description}`,
    entry: `${props.projectRoot}/functions/${fn.entry}.ts`,
    handler: 'handler',
    projectRoot: props.projectRoot,
    depsLockFilePath: `${props.projectRoot}/package-lock.json`,
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: 512,
    timeout: fn.timeout,
    tracing: Tracing.ACTIVE,
    role,
    logGroup,
    loggingFormat: LoggingFormat.JSON,
    environment: {
      RECORDS_TABLE: resources.tables.records.tableName,
      CATALOG_TABLE: resources.tables.catalog.tableName,
      QUOTA_TABLE: resources.tables.quota.tableName,
      EVENTS_TABLE: resources.tables.events.tableName,
      KEY_STORE: 'secrets-manager',
      SECRET_PREFIX: resources.secretPrefix,
      DEFAULT_SECRET_ID: resources.defaultSecretName,
      ...fn.environment,
      METRIC_NAMESPACE: props.metricNamespace,
      STAGE: props.stage,
      NODE_OPTIONS: '--enable-source-maps',
    },
    bundling: FUNCTION_BUNDLING,
  });
  return { fn: created, role };
}
