/**
 * The process environment, read once at cold start and validated. A missing variable fails loudly with its
 * name; nothing else in the code reads `process.env`.
 */

export class MissingEnvironmentError extends Error {
  constructor(name: string, why: string) {
    super(`environment variable ${name} is required (${why})`);
    this.name = 'MissingEnvironmentError';
  }
}

export type KeyStoreKind = 'secrets-manager' | 'file';

/** Custom SQL on Aurora MySQL through the RDS Data API (docs/interface.md §20, `SQL_ENGINE=aurora`). */
export interface AuroraSqlEngine {
  /** `SQL_CLUSTER_ARN`: the Aurora cluster, with the Data API on. */
  clusterArn: string;
  /** `SQL_DATABASE`: the database that holds the mirror's tables. */
  database: string;
  /** `SQL_QUERY_SECRET_ARN`: the query user's secret (SELECT on the mirror, CREATE TEMPORARY TABLES). */
  querySecretArn: string;
  /** `SQL_WRITER_SECRET_ARN`: the mirror writer's secret. */
  writerSecretArn: string;
}

export interface Environment {
  recordsTable: string;
  catalogTable: string;
  quotaTable: string;
  /** The change log's table (docs/interface.md §18); without it the feed answers that it is not configured. */
  eventsTable?: string;
  /**
   * How long after its position an event may still be written (`CHANGE_SETTLE_MS`, storage/event-store.ts): the
   * feed reads up to now − this. The change log's writer must be given the same value.
   */
  changeSettleMs?: number;
  /** The webhook deliveries' SQS FIFO queue (the change log's writer and the deliveries, in a deployment). */
  deliveryQueueUrl?: string;
  /**
   * The subscriptions with a delivery queue of their own (`WEBHOOK_QUEUES`, comma-separated ids;
   * changes/delivery-routes.ts); the others' deliveries go to `deliveryQueueUrl`, the overflow queue.
   */
  subscriptionQueues: readonly string[];
  /** Where deliveries given up on (parked) go. */
  parkedQueueUrl?: string;
  /** The SQS queue of folds of per-value totals (the change log's writer puts, the fold function takes). */
  foldQueueUrl?: string;
  keyStore: KeyStoreKind;
  /** `file` key store: the configuration file that holds local keys. */
  keyFile?: string;
  /** `secrets-manager` key store: secret name prefix; an application's secret is `<prefix>/apps/<appCode>`. */
  secretPrefix?: string;
  /** `secrets-manager` key store: the id of the deployment's default signing secret. */
  defaultSecretId?: string;
  /** Local runs: the DynamoDB endpoint (the embedded store, or any other given to `npm start`). */
  dynamodbEndpoint?: string;
  /** The region requests to `dynamodbEndpoint` are signed for (AWS_REGION; `local` without it). */
  dynamodbRegion?: string;
  /**
   * Whether AWS credentials are configured (AWS_ACCESS_KEY_ID or AWS_PROFILE). Without them, requests to
   * `dynamodbEndpoint` are signed with placeholder credentials, which emulators accept.
   */
  awsCredentialsConfigured: boolean;
  /**
   * Whether this is a Lambda function with active X-Ray tracing (the runtime sets AWS_XRAY_DAEMON_ADDRESS only
   * then): AWS clients then record a subsegment per call.
   */
  tracing: boolean;
  /** CloudWatch metric namespace of the request log. */
  metricNamespace: string;
  stage: string;
  /**
   * This process is the only one that writes the store (`SOLE_WRITER=true`, set by `npm start`): work an earlier
   * process left unfinished (a batch update, docs/batch-update.md) has no writer left and is finished at once.
   */
  soleWriter: boolean;
  /** Read units one get-list may spend before it answers 2001 (`LIST_READ_BUDGET`; the store's default without it). */
  listReadBudget?: number;
  /** Where custom SQL runs: absent (`SQL_ENGINE` unset or `embedded`), the embedded engine. */
  sqlEngine?: AuroraSqlEngine;
  /** Browser callers (pre-generated tokens): the origin allowed to read responses, e.g. `*` or `https://app.example.com`. */
  corsAllowOrigin?: string;
  /**
   * How long a container serves its copy of the catalog (`CATALOG_CACHE_MS`; 60 s without it). The local server
   * sets a second: its index jobs then wait seconds, not minutes, for every handler to serve a change.
   */
  catalogCacheMs?: number;
}

