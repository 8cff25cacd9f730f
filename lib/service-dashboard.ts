/**
 * The per-stage CloudWatch dashboard: operations (Lambda), the API, DynamoDB and the business metrics of the
 * request log (errors by code, auth failures, quota rejections, capacity per operation, SQL time, signed and
 * client-key traffic), and, when the configuration hooks functions, their duration and failures by function.
 * Everything comes from metrics that exist without extra infrastructure.
 */
import type { CfnResource } from 'aws-cdk-lib';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ErrorCode } from '../shared/contract/errors';
import type { AuthMode } from '../shared/contract/routes';
import { ERROR_CODE_DIMENSION, HOOK_FUNCTION_DIMENSION, MODE_DIMENSION } from '../shared/observability/request-log';
import type { ChangeLogMetric } from './change-log-functions';
import {
  AUTH_FAILURE_CODES,
  apiServerErrorRate,
  businessMetric,
  indexBuildMetric,
  indexBuildRate,
  indexBuildRunsFailed,
  METRIC_PERIOD,
  type ServiceMetricSources,
  sumOf,
} from './service-metrics';
import type { SqlMirrorMetric } from './sql-mirror';

export interface ServiceDashboardProps extends ServiceMetricSources {
  stage: string;
  alarms: readonly Alarm[];
  /** The backend functions the configuration's hooks run, in declared order: one line each on the hook graphs. */
  hookFunctions?: readonly string[];
  /** The change log's and webhooks' metrics (lib/change-log-functions.ts). */
  changeLog: Record<ChangeLogMetric, IMetric>;
  /** The index jobs' state machine: its runs beside the jobs' own metrics. */
  indexBuilds?: IStateMachine;
  /** Custom SQL's MySQL mirror on Aurora (lib/sql-mirror.ts), when the stage has one. */
  sqlMirror?: Record<SqlMirrorMetric, IMetric>;
}

/**
 * Up to this many hooked functions get a line each, labelled by name; beyond it the hook graphs show a search over
 * the namespace instead, which a graph draws however many functions there are.
 */
export const MAX_HOOK_FUNCTION_LINES = 30;

const AUTH_MODES: readonly AuthMode[] = ['signed', 'client'];

const WIDTH_THIRD = 8;
const WIDTH_HALF = 12;
const HEIGHT = 6;

function graph(title: string, left: IMetric[], width = WIDTH_THIRD, right: IMetric[] = []): GraphWidget {
  return new GraphWidget({ title, left, right, width, height: HEIGHT, period: METRIC_PERIOD });
}

function section(markdown: string): TextWidget {
  return new TextWidget({ markdown, width: 24, height: 1 });
}

