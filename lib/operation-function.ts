/**
 * The project construct for one API operation's Lambda: fixes runtime, architecture, memory, timeout, tracing,
 * logging and bundling in one place, and grants exactly the table and secret actions that operation needs —
 * nothing from the CDK's broad `grantReadWriteData` helpers, so a read-only operation cannot write a record
 * even if its code is wrong.
 */
import path from 'node:path';
import { ArnFormat, type Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Alias, Architecture, type IFunction, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, type ICommandHooks, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RouteDefinition } from '../shared/contract/routes';
import { DATASET_META_PREFIX } from '../shared/storage/item-keys';
import { FEED_INDEX } from '../shared/storage/table-definitions';
import { acknowledge } from './nag-acknowledgements';
import type { TableResource } from './stateful-stack';

/**
 * A file placed next to a function's bundle after esbuild ran: copied (e.g. sql.js's `sql-wasm.wasm`), or, with
 * `bundle`, an entry of its own that esbuild bundles into that one file (e.g. the hook sandbox's worker thread,
 * which must not weigh on the function's own bundle).
 */
export interface BundleAsset {
  /** Absolute path of the file to copy, or of the entry to bundle. */
  from: string;
  /** File name inside the bundle directory, where the code looks for it (`__dirname`). */
  to: string;
  /** Bundle `from` (with its imports, minified, CommonJS for Node.js 22) instead of copying it. */
  bundle?: boolean;
}

export interface OperationTables {
  records: TableResource;
  catalog: TableResource;
  quota: TableResource;
  /** The change log: the feed reads it. */
  events: TableResource;
}

export interface OperationSecrets {
  /** Application secrets are `<prefix>/apps/<appCode>`. */
  prefix: string;
  applicationSecretNames: readonly string[];
  defaultSecretName: string;
}

export interface OperationFunctionProps {
  route: RouteDefinition;
  /** The TypeScript entry (`functions/<functionFile>.ts`). */
  entry: string;
  /** Repository root: esbuild resolves modules from here and the lockfile pins them. */
  projectRoot: string;
  stage: string;
  tables: OperationTables;
  secrets: OperationSecrets;
  metricNamespace: string;
  /** The origin browsers may read responses from (the functions set Access-Control-Allow-Origin); none without it. */
  corsAllowOrigin?: string;
  memorySize: number;
  /** Must stay under API Gateway's 29 s integration limit, or the caller sees a gateway timeout first. */
  timeout: Duration;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  /** The stage's customer-managed key: encrypts the log group, and the secrets the function reads. */
  encryptionKey?: IKey;
  /** Reserved concurrency: at most this many invocations at once, and that many always available. */
  reservedConcurrentExecutions?: number;
  /**
   * Provisioned concurrency: that many containers kept initialised, behind the alias `live` (a version published
   * on each deploy), which the API then invokes. None by default.
   */
  provisionedConcurrentExecutions?: number;
  extraAssets?: readonly BundleAsset[];
  /** Custom SQL on Aurora: the cluster this operation queries through the Data API, as the SELECT-only user. */
  sql?: QueryCluster;
}

/**
 * What a function that runs custom SQL on Aurora is given: the cluster, its database and the query user's secret,
 * which it may read. The writer's secret ARN is named in its environment too (the environment describes the whole
 * engine), but its role may not read that secret.
 */
export interface QueryCluster {
  clusterArn: string;
  database: string;
  querySecretArn: string;
  writerSecretArn: string;
}

/**
 * The Data API's calls a query makes, on one cluster: its statements, in a transaction of its own that pins one
 * database session (for KILL QUERY and a large result's temporary table) and is always rolled back; nothing that
 * commits or batches writes.
 */
export const SQL_QUERY_ACTIONS = [
  'rds-data:ExecuteStatement',
  'rds-data:BeginTransaction',
  'rds-data:RollbackTransaction',
];

/** The alias the API invokes when an operation has provisioned concurrency (it is set on an alias, not a function). */
export const PROVISIONED_ALIAS = 'live';

/** API Gateway REST's hard integration timeout. */
const API_GATEWAY_TIMEOUT_SECONDS = 29;

/** Reads every operation performs: records by key and by index, the catalog item, nothing else. */
const RECORD_QUERY_ACTIONS = ['dynamodb:Query'];
const RECORD_GET_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:GetItem'];
/** Writes only create and update perform: a put for a new record, a conditional update for a change or a counter. */
const RECORD_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** A shell-quoted argument for the afterBundling commands (which run through a shell). */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The project's esbuild (the one the CDK bundles with), run directly: a native binary or its Node.js launcher. */
function esbuildBinary(): string {
  return path.join(path.dirname(require.resolve('esbuild/package.json')), 'bin', 'esbuild');
}

