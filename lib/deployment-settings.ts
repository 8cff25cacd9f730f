/**
 * The deployment's knobs, read from CDK context (`-c key=value` or cdk.json) in one place and validated, so a
 * typo fails synth with a message instead of deploying something half-configured.
 */
import type { Node } from 'constructs';

export interface DeploymentSettings {
  /** Stage name: part of every stack, secret and dashboard name, so stages coexist in one account. */
  stage: string;
  /** The configuration file (applications, datasets, grants, queries) deployed to the catalog table. */
  configPath: string;
  /** Optional WAFv2 web ACL (REGIONAL scope) to associate with the API stage. */
  wafAclArn?: string;
  /** Optional existing SNS topic for alarm notifications. */
  alarmTopicArn?: string;
  /** Optional e-mail address: a topic is created and subscribed when no topic ARN is given. */
  alarmEmail?: string;
  /** CloudWatch namespace of the embedded-metric-format request metrics. */
  metricNamespace: string;
  /**
   * The origin allowed by CORS (`*` suits browser callers holding pre-generated tokens). One origin, because
   * the functions answer with one Access-Control-Allow-Origin value (CORS_ALLOW_ORIGIN).
   */
  corsAllowOrigin: string;
  /** Stage-wide API Gateway throttle (requests per second, steady and burst): a coarse shield above the per-application quotas. */
  throttleRateLimit: number;
  throttleBurstLimit: number;
  /** p99 API latency, in milliseconds, above which the latency alarm fires. */
  latencyAlarmP99Ms: number;
}

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
  const corsAllowOrigin = text(node, 'corsAllowOrigin') ?? '*';
  if (corsAllowOrigin !== '*' && !/^https?:\/\/[^\s/,]+$/.test(corsAllowOrigin)) {
    problems.push(`corsAllowOrigin: '${corsAllowOrigin}' must be '*' or one origin such as https://app.example.com`);
  }
  const settings: DeploymentSettings = {
    stage,
    configPath: text(node, 'config') ?? DEFAULT_CONFIG_PATH,
    metricNamespace: text(node, 'metricNamespace') ?? `DataAccessService/${stage}`,
    corsAllowOrigin,
    throttleRateLimit: positiveInteger(node, 'throttleRateLimit', 200, problems),
    throttleBurstLimit: positiveInteger(node, 'throttleBurstLimit', 400, problems),
    latencyAlarmP99Ms: positiveInteger(node, 'latencyAlarmP99Ms', 3000, problems),
  };
  if (wafAclArn !== undefined) settings.wafAclArn = wafAclArn;
  if (alarmTopicArn !== undefined) settings.alarmTopicArn = alarmTopicArn;
  if (alarmEmail !== undefined) settings.alarmEmail = alarmEmail;
  if (problems.length > 0) throw new DeploymentSettingsError(problems);
  return settings;
}
