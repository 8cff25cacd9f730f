/** The stage's alarms: what each watches, its threshold, and the optional notification topic (lib/service-alarms.ts). */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { type BuiltService, buildService } from '../../support/service-fixture';

let service: BuiltService;
let template: Template;

beforeAll(() => {
  service = buildService();
  template = service.statelessTemplate;
});

describe('alarms', () => {
  it('creates the fourteen alarms of the stage', () => {
    const names = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties.AlarmName);
    expect(names).toEqual([
      'data-access-service-dev-api-5xx-rate',
      'data-access-service-dev-lambda-throttles',
      'data-access-service-dev-lambda-throttles-2',
      'data-access-service-dev-dynamodb-throttles',
      'data-access-service-dev-dynamodb-index-throttles',
      'data-access-service-dev-dynamodb-index-throttles-2',
      'data-access-service-dev-auth-failures',
      'data-access-service-dev-index-build-stalled',
      'data-access-service-dev-index-build-failed',
      'data-access-service-dev-api-latency-p99',
      // The change log and webhooks (lib/change-log-functions.ts).
      'data-access-service-dev-webhooks-parked',
      'data-access-service-dev-change-log-lag',
      'data-access-service-dev-change-stream-failures',
      'data-access-service-dev-value-fold-failures',
    ]);
  });

  it('alarms on any read or write throttle of any generic index of the records table, by index name', () => {
    const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (a) => a.Properties.AlarmName === 'data-access-service-dev-dynamodb-index-throttles',
    );
    expect(alarm?.Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 1, DatapointsToAlarm: 1 });
    // biome-ignore lint/suspicious/noExplicitAny: template JSON is untyped; the assertions read it
    const metrics = alarm?.Properties.Metrics as Array<Record<string, any>>;
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(
      'gsi0 + gsi1 + gsi2 + gsi3 + gsi4 + gsi5 + gsi6 + gsi7 + gsi8 + gsi9',
    );
    const watched = metrics
      .filter((m) => m.MetricStat)
      .map((m) => {
        const { MetricName, Namespace, Dimensions } = m.MetricStat.Metric;
        const dims = Object.fromEntries(Dimensions.map((d: { Name: string; Value: string }) => [d.Name, d.Value]));
        return `${Namespace} ${MetricName} ${dims.TableName} ${dims.GlobalSecondaryIndexName}`;
      });
    expect(watched).toEqual(
      ['gsi1', 'gsi2', 'gsi3', 'gsi4', 'gsi5'].flatMap((index) => [
        `AWS/DynamoDB ReadThrottleEvents data-access-service-dev-records ${index}`,
        `AWS/DynamoDB WriteThrottleEvents data-access-service-dev-records ${index}`,
      ]),
    );
    // The count index (a sixth index) has an alarm of its own: an alarm may read at most 10 metrics.
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-dynamodb-index-throttles-2',
      AlarmDescription: Match.stringLikeRegexp('\\(counted\\)'),
    });
  });

  it('alarms when 100 or more requests answer 1002 or 1003 in five minutes, summed over every operation', () => {
    const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (a) => a.Properties.AlarmName === 'data-access-service-dev-auth-failures',
    );
    expect(alarm?.Properties).toMatchObject({ Threshold: 100, EvaluationPeriods: 1, DatapointsToAlarm: 1 });
    // biome-ignore lint/suspicious/noExplicitAny: template JSON is untyped; the assertions read it
    const metrics = alarm?.Properties.Metrics as Array<Record<string, any>>;
    const watched = metrics
      .filter((m) => m.MetricStat)
      .map((m) => {
        const { MetricName, Namespace, Dimensions } = m.MetricStat.Metric;
        const dims = Object.fromEntries(Dimensions.map((d: { Name: string; Value: string }) => [d.Name, d.Value]));
        return `${Namespace} ${MetricName} ${Object.keys(dims).join(',')} ${dims.code}`;
      });
    // The code-only series, which every operation's log line also writes: two metrics however many operations.
    expect(watched).toEqual(['DataAccessService/dev errors code 1002', 'DataAccessService/dev errors code 1003']);
    const threshold = buildService({ context: { authFailureAlarmThreshold: '25' } }).statelessTemplate;
    threshold.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-auth-failures',
      Threshold: 25,
    });
  });

  it('alarms when 1% or more of API requests answer 5xx in 2 of 3 five-minute periods', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-api-5xx-rate',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
      Metrics: Match.arrayWith([
        Match.objectLike({ Id: 'expr_1', Expression: 'IF(requests > 0, 100 * serverErrors / requests, 0)' }),
      ]),
    });
  });

  it('alarms on any Lambda throttle of any operation, ten functions an alarm (CloudWatch reads at most ten metrics)', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-lambda-throttles',
      Threshold: 1,
      EvaluationPeriods: 1,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'm0 + m1 + m2 + m3 + m4 + m5 + m6 + m7 + m8 + m9' })]),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-lambda-throttles-2',
      Threshold: 1,
      EvaluationPeriods: 1,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'm0' })]),
    });
  });

  it('alarms on any read or write throttle of any table', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-dynamodb-throttles',
      Threshold: 1,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'm0 + m1 + m2 + m3 + m4 + m5' })]),
    });
  });

  it('alarms when the API’s p99 latency stays at or above 3 s for 15 minutes', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-api-latency-p99',
      MetricName: 'Latency',
      Namespace: 'AWS/ApiGateway',
      ExtendedStatistic: 'p99',
      Threshold: 3000,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
  });

  it('notifies nobody unless context names a topic or an e-mail address', () => {
    template.resourceCountIs('AWS::SNS::Topic', 0);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.every((alarm) => alarm.Properties.AlarmActions === undefined)).toBe(true);
  });

  it('creates a topic subscribed by e-mail and notifies it on alarm and on recovery', () => {
    const withEmail = buildService({ context: { alarmEmail: 'oncall@example.com', latencyAlarmP99Ms: '1500' } });
    withEmail.statelessTemplate.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    const alarms = Object.values(withEmail.statelessTemplate.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(14);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toHaveLength(1);
      expect(alarm.Properties.OKActions).toEqual(alarm.Properties.AlarmActions);
    }
    withEmail.statelessTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-api-latency-p99',
      Threshold: 1500,
    });
  });

  it('notifies an existing topic named in context', () => {
    const topicArn = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
    const withTopic = buildService({ context: { alarmTopicArn: topicArn } });
    withTopic.statelessTemplate.resourceCountIs('AWS::SNS::Topic', 0);
    withTopic.statelessTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-api-5xx-rate',
      AlarmActions: [topicArn],
      OKActions: [topicArn],
    });
  });
});