function assetCommand(asset: BundleAsset, outputDir: string): string {
  const target = shellQuote(`${outputDir}/${asset.to}`);
  if (!asset.bundle) return `cp ${shellQuote(asset.from)} ${target}`;
  return [
    shellQuote(esbuildBinary()),
    shellQuote(asset.from),
    '--bundle',
    '--platform=node',
    `--target=${FUNCTION_BUNDLING.target}`,
    '--format=cjs',
    '--minify',
    '--main-fields=module,main',
    '--log-level=warning',
    `--outfile=${target}`,
  ].join(' ');
}

function copyAssetsHooks(assets: readonly BundleAsset[]): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => assets.map((asset) => assetCommand(asset, outputDir)),
  };
}

/** How every function of the service is bundled (the operations and the catalog deployer alike). */
export const FUNCTION_BUNDLING = {
  format: OutputFormat.CJS,
  target: 'node22',
  minify: true,
  sourceMap: true,
  // The map only has to translate positions; the sources themselves would double the asset for nothing.
  sourcesContent: false,
  // The Node.js 22 runtime ships the AWS SDK v3: bundling it would add megabytes and cold-start time.
  externalModules: ['@aws-sdk/*'],
  bundleAwsSDK: false,
  // Prefer ES module entry points so esbuild can drop unused exports.
  mainFields: ['module', 'main'],
} satisfies BundlingOptions;

export class OperationFunction extends Construct {
  readonly function: NodejsFunction;
  /** With provisioned concurrency, the alias that carries it; what the API invokes is `target`. */
  readonly alias?: Alias;
  /** What the API invokes: the alias with provisioned concurrency, or the function itself. */
  readonly target: IFunction;
  readonly logGroup: LogGroup;
  readonly route: RouteDefinition;

