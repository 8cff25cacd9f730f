/**
 * The deployment's knobs, read from CDK context (`-c key=value` or cdk.json) in one place and validated, so a
 * typo fails synth with a message instead of deploying something half-configured.
 */
import type { Node } from 'constructs';
import { operationRoutes } from '../shared/contract/client-routes';
import type { OperationName } from '../shared/contract/routes';

export interface DeploymentSettings {
  /** Stage name: part of every stack, secret and dashboard name, so stages coexist in one account. */
  stage: string;
  /** The configuration file (applications, datasets, grants, queries) deployed to the catalog table. */
  configPath: string;
  /**
   * Production settings (`-c production=true`, whatever the stage is called): an alarm target is required, logs,
   * tables and secrets are retained, tables have deletion protection, stacks have termination protection, and the
   * service's own web ACL is on by default.
   */
  production: boolean;
  /** Days CloudWatch keeps the functions' and the API's logs (default 180 in production, 14 otherwise). */
  logRetentionDays: number;
  /** Optional WAFv2 web ACL (REGIONAL scope) to associate with the API stage, instead of the service's own. */
  wafAclArn?: string;
  /** Whether the stack creates and associates the service's own web ACL (default: in production). */
  waf: boolean;
  /** The web ACL's rate-based rule: requests one IP address may send in 5 minutes before it is refused (4001). */
  wafRateLimitPer5Minutes: number;
  /** Per-method throttle of custom SQL (requests per second, steady and burst), below the stage-wide one. */
  sqlThrottleRateLimit: number;
  sqlThrottleBurstLimit: number;
  /**
   * Reserved concurrency of the execute-sql function (undefined: none). It caps how many SQL executions run at
   * once, so a runaway of slow queries cannot take the account concurrency the other operations need.
   */
  sqlReservedConcurrency?: number;
  /**
   * Provisioned concurrency by operation (absent: none anywhere). That many of the operation's containers are kept
   * initialised, so their requests never wait for a cold start: the function's init, and for an operation a
   * hook runs in, the sandbox's start (docs/hooks.md, "Cold start"). Requests beyond them start containers on demand.
   */
  provisionedConcurrency?: Partial<Record<OperationName, number>>;
  /** Whether a customer-managed KMS key encrypts the tables, secrets, logs and the alarm topic. */
  customerManagedKey: boolean;
  /** Authentication failures (1002 and 1003 answers) in 5 minutes that raise the auth-failure alarm. */
  authFailureAlarmThreshold: number;
  /** Optional existing SNS topic for alarm notifications. */
  alarmTopicArn?: string;
  /** Optional e-mail address: a topic is created and subscribed when no topic ARN is given. */
  alarmEmail?: string;
  /** CloudWatch namespace of the embedded-metric-format request metrics. */
  metricNamespace: string;
  /**
   * The origin allowed by CORS (`*` for browser callers holding pre-generated tokens, or one origin). One origin,
   * because the functions answer with one Access-Control-Allow-Origin value (CORS_ALLOW_ORIGIN). Without it a
   * deployment allows no cross-origin request: no preflight route, no Access-Control-Allow-Origin header.
   */
  corsAllowOrigin?: string;
  /** Stage-wide API Gateway throttle (requests per second, steady and burst): a coarse shield above the per-application quotas. */
  throttleRateLimit: number;
  throttleBurstLimit: number;
  /** p99 API latency, in milliseconds, above which the latency alarm fires. */
  latencyAlarmP99Ms: number;
  /**
   * Index jobs' writes a second, all segments together (`indexBuildWritesPerSecond`, default 250): a dataset's
   * records share one partition, which takes about 1,000 writes a second, and the API keeps the rest.
   */
  indexBuildWritesPerSecond: number;
  /** Segments of an index job that run at once (`indexBuildConcurrency`, default 8). */
  indexBuildConcurrency: number;
  /** The most segments one dataset is split into (`indexBuildMaxSegments`, default 64). */
  indexBuildMaxSegments: number;
  /**
   * Batches of one subscription's webhook deliveries the delivery function runs at once (`webhookConcurrency`,
   * 2 to 1,000, default 5): its queue's event source mapping's maximum concurrency.
   */
  webhookConcurrency: number;
  /**
   * Where custom SQL runs (`sqlEngine`, docs/interface.md §20): `aurora` (an Aurora MySQL Serverless v2 cluster
   * holding the mirror, called through the Data API; the default in production) or `embedded` (sql.js inside the
   * query functions; the default otherwise).
   */
  sqlEngine: SqlEngineChoice;
  /**
   * The cluster's least capacity in ACUs (`sqlMinCapacity`, default 0.5 in production, 0 otherwise): 0 lets it
   * pause when nothing reaches it (a query then waits for the resume within its limit).
   */
  sqlMinCapacity: number;
  /** The cluster's most capacity in ACUs (`sqlMaxCapacity`, default 16). */
  sqlMaxCapacity: number;
}