export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    const ns = props.metricNamespace;
    const ops = props.operations;
    const stage = props.api.deploymentStage;
    const perOperation = (metric: (op: (typeof ops)[number]) => IMetric): IMetric[] => ops.map(metric);
    const byOperation = (name: string, statistic: string) =>
      ops.map((op) => businessMetric(ns, name, { operation: op.route.operation }, statistic, op.route.operation));

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `data-access-service-${props.stage}`,
    });
    // cfn-lint's schema for AWS::CloudWatch::Dashboard predates its Tags property (CloudFormation accepts the
    // stage tags every resource gets): E3002 is suppressed for this one resource only, and CI still lints the rest.
    (this.dashboard.node.defaultChild as CfnResource).addMetadata('cfn-lint', { config: { ignore_checks: ['E3002'] } });

    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: 24, height: 2 }),
    );

    this.dashboard.addWidgets(section('## Operations (Lambda)'));
    this.dashboard.addWidgets(
      graph(
        'Invocations by operation',
        perOperation((op) => op.function.metricInvocations({ statistic: 'Sum', label: op.route.operation })),
      ),
      graph(
        'Errors by operation',
        perOperation((op) => op.function.metricErrors({ statistic: 'Sum', label: op.route.operation })),
      ),
      graph(
        'Throttles by operation',
        perOperation((op) => op.function.metricThrottles({ statistic: 'Sum', label: op.route.operation })),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Duration p50 by operation (ms)',
        perOperation((op) => op.function.metricDuration({ statistic: 'p50', label: op.route.operation })),
        WIDTH_HALF,
      ),
      graph(
        'Duration p99 by operation (ms)',
        perOperation((op) => op.function.metricDuration({ statistic: 'p99', label: op.route.operation })),
        WIDTH_HALF,
      ),
    );

    // Operations with provisioned concurrency: how much of it is used, and the requests that went beyond it
    // (each of those may wait for a cold start). Only when a deployment provisions any.
    const provisioned = ops.flatMap((op) => (op.alias ? [{ alias: op.alias, label: op.route.operation }] : []));
    if (provisioned.length > 0) {
      this.dashboard.addWidgets(
        graph(
          'Provisioned concurrency in use (max, 1 = all)',
          provisioned.map(({ alias, label }) =>
            alias.metric('ProvisionedConcurrencyUtilization', { statistic: 'Maximum', label }),
          ),
          WIDTH_HALF,
        ),
        graph(
          'Invocations beyond provisioned concurrency',
          provisioned.map(({ alias, label }) =>
            alias.metric('ProvisionedConcurrencySpilloverInvocations', { statistic: 'Sum', label }),
          ),
          WIDTH_HALF,
        ),
      );
    }

    this.dashboard.addWidgets(section('## API Gateway'));
    this.dashboard.addWidgets(
      graph('API requests, 4xx and 5xx', [
        stage.metricCount({ statistic: 'Sum', label: 'requests' }),
        stage.metricClientError({ statistic: 'Sum', label: '4xx' }),
        stage.metricServerError({ statistic: 'Sum', label: '5xx' }),
      ]),
      graph('API 5xx rate (%)', [apiServerErrorRate(props.api)]),
      graph('API latency (ms)', [
        stage.metricLatency({ statistic: 'p50', label: 'latency p50' }),
        stage.metricLatency({ statistic: 'p99', label: 'latency p99' }),
        stage.metricIntegrationLatency({ statistic: 'p99', label: 'integration latency p99' }),
      ]),
    );

    this.dashboard.addWidgets(section('## DynamoDB'));
    this.dashboard.addWidgets(
      graph(
        'Consumed read capacity units by table',
        props.tables.map(({ label, table }) => table.metricConsumedReadCapacityUnits({ statistic: 'Sum', label })),
      ),
      graph(
        'Consumed write capacity units by table',
        props.tables.map(({ label, table }) => table.metricConsumedWriteCapacityUnits({ statistic: 'Sum', label })),
      ),
      graph(
        'Throttle events by table',
        props.tables.flatMap(({ label, table }) => [
          table.metric('ReadThrottleEvents', { statistic: 'Sum', label: `${label} read` }),
          table.metric('WriteThrottleEvents', { statistic: 'Sum', label: `${label} write` }),
        ]),
      ),
    );

    this.dashboard.addWidgets(section('## Requests (request log, embedded metric format)'));
    this.dashboard.addWidgets(
      graph('Requests by operation', byOperation('requests', 'Sum')),
      graph('Failed requests by operation', byOperation('errors', 'Sum')),
      graph('Request duration p99 by operation (ms)', byOperation('durationMs', 'p99')),
    );
    this.dashboard.addWidgets(
      graph('Errors by code and operation', [
        new MathExpression({
          // SEARCH picks up every (operation, code) pair the log has written, including codes added later.
          expression: `SEARCH('{"${ns}",${ERROR_CODE_DIMENSION},operation} MetricName="errors"', 'Sum', ${METRIC_PERIOD.toSeconds()})`,
          label: '',
          period: METRIC_PERIOD,
        }),
      ]),
      graph(
        'Authentication failures by code',
        AUTH_FAILURE_CODES.map((code) =>
          sumOf(
            ops.map((op) =>
              businessMetric(
                ns,
                'errors',
                { operation: op.route.operation, [ERROR_CODE_DIMENSION]: String(code) },
                'Sum',
                '',
              ),
            ),
            String(code),
            `auth${code}_`,
          ),
        ),
      ),
      graph(
        'Quota rejections (4001) by operation',
        ops.map((op) =>
          businessMetric(
            ns,
            'errors',
            { operation: op.route.operation, [ERROR_CODE_DIMENSION]: String(ErrorCode.RateLimited) },
            'Sum',
            op.route.operation,
          ),
        ),
      ),
    );
    this.dashboard.addWidgets(
      graph('Read units by operation', byOperation('readUnits', 'Sum'), WIDTH_THIRD),
      graph('Write units by operation', byOperation('writeUnits', 'Sum'), WIDTH_THIRD),
      graph('SQL execution time (ms)', [
        businessMetric(ns, 'sqlDurationMs', { operation: 'execute-sql' }, 'p50', 'p50'),
        businessMetric(ns, 'sqlDurationMs', { operation: 'execute-sql' }, 'p99', 'p99'),
      ]),
    );
    // Signed requests and client-key requests (personal access keys on /client/ paths), side by side.
    const byMode = (name: string, statistic: string) =>
      AUTH_MODES.map((mode) => businessMetric(ns, name, { [MODE_DIMENSION]: mode }, statistic, mode));
    this.dashboard.addWidgets(
      graph('Requests by mode (signed, client key)', byMode('requests', 'Sum')),
      graph('Failed requests by mode', byMode('errors', 'Sum')),
      graph('Request duration p99 by mode (ms)', byMode('durationMs', 'p99')),
    );

    // Webhooks: deliveries and failures, parked events, the oldest undelivered event's age, the change log's lag.
    const changes = props.changeLog;
    this.dashboard.addWidgets(section('## Change log and webhooks'));
    this.dashboard.addWidgets(
      graph('Webhook deliveries and failures', [changes.deliveries, changes.failures], 6),
      graph('Parked events', [changes.parked], 6),
      graph('Oldest undelivered event (s)', [changes.oldestAge], 6),
      graph('Change log lag: stream iterator age (ms)', [changes.lag], 6),
    );
    this.dashboard.addWidgets(
      graph('Per-value totals: records folded beside the writes', [changes.folded], 8),
      graph('Folds waiting on their queue', [changes.foldsWaiting], 8),
      graph('Folds given up on', [changes.foldFailures], 8),
    );
    if (props.sqlMirror) {
      this.dashboard.addWidgets(section('## Custom SQL on Aurora (the mirror of the change log)'));
      this.dashboard.addWidgets(
        graph('SQL mirror lag behind the change log (s)', [props.sqlMirror.lag]),
        graph('Datasets still being copied into the mirror', [props.sqlMirror.backfilling]),
        graph('Mirror runs failed (dead-letter queue)', [props.sqlMirror.failedRuns]),
      );
    }
    if (props.indexBuilds) {
      this.dashboard.addWidgets(
        section('## Index builds (records done, rate, errors; `das indexes` shows each index)'),
      );
      this.dashboard.addWidgets(
        graph('Index jobs: records done and keys written', [
          indexBuildMetric(ns, 'records', 'Sum', 'records done'),
          indexBuildMetric(ns, 'writes', 'Sum', 'index keys written'),
          indexBuildMetric(ns, 'pending', 'Maximum', 'indexes pending'),
        ]),
        graph('Index jobs: records per second', [indexBuildRate(ns)]),
        graph('Index jobs: errors, throttles, failed runs', [
          indexBuildMetric(ns, 'errors', 'Sum', 'step errors'),
          indexBuildMetric(ns, 'throttles', 'Sum', 'writes throttled'),
          indexBuildMetric(ns, 'conflicts', 'Sum', 'writes redone (record changed)'),
          indexBuildRunsFailed(props.indexBuilds),
        ]),
      );
    }

    const hooked = props.hookFunctions ?? [];
    if (hooked.length === 0) return;
    // One line per run (request-log.ts, logHookRuns), by the function's configured name.
    const byFunction = (name: string, statistic: string): IMetric[] =>
      hooked.length <= MAX_HOOK_FUNCTION_LINES
        ? hooked.map((fn) => businessMetric(ns, name, { [HOOK_FUNCTION_DIMENSION]: fn }, statistic, fn))
        : [
            new MathExpression({
              expression: `SEARCH('{"${ns}",${HOOK_FUNCTION_DIMENSION}} MetricName="${name}"', '${statistic}', ${METRIC_PERIOD.toSeconds()})`,
              label: '',
              period: METRIC_PERIOD,
            }),
          ];
    this.dashboard.addWidgets(section('## Hooks (backend functions, by function)'));
    this.dashboard.addWidgets(
      graph('Hook duration p50 by function (ms)', byFunction('hookDurationMs', 'p50')),
      graph('Hook duration p99 by function (ms)', byFunction('hookDurationMs', 'p99')),
      graph('Hook failures by function (3001)', byFunction('hookFailures', 'Sum')),
    );
  }
}