  constructor(scope: Construct, id: string, props: OperationFunctionProps) {
    super(scope, id);
    if (props.timeout.toSeconds() >= API_GATEWAY_TIMEOUT_SECONDS) {
      throw new Error(
        `${props.route.operation}: timeout ${props.timeout.toSeconds()} s must be under API Gateway's ${API_GATEWAY_TIMEOUT_SECONDS} s`,
      );
    }
    this.route = props.route;
    const stack = Stack.of(this);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    });

    // An explicit role instead of the default one: the default attaches the AWSLambdaBasicExecutionRole managed
    // policy (logs:* on every log group); this one may write to its own log group only.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.stage} ${props.route.operation}: exactly the actions this operation needs`,
    });
    role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    const tableArn = (table: TableResource): string =>
      stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: table.tableName });
    // Secrets Manager appends '-' and six random characters to a secret's name in its ARN.
    const secretArn = (name: string): string =>
      stack.formatArn({
        service: 'secretsmanager',
        resource: 'secret',
        resourceName: `${name}-??????`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    const records = tableArn(props.tables.records);
    // Each generic index by name rather than index/*: the shared definitions say exactly which exist.
    const recordIndexes = props.tables.records.definition.globalSecondaryIndexes.map(
      (index) => `${records}/index/${index.indexName}`,
    );
    if (props.route.readsRecords !== false) {
      role.addToPolicy(new PolicyStatement({ actions: RECORD_QUERY_ACTIONS, resources: [records, ...recordIndexes] }));
      role.addToPolicy(new PolicyStatement({ actions: RECORD_GET_ACTIONS, resources: [records] }));
    }
    if (props.route.writes) {
      role.addToPolicy(
        new PolicyStatement({
          actions: props.route.batchWrites
            ? [...RECORD_WRITE_ACTIONS, 'dynamodb:BatchWriteItem']
            : RECORD_WRITE_ACTIONS,
          resources: [records],
        }),
      );
      // A single write whose record write did not happen withdraws the change item it claimed first (a `meta#`
      // item); a batch says which of its records exist instead (an update), so it deletes nothing.
      if (!props.route.batchWrites)
        role.addToPolicy(
          new PolicyStatement({
            actions: ['dynamodb:DeleteItem'],
            resources: [records],
            conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${DATASET_META_PREFIX}*`] } },
          }),
        );
    } else if (props.route.writesDatasetMeta) {
      // A read-only operation that keeps a dataset's bookkeeping: the record-count checkpoint, and per-value
      // totals when a list meets change items left unchecked or unfolded (it withdraws claims whose writes never
      // happened, takes the fold's lease, writes count pages and their list). `meta#` items only, never a record.
      role.addToPolicy(
        new PolicyStatement({
          actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
          resources: [records],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${DATASET_META_PREFIX}*`] } },
        }),
      );
    }
    if (props.route.readsChangeLog) {
      // The feed: a Query of the feed index per dataset, and the pieces of an event too large for one item.
      const events = tableArn(props.tables.events);
      role.addToPolicy(
        new PolicyStatement({
          actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
          resources: [events, `${events}/index/${FEED_INDEX.indexName}`],
        }),
      );
    }
    role.addToPolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [tableArn(props.tables.catalog)] }),
    );
    // One conditional UpdateItem admits a request and adds a lease; another removes the lease (architecture: quotas).
    role.addToPolicy(
      new PolicyStatement({ actions: ['dynamodb:UpdateItem'], resources: [tableArn(props.tables.quota)] }),
    );
    // Each application's secret by name: an application that is not deployed has no secret to read. A function
    // with no signed path (client-key mode only) verifies no signature and reads no secret.
    if (props.route.mode !== 'client') {
      role.addToPolicy(
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [...props.secrets.applicationSecretNames, props.secrets.defaultSecretName].map(secretArn),
        }),
      );
      if (props.encryptionKey) {
        // Secrets under a customer-managed key are decrypted with the caller's permission, through Secrets Manager only.
        role.addToPolicy(
          new PolicyStatement({
            actions: ['kms:Decrypt'],
            resources: [props.encryptionKey.keyArn],
            conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${stack.region}.amazonaws.com` } },
          }),
        );
      }
    }

    if (props.sql) {
      // The Data API runs a statement with the caller's IAM permission on the cluster and reads the database
      // user's secret with the caller's permission too: only the query user's secret, never the writer's.
      role.addToPolicy(new PolicyStatement({ actions: SQL_QUERY_ACTIONS, resources: [props.sql.clusterArn] }));
      role.addToPolicy(
        new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [props.sql.querySecretArn] }),
      );
      if (props.encryptionKey && props.route.mode === 'client') {
        role.addToPolicy(
          new PolicyStatement({
            actions: ['kms:Decrypt'],
            resources: [props.encryptionKey.keyArn],
            conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${stack.region}.amazonaws.com` } },
          }),
        );
      }
    }

    this.function = new NodejsFunction(this, 'Function', {
      description: `${props.stage}: ${props.route.method} ${props.route.path} (${props.route.operation})`,
      entry: props.entry,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      ...(props.reservedConcurrentExecutions
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      tracing: Tracing.ACTIVE,
      role,
      logGroup: this.logGroup,
      // The handlers already write one JSON line per request; JSON format keeps Lambda's own lines parseable too.
      loggingFormat: LoggingFormat.JSON,
      environment: {
        RECORDS_TABLE: props.tables.records.tableName,
        CATALOG_TABLE: props.tables.catalog.tableName,
        QUOTA_TABLE: props.tables.quota.tableName,
        ...(props.route.readsChangeLog ? { EVENTS_TABLE: props.tables.events.tableName } : {}),
        KEY_STORE: 'secrets-manager',
        SECRET_PREFIX: props.secrets.prefix,
        DEFAULT_SECRET_ID: props.secrets.defaultSecretName,
        METRIC_NAMESPACE: props.metricNamespace,
        STAGE: props.stage,
        ...(props.corsAllowOrigin ? { CORS_ALLOW_ORIGIN: props.corsAllowOrigin } : {}),
        ...(props.sql
          ? {
              SQL_ENGINE: 'aurora',
              SQL_CLUSTER_ARN: props.sql.clusterArn,
              SQL_DATABASE: props.sql.database,
              SQL_QUERY_SECRET_ARN: props.sql.querySecretArn,
              SQL_WRITER_SECRET_ARN: props.sql.writerSecretArn,
            }
          : {}),
        // Stack traces in the log point at the TypeScript sources (the bundle ships a source map).
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        ...FUNCTION_BUNDLING,
        ...(props.extraAssets && props.extraAssets.length > 0
          ? { commandHooks: copyAssetsHooks(props.extraAssets) }
          : {}),
      },
    });

    if (props.provisionedConcurrentExecutions) {
      // Provisioned concurrency belongs to a version: each deploy publishes one (when the code or configuration
      // changed) and moves the alias to it, and Lambda initialises that many containers before the alias serves.
      this.alias = new Alias(this, 'Live', {
        aliasName: PROVISIONED_ALIAS,
        version: this.function.currentVersion,
        provisionedConcurrentExecutions: props.provisionedConcurrentExecutions,
      });
    }
    this.target = this.alias ?? this.function;

    // On this construct: the IAM5 finding is on the role's policy, the L1 finding on the function.
    acknowledge(this, [
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only X-Ray (tracing: active) is granted on "*": xray:PutTraceSegments and xray:PutTelemetryRecords ' +
          'have no resource-level permissions. Every table, index and secret is listed by name.',
      },
      {
        id: 'AwsSolutions-L1',
        reason:
          'Node.js 22 is the runtime the design fixes for the service (and the one the tests run on); moving to a ' +
          'newer runtime is a deliberate upgrade, not a side effect of a CDK release.',
      },
    ]);
  }
}