function required(env: NodeJS.ProcessEnv, name: string, why: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new MissingEnvironmentError(name, why);
  return value;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The region and credentials state of this process, for a client of a DynamoDB endpoint given by URL. */
export function endpointTarget(env: NodeJS.ProcessEnv = process.env): {
  region: string;
  credentialsConfigured: boolean;
} {
  return {
    region: optional(env, 'AWS_REGION') ?? 'local',
    credentialsConfigured:
      optional(env, 'AWS_ACCESS_KEY_ID') !== undefined || optional(env, 'AWS_PROFILE') !== undefined,
  };
}

/**
 * What the X-Ray SDK's main entry reads of the process when it loads (shared/aws/tracing.ts loads its parts
 * instead): whether this is a Lambda container (LAMBDA_TASK_ROOT), and the package that `npm run` started, if any.
 */
export function xrayProcessFacts(env: NodeJS.ProcessEnv = process.env): {
  lambda: boolean;
  npmPackageName?: string;
  npmPackageVersion?: string;
} {
  const name = optional(env, 'npm_package_name');
  const version = optional(env, 'npm_package_version');
  return {
    lambda: optional(env, 'LAMBDA_TASK_ROOT') !== undefined,
    ...(name ? { npmPackageName: name } : {}),
    ...(version ? { npmPackageVersion: version } : {}),
  };
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const keyStore = optional(env, 'KEY_STORE') ?? 'secrets-manager';
  if (keyStore !== 'secrets-manager' && keyStore !== 'file') {
    throw new MissingEnvironmentError('KEY_STORE', `'secrets-manager' or 'file', not '${keyStore}'`);
  }
  const result: Environment = {
    recordsTable: required(env, 'RECORDS_TABLE', 'the records table name'),
    catalogTable: required(env, 'CATALOG_TABLE', 'the catalog table name'),
    quotaTable: required(env, 'QUOTA_TABLE', 'the quota table name'),
    keyStore,
    metricNamespace: optional(env, 'METRIC_NAMESPACE') ?? 'DataAccessService',
    stage: optional(env, 'STAGE') ?? 'local',
    soleWriter: optional(env, 'SOLE_WRITER') === 'true',
    subscriptionQueues: (optional(env, 'WEBHOOK_QUEUES') ?? '').split(',').filter((id) => id !== ''),
    awsCredentialsConfigured: endpointTarget(env).credentialsConfigured,
    tracing:
      optional(env, 'AWS_LAMBDA_FUNCTION_NAME') !== undefined && optional(env, 'AWS_XRAY_DAEMON_ADDRESS') !== undefined,
  };
  if (keyStore === 'file') {
    result.keyFile = required(env, 'KEY_FILE', 'the configuration file with local keys, for KEY_STORE=file');
  } else {
    result.secretPrefix = required(env, 'SECRET_PREFIX', 'the prefix of application secrets');
    result.defaultSecretId = required(env, 'DEFAULT_SECRET_ID', 'the default signing secret');
  }
  const budget = optional(env, 'LIST_READ_BUDGET');
  if (budget !== undefined) {
    const units = Number(budget);
    if (!Number.isFinite(units) || units <= 0) {
      throw new MissingEnvironmentError('LIST_READ_BUDGET', `a positive number of read units, not '${budget}'`);
    }
    result.listReadBudget = units;
  }
  const cache = optional(env, 'CATALOG_CACHE_MS');
  if (cache !== undefined) {
    const ms = Number(cache);
    if (!Number.isInteger(ms) || ms <= 0) {
      throw new MissingEnvironmentError('CATALOG_CACHE_MS', `a positive whole number of milliseconds, not '${cache}'`);
    }
    result.catalogCacheMs = ms;
  }
  const eventsTable = optional(env, 'EVENTS_TABLE');
  if (eventsTable) result.eventsTable = eventsTable;
  const deliveryQueueUrl = optional(env, 'DELIVERY_QUEUE_URL');
  if (deliveryQueueUrl) result.deliveryQueueUrl = deliveryQueueUrl;
  const parkedQueueUrl = optional(env, 'PARKED_QUEUE_URL');
  if (parkedQueueUrl) result.parkedQueueUrl = parkedQueueUrl;
  const foldQueueUrl = optional(env, 'FOLD_QUEUE_URL');
  if (foldQueueUrl) result.foldQueueUrl = foldQueueUrl;
  const settle = optional(env, 'CHANGE_SETTLE_MS');
  if (settle !== undefined) {
    const ms = Number(settle);
    if (!Number.isInteger(ms) || ms < 0) {
      throw new MissingEnvironmentError('CHANGE_SETTLE_MS', `a whole number of milliseconds, not '${settle}'`);
    }
    result.changeSettleMs = ms;
  }
  const corsAllowOrigin = optional(env, 'CORS_ALLOW_ORIGIN');
  if (corsAllowOrigin) result.corsAllowOrigin = corsAllowOrigin;
  const sqlEngine = optional(env, 'SQL_ENGINE');
  if (sqlEngine !== undefined && sqlEngine !== 'embedded') {
    if (sqlEngine !== 'aurora') {
      throw new MissingEnvironmentError('SQL_ENGINE', `'aurora' or 'embedded', not '${sqlEngine}'`);
    }
    const why = (what: string) => `${what}, for SQL_ENGINE=aurora`;
    result.sqlEngine = {
      clusterArn: required(env, 'SQL_CLUSTER_ARN', why('the Aurora cluster ARN')),
      database: required(env, 'SQL_DATABASE', why("the mirror's database")),
      querySecretArn: required(env, 'SQL_QUERY_SECRET_ARN', why("the query user's secret ARN")),
      writerSecretArn: required(env, 'SQL_WRITER_SECRET_ARN', why("the mirror writer's secret ARN")),
    };
  }
  const endpoint = optional(env, 'DYNAMODB_ENDPOINT');
  if (endpoint) {
    result.dynamodbEndpoint = endpoint;
    result.dynamodbRegion = endpointTarget(env).region;
  }
  return result;
}

/** The environment of the index jobs' function (lib/index-builds.ts): the tables and the jobs' pace. */
export interface IndexJobEnvironment {
  recordsTable: string;
  catalogTable: string;
  metricNamespace: string;
  tracing: boolean;
  /** Writes a second one job may make, its segments together (`INDEX_BUILD_WRITES_PER_SECOND`). */
  writesPerSecond: number;
  /** Segments that run at once (`INDEX_BUILD_CONCURRENCY`: the state machine's map concurrency). */
  concurrency: number;
  /** At most this many segments per dataset (`INDEX_BUILD_MAX_SEGMENTS`). */
  maxSegments: number;
  dynamodbEndpoint?: string;
  dynamodbRegion?: string;
  awsCredentialsConfigured: boolean;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, why: string): number {
  const text = required(env, name, why);
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new MissingEnvironmentError(name, `a positive number, not '${text}'`);
  return value;
}

export function readIndexJobEnvironment(env: NodeJS.ProcessEnv = process.env): IndexJobEnvironment {
  const result: IndexJobEnvironment = {
    recordsTable: required(env, 'RECORDS_TABLE', 'the records table name'),
    catalogTable: required(env, 'CATALOG_TABLE', 'the catalog table name'),
    metricNamespace: optional(env, 'METRIC_NAMESPACE') ?? 'DataAccessService',
    tracing:
      optional(env, 'AWS_LAMBDA_FUNCTION_NAME') !== undefined && optional(env, 'AWS_XRAY_DAEMON_ADDRESS') !== undefined,
    writesPerSecond: positiveNumber(env, 'INDEX_BUILD_WRITES_PER_SECOND', 'the writes a second of one index job'),
    concurrency: positiveNumber(env, 'INDEX_BUILD_CONCURRENCY', 'the segments of an index job that run at once'),
    maxSegments: positiveNumber(env, 'INDEX_BUILD_MAX_SEGMENTS', 'the most segments of a dataset in an index job'),
    awsCredentialsConfigured: endpointTarget(env).credentialsConfigured,
  };
  const endpoint = optional(env, 'DYNAMODB_ENDPOINT');
  if (endpoint) {
    result.dynamodbEndpoint = endpoint;
    result.dynamodbRegion = endpointTarget(env).region;
  }
  return result;
}

let cached: Environment | undefined;

/** The environment of this container, read on first use. */
export function environment(): Environment {
  cached ??= readEnvironment();
  return cached;
}