export type SqlEngineChoice = 'aurora' | 'embedded';

/** Aurora Serverless v2 capacity: 0 (auto-pause, Aurora MySQL 3.08 and later) or 0.5 to 256 ACUs in halves. */
const MAX_ACU = 256;

export const DEFAULT_STAGE = 'dev';
export const DEFAULT_CONFIG_PATH = 'config/demo.json';

const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}$/;

export class DeploymentSettingsError extends Error {
  constructor(problems: string[]) {
    super(`invalid CDK context:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'DeploymentSettingsError';
  }
}

function text(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
}

/** The retention periods CloudWatch Logs accepts, in days. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

function flag(node: Node, key: string, fallback: boolean, problems: string[]): boolean {
  const raw = text(node, key);
  if (raw === undefined) return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  problems.push(`${key}: must be true or false, not '${raw}'`);
  return fallback;
}

/** ACUs: a multiple of 0.5 from `least` to 256. */
function capacity(node: Node, key: string, fallback: number, least: number, problems: string[]): number {
  const raw = text(node, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < least || value > MAX_ACU || !Number.isInteger(value * 2)) {
    problems.push(`${key}: must be a number of ACUs from ${least} to ${MAX_ACU} in steps of 0.5, not '${raw}'`);
    return fallback;
  }
  return value;
}

function sqlEngineOf(node: Node, production: boolean, problems: string[]): SqlEngineChoice {
  const raw = text(node, 'sqlEngine');
  if (raw === undefined) return production ? 'aurora' : 'embedded';
  if (raw === 'aurora' || raw === 'embedded') return raw;
  problems.push(`sqlEngine: must be aurora or embedded, not '${raw}'`);
  return production ? 'aurora' : 'embedded';
}

function positiveInteger(node: Node, key: string, fallback: number, problems: string[]): number {
  const raw = text(node, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    problems.push(`${key}: must be a positive integer, not '${raw}'`);
    return fallback;
  }
  return value;
}

/**
 * Concurrent SQL executions a production stage reserves (and so caps): see docs/deploying.md, "Reserved
 * concurrency", for the sizing.
 */
export const DEFAULT_SQL_RESERVED_CONCURRENCY = 50;

/** A non-negative integer where 0 (or `none`) means "not set". */
function optionalInteger(
  node: Node,
  key: string,
  fallback: number | undefined,
  problems: string[],
): number | undefined {
  const raw = text(node, key);
  if (raw === undefined) return fallback;
  if (raw === 'none' || raw === '0') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    problems.push(`${key}: must be a positive integer, or none, not '${raw}'`);
    return fallback;
  }
  return value;
}

/**
 * `provisionedConcurrency`: `get-one=2,create=1` on the command line, or the same as an object in cdk.json
 * (`{ "get-one": 2 }`). Each operation once, each count a positive integer.
 */
function provisionedConcurrencyOf(node: Node, problems: string[]): Partial<Record<OperationName, number>> | undefined {
  const key = 'provisionedConcurrency';
  const raw: unknown = node.tryGetContext(key);
  if (raw === undefined || raw === null || raw === '' || raw === 'none') return undefined;
  const entries: [string, unknown][] =
    typeof raw === 'object'
      ? Object.entries(raw)
      : String(raw)
          .split(',')
          .map((part) => {
            const [name = '', count] = part.split('=').map((side) => side.trim());
            return [name, count];
          });
  const known = new Set<string>(operationRoutes().map((route) => route.operation));
  const result: Partial<Record<OperationName, number>> = {};
  for (const [name, count] of entries) {
    if (!known.has(name)) {
      problems.push(`${key}: '${name}' is not an operation (${[...known].join(', ')})`);
      continue;
    }
    if (name in result) {
      problems.push(`${key}: ${name} is given twice`);
      continue;
    }
    const value = Number(count);
    if (count === undefined || count === '' || !Number.isInteger(value) || value <= 0) {
      problems.push(`${key}: ${name} needs a positive integer, as in ${name}=2, not '${String(count ?? '')}'`);
      continue;
    }
    result[name as OperationName] = value;
  }
  return Object.keys(result).length > 0 ? result : undefined;
}

/** Read and check every context key the app understands; throws listing all problems at once. */
export function readDeploymentSettings(node: Node): DeploymentSettings {
  const problems: string[] = [];
  const stage = text(node, 'stage') ?? DEFAULT_STAGE;
  if (!STAGE_PATTERN.test(stage)) {
    problems.push(`stage: '${stage}' must be 1 to 20 lower-case letters, digits or '-', starting with a letter`);
  }
  const wafAclArn = text(node, 'wafAclArn');
  if (wafAclArn !== undefined && !/^arn:aws[a-z-]*:wafv2:[^:]+:\d{12}:regional\/webacl\//.test(wafAclArn)) {
    problems.push(`wafAclArn: '${wafAclArn}' is not the ARN of a REGIONAL WAFv2 web ACL`);
  }
  const alarmTopicArn = text(node, 'alarmTopicArn');
  if (alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:[^:]+:\d{12}:[\w-]+$/.test(alarmTopicArn)) {
    problems.push(`alarmTopicArn: '${alarmTopicArn}' is not an SNS topic ARN`);
  }
  const alarmEmail = text(node, 'alarmEmail');
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) {
    problems.push(`alarmEmail: '${alarmEmail}' is not an e-mail address`);
  }
  const corsAllowOrigin = text(node, 'corsAllowOrigin');
  if (corsAllowOrigin !== undefined && corsAllowOrigin !== '*' && !/^https?:\/\/[^\s/,]+$/.test(corsAllowOrigin)) {
    problems.push(`corsAllowOrigin: '${corsAllowOrigin}' must be '*' or one origin such as https://app.example.com`);
  }
  const production = flag(node, 'production', false, problems);
  if (production && alarmTopicArn === undefined && alarmEmail === undefined) {
    problems.push(
      'alarmEmail or alarmTopicArn: a production stage needs an alarm target, so that every alarm reaches someone ' +
        '(-c alarmEmail=oncall@example.com, or -c alarmTopicArn=<an existing SNS topic ARN>)',
    );
  }
  const logRetentionDays = positiveInteger(node, 'logRetentionDays', production ? 180 : 14, problems);
  if (!(LOG_RETENTION_DAYS as readonly number[]).includes(logRetentionDays)) {
    problems.push(
      `logRetentionDays: CloudWatch Logs keeps logs ${LOG_RETENTION_DAYS.join(', ')} days, not ${logRetentionDays}`,
    );
  }
  const waf = flag(node, 'waf', production && wafAclArn === undefined, problems);
  if (waf && wafAclArn !== undefined) {
    problems.push('waf: the service creates its own web ACL or associates wafAclArn, not both (set -c waf=false)');
  }
  const sqlReservedConcurrency = optionalInteger(
    node,
    'sqlReservedConcurrency',
    production ? DEFAULT_SQL_RESERVED_CONCURRENCY : undefined,
    problems,
  );
  const provisionedConcurrency = provisionedConcurrencyOf(node, problems);
  const provisionedSql = provisionedConcurrency?.['execute-sql'];
  if (provisionedSql !== undefined && sqlReservedConcurrency !== undefined && provisionedSql > sqlReservedConcurrency) {
    problems.push(
      `provisionedConcurrency: execute-sql=${provisionedSql} is more than its reserved concurrency ` +
        `(sqlReservedConcurrency ${sqlReservedConcurrency}); Lambda provisions at most what a function reserves`,
    );
  }
  const settings: DeploymentSettings = {
    stage,
    configPath: text(node, 'config') ?? DEFAULT_CONFIG_PATH,
    production,
    logRetentionDays,
    waf,
    wafRateLimitPer5Minutes: positiveInteger(node, 'wafRateLimitPer5Minutes', 6000, problems),
    metricNamespace: text(node, 'metricNamespace') ?? `DataAccessService/${stage}`,
    throttleRateLimit: positiveInteger(node, 'throttleRateLimit', 200, problems),
    throttleBurstLimit: positiveInteger(node, 'throttleBurstLimit', 400, problems),
    sqlThrottleRateLimit: positiveInteger(node, 'sqlThrottleRateLimit', 20, problems),
    sqlThrottleBurstLimit: positiveInteger(node, 'sqlThrottleBurstLimit', 40, problems),
    customerManagedKey: flag(node, 'customerManagedKey', false, problems),
    latencyAlarmP99Ms: positiveInteger(node, 'latencyAlarmP99Ms', 3000, problems),
    authFailureAlarmThreshold: positiveInteger(node, 'authFailureAlarmThreshold', 100, problems),
    indexBuildWritesPerSecond: positiveInteger(node, 'indexBuildWritesPerSecond', 250, problems),
    indexBuildConcurrency: positiveInteger(node, 'indexBuildConcurrency', 8, problems),
    indexBuildMaxSegments: positiveInteger(node, 'indexBuildMaxSegments', 64, problems),
    webhookConcurrency: positiveInteger(node, 'webhookConcurrency', 5, problems),
    sqlEngine: sqlEngineOf(node, production, problems),
    sqlMinCapacity: capacity(node, 'sqlMinCapacity', production ? 0.5 : 0, 0, problems),
    sqlMaxCapacity: capacity(node, 'sqlMaxCapacity', 16, 1, problems),
  };
  if (settings.webhookConcurrency < 2 || settings.webhookConcurrency > 1000) {
    problems.push(
      `webhookConcurrency: an event source mapping's maximum concurrency is 2 to 1000, not ${settings.webhookConcurrency}`,
    );
  }
  if (settings.sqlMinCapacity > settings.sqlMaxCapacity) {
    problems.push(
      `sqlMinCapacity: ${settings.sqlMinCapacity} ACUs is more than sqlMaxCapacity (${settings.sqlMaxCapacity})`,
    );
  }
  if (settings.wafRateLimitPer5Minutes < 10) {
    problems.push('wafRateLimitPer5Minutes: WAF counts from 10 requests per 5 minutes upwards');
  }
  if (sqlReservedConcurrency !== undefined) settings.sqlReservedConcurrency = sqlReservedConcurrency;
  if (provisionedConcurrency !== undefined) settings.provisionedConcurrency = provisionedConcurrency;
  if (corsAllowOrigin !== undefined) settings.corsAllowOrigin = corsAllowOrigin;
  if (wafAclArn !== undefined) settings.wafAclArn = wafAclArn;
  if (alarmTopicArn !== undefined) settings.alarmTopicArn = alarmTopicArn;
  if (alarmEmail !== undefined) settings.alarmEmail = alarmEmail;
  if (problems.length > 0) throw new DeploymentSettingsError(problems);
  return settings;
}
