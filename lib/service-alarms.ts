/**
 * The stage's alarms: server errors as a share of requests, throttling (Lambda, DynamoDB tables and the records
 * table's indexes), a spike of authentication failures, and p99 latency as callers see it. Each notifies the SNS
 * topic on alarm and on recovery (a production stage cannot synthesize without one).
 */
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  type IMetric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  apiServerErrorRate,
  credentialFailures,
  INDEX_BUILD_STALL_PERIOD,
  indexBuildRunsFailed,
  indexBuildStalled,
  indexThrottles,
  lambdaThrottles,
  METRIC_PERIOD,
  type ServiceMetricSources,
  tableThrottles,
} from './service-metrics';

/** Indexes watched by one alarm: two metrics each (read and write throttles), within CloudWatch's 10 per alarm. */
const INDEXES_PER_ALARM = 5;
/** Operation functions watched by one throttle alarm: one metric each, within CloudWatch's 10 per alarm. */
const FUNCTIONS_PER_ALARM = 10;
export interface ServiceAlarmsProps extends ServiceMetricSources {
  stage: string;
  latencyAlarmP99Ms: number;
  /** 1002 and 1003 answers in one 5-minute period that raise the authentication-failure alarm. */
  authFailureAlarmThreshold: number;
  /** The records table's generic indexes, watched by name for throttling. */
  recordIndexNames: readonly string[];
  /** The index jobs' state machine: its failed runs, and pending work without progress, raise alarms. */
  indexBuilds?: IStateMachine;
  topic?: ITopic;
}

/** Percentage of API requests answered 5xx, over 5 minutes, that is worth waking someone for. */
export const SERVER_ERROR_RATE_THRESHOLD_PERCENT = 1;

export class ServiceAlarms extends Construct {
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    const prefix = `data-access-service-${props.stage}`;
    const action: IAlarmAction | undefined = props.topic ? new SnsAction(props.topic) : undefined;
    const add = (
      alarmId: string,
      slug: string,
      metric: IMetric,
      threshold: number,
      description: string,
      datapoints: { evaluationPeriods: number; datapointsToAlarm: number },
    ): void => {
      const alarm = new Alarm(this, alarmId, {
        alarmName: `${prefix}-${slug}`,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: datapoints.evaluationPeriods,
        datapointsToAlarm: datapoints.datapointsToAlarm,
        // No traffic is not a failure.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (action) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
      this.alarms.push(alarm);
    };

    add(
      'Api5xxRate',
      'api-5xx-rate',
      apiServerErrorRate(props.api),
      SERVER_ERROR_RATE_THRESHOLD_PERCENT,
      `At least ${SERVER_ERROR_RATE_THRESHOLD_PERCENT}% of API requests answered 5xx (3001 or gateway failures) in 2 of the last 3 periods of ${METRIC_PERIOD.toMinutes()} minutes.`,
      { evaluationPeriods: 3, datapointsToAlarm: 2 },
    );
    // An alarm may read at most 10 metrics: one alarm per 10 operation functions.
    for (let start = 0; start < props.operations.length; start += FUNCTIONS_PER_ALARM) {
      const suffix = start === 0 ? '' : `-${start / FUNCTIONS_PER_ALARM + 1}`;
      add(
        `LambdaThrottles${suffix}`,
        `lambda-throttles${suffix}`,
        lambdaThrottles(props.operations.slice(start, start + FUNCTIONS_PER_ALARM)),
        1,
        'An operation function was throttled (account or reserved concurrency exhausted): callers got 5xx.',
        { evaluationPeriods: 1, datapointsToAlarm: 1 },
      );
    }
    add(
      'DynamoDbThrottles',
      'dynamodb-throttles',
      tableThrottles(props.tables),
      1,
      'A table or index throttled reads or writes (hot dataset partition or on-demand limit): see "Throttle events by table".',
      { evaluationPeriods: 1, datapointsToAlarm: 1 },
    );
    const records = props.tables.find(({ label }) => label === 'records');
    if (records) {
      // An alarm may read at most 10 metrics, two per index: one alarm per 5 indexes (the generic gsi1…gsi5, then
      // the count index).
      for (let start = 0; start < props.recordIndexNames.length; start += INDEXES_PER_ALARM) {
        const names = props.recordIndexNames.slice(start, start + INDEXES_PER_ALARM);
        const suffix = start === 0 ? '' : `-${start / INDEXES_PER_ALARM + 1}`;
        add(
          `DynamoDbIndexThrottles${suffix}`,
          `dynamodb-index-throttles${suffix}`,
          indexThrottles(records.table, names),
          1,
          `An index of the records table (${names.join(', ')}) throttled: a hot indexed value or filter, or a burst ` +
            'of creates; writes to the table slow down with it. See "Throttle events by table" and the index ' +
            'metrics in the DynamoDB console.',
          { evaluationPeriods: 1, datapointsToAlarm: 1 },
        );
      }
    }
    add(
      'AuthFailureSpike',
      'auth-failures',
      credentialFailures(props.metricNamespace),
      props.authFailureAlarmThreshold,
      `At least ${props.authFailureAlarmThreshold} requests answered 1002 (signature) or 1003 (timestamp) in ` +
        `${METRIC_PERIOD.toMinutes()} minutes: a guessed or leaked key, a client signing with a rotated key, or a ` +
        'skewed client clock. See "Authentication failures by code" and the request log by appCode.',
      { evaluationPeriods: 1, datapointsToAlarm: 1 },
    );
    if (props.indexBuilds) {
      add(
        'IndexBuildStalled',
        'index-build-stalled',
        indexBuildStalled(props.metricNamespace),
        1,
        `Indexes are being built or dropped but no index job processed a record in 2 consecutive periods of ` +
          `${INDEX_BUILD_STALL_PERIOD.toMinutes()} minutes: see "Index builds" on the dashboard and the index ` +
          "job function's log (errorMessage); das indexes shows where each build stands.",
        { evaluationPeriods: 2, datapointsToAlarm: 2 },
      );
      add(
        'IndexBuildRunFailed',
        'index-build-failed',
        indexBuildRunsFailed(props.indexBuilds),
        1,
        'A run of the index jobs state machine failed, timed out or was aborted: builds stop until the next deploy ' +
          'or a redrive of the run (docs/deploying.md, "Index builds"); their progress is kept.',
        { evaluationPeriods: 1, datapointsToAlarm: 1 },
      );
    }
    add(
      'ApiLatencyP99',
      'api-latency-p99',
      props.api.deploymentStage.metricLatency({ statistic: 'p99', period: METRIC_PERIOD }),
      props.latencyAlarmP99Ms,
      `API p99 latency at or above ${props.latencyAlarmP99Ms} ms in 3 consecutive periods of ${METRIC_PERIOD.toMinutes()} minutes.`,
      { evaluationPeriods: 3, datapointsToAlarm: 3 },
    );
  }
}
