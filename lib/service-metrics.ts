/**
 * The metrics the dashboard and the alarms share: Lambda, API Gateway and DynamoDB metrics of this stage, and
 * the business metrics the request log publishes in CloudWatch embedded metric format (docs/interface.md §11).
 * Defined once so an alarm watches exactly the line the dashboard draws.
 */
import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { ErrorCode } from '../shared/contract/errors';
import { ERROR_CODE_DIMENSION, INDEX_BUILD_METRICS } from '../shared/observability/request-log';
import type { OperationFunction } from './operation-function';

export const METRIC_PERIOD = Duration.minutes(5);

/** Error codes the auth step answers with (docs/interface.md §3): signature, timestamp, unknown application. */
export const AUTH_FAILURE_CODES = [
  ErrorCode.SignatureMismatch,
  ErrorCode.TimestampExpired,
  ErrorCode.ApplicationNotFound,
] as const;

export interface ServiceMetricSources {
  metricNamespace: string;
  operations: readonly OperationFunction[];
  api: RestApi;
  tables: ReadonlyArray<{ label: string; table: ITable }>;
}

/** A request-log metric; its dimensions are the ones the request log writes (`operation`, and `code` on errors). */
export function businessMetric(
  namespace: string,
  metricName: string,
  dimensions: Record<string, string>,
  statistic: string,
  label: string,
): Metric {
  return new Metric({ namespace, metricName, dimensionsMap: dimensions, statistic, period: METRIC_PERIOD, label });
}

/**
 * The sum of several metrics as one line. `idPrefix` keeps the metric ids of several sums in one graph apart
 * (CloudWatch ids must be unique per graph and start with a lower-case letter).
 */
export function sumOf(metrics: readonly Metric[], label: string, idPrefix = 'm'): MathExpression {
  const usingMetrics = Object.fromEntries(metrics.map((metric, i) => [`${idPrefix}${i}`, metric]));
  return new MathExpression({
    expression: Object.keys(usingMetrics).join(' + '),
    usingMetrics,
    label,
    period: METRIC_PERIOD,
  });
}

/** API Gateway 5xx responses as a percentage of requests (0 when there were none). */
export function apiServerErrorRate(api: RestApi): MathExpression {
  const stage = api.deploymentStage;
  return new MathExpression({
    expression: 'IF(requests > 0, 100 * serverErrors / requests, 0)',
    usingMetrics: {
      requests: stage.metricCount({ statistic: 'Sum', period: METRIC_PERIOD }),
      serverErrors: stage.metricServerError({ statistic: 'Sum', period: METRIC_PERIOD }),
    },
    label: '5xx rate (%)',
    period: METRIC_PERIOD,
  });
}

export function lambdaThrottles(operations: readonly OperationFunction[]): MathExpression {
  return sumOf(
    operations.map((op) => op.function.metricThrottles({ statistic: 'Sum', period: METRIC_PERIOD })),
    'Lambda throttles (all operations)',
  );
}

/** Error codes of a failed signature or timestamp (docs/interface.md §3): a spike means a leaked or brute-forced key, or a skewed client clock. */
export const CREDENTIAL_FAILURE_CODES = [ErrorCode.SignatureMismatch, ErrorCode.TimestampExpired] as const;

/**
 * 1002 and 1003 answers of every operation, summed: the request log's `errors` metric by code alone, so the alarm
 * reads two series whatever the number of operations (an alarm may read at most 10).
 */
export function credentialFailures(namespace: string): MathExpression {
  return sumOf(
    CREDENTIAL_FAILURE_CODES.map((code) =>
      businessMetric(namespace, 'errors', { [ERROR_CODE_DIMENSION]: String(code) }, 'Sum', ''),
    ),
    'Authentication failures (1002, 1003)',
    'cred',
  );
}

/**
 * Read and write throttle events of the records table's generic indexes. A throttled index also throttles the
 * base table's writes (DynamoDB back-pressure), so an index that runs hot shows here first, by name.
 */
export function indexThrottles(table: ITable, indexNames: readonly string[]): MathExpression {
  return sumOf(
    indexNames.flatMap((indexName) =>
      ['ReadThrottleEvents', 'WriteThrottleEvents'].map(
        (metricName) =>
          new Metric({
            namespace: 'AWS/DynamoDB',
            metricName,
            dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
            statistic: 'Sum',
            period: METRIC_PERIOD,
          }),
      ),
    ),
    'DynamoDB index throttle events (records table)',
    'gsi',
  );
}

export function tableThrottles(tables: ServiceMetricSources['tables']): MathExpression {
  return sumOf(
    tables.flatMap(({ table }) => [
      table.metric('ReadThrottleEvents', { statistic: 'Sum', period: METRIC_PERIOD }),
      table.metric('WriteThrottleEvents', { statistic: 'Sum', period: METRIC_PERIOD }),
    ]),
    'DynamoDB throttle events (all tables)',
  );
}

/** An index job metric (request-log.ts, `logIndexJobWork`): published without dimensions. */
export function indexBuildMetric(
  namespace: string,
  name: keyof typeof INDEX_BUILD_METRICS,
  statistic: string,
  label: string,
  period = METRIC_PERIOD,
): Metric {
  return new Metric({ namespace, metricName: INDEX_BUILD_METRICS[name], statistic, period, label });
}

/** Records the index jobs processed per second, over each period. */
export function indexBuildRate(namespace: string): MathExpression {
  return new MathExpression({
    expression: 'FILL(records, 0) / PERIOD(records)',
    usingMetrics: { records: indexBuildMetric(namespace, 'records', 'Sum', '') },
    label: 'records per second',
    period: METRIC_PERIOD,
  });
}

/** How long index work may go without a record processed before the stalled-build alarm counts a period. */
export const INDEX_BUILD_STALL_PERIOD = Duration.minutes(15);

/**
 * 1 in a period where indexes were still pending (the last `next` said so) and no index job processed a record:
 * a build or a drop that stopped making progress. Waits between steps are minutes at most, so a whole period
 * without a record is a job that is failing or gone.
 */
export function indexBuildStalled(namespace: string): MathExpression {
  return new MathExpression({
    expression: 'IF(FILL(pending, REPEAT) > 0 AND FILL(records, 0) == 0, 1, 0)',
    usingMetrics: {
      pending: indexBuildMetric(namespace, 'pending', 'Maximum', '', INDEX_BUILD_STALL_PERIOD),
      records: indexBuildMetric(namespace, 'records', 'Sum', '', INDEX_BUILD_STALL_PERIOD),
    },
    label: 'index work pending without progress',
    period: INDEX_BUILD_STALL_PERIOD,
  });
}

/** Runs of the index jobs' state machine that ended failed, timed out or aborted. */
export function indexBuildRunsFailed(stateMachine: IStateMachine): MathExpression {
  return sumOf(
    [
      stateMachine.metricFailed({ statistic: 'Sum', period: METRIC_PERIOD }),
      stateMachine.metricTimedOut({ statistic: 'Sum', period: METRIC_PERIOD }),
      stateMachine.metricAborted({ statistic: 'Sum', period: METRIC_PERIOD }),
    ],
    'index job runs failed, timed out or aborted',
    'sfn',
  );
}
