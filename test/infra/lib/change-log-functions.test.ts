/**
 * The change log and webhook delivery in a deployment (lib/change-log-functions.ts): the records table's stream
 * feeds the writer with partial batch responses, bisection and an on-failure queue; deliveries go through an SQS
 * FIFO queue whose dead-letter queue is the parked queue; each subscription has a generated secret; alarms on
 * parked events, lag and failed stream batches. Folds of per-value totals: a standard SQS queue the stream
 * function sends to (with a delivery delay), a fold function with exactly the records table's actions it needs,
 * a dead-letter queue and its alarm.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { parseConfig } from '../../../shared/catalog-store/load-config';
import { buildService, TEST_CONFIG } from '../../support/service-fixture';

let stateless: Template;
let stateful: Template;

beforeAll(() => {
  const config = parseConfig({
    ...TEST_CONFIG,
    webhooks: [{ id: 'crm', appCode: 'app-reports', url: 'https://crm.example.com/hooks', datasets: ['orders'] }],
  });
  const service = buildService({ config });
  stateless = service.statelessTemplate;
  stateful = service.statefulTemplate;
});

describe('the change log in a deployment', () => {
  it('streams the records table with both images, and keeps events in their own table with the feed index', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'data-access-service-dev-records',
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'data-access-service-dev-events',
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'feed' })],
      TimeToLiveSpecification: { AttributeName: '@expires', Enabled: true },
    });
  });

  it('reads the stream from its oldest record, reports the first failed change, bisects, and keeps what still fails', () => {
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 10000,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  it('delivers through an SQS FIFO queue whose dead-letter queue is the parked queue, kept 14 days', () => {
    stateless.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      MessageRetentionPeriod: 14 * 86400,
      VisibilityTimeout: 1080,
      RedrivePolicy: { maxReceiveCount: 40, deadLetterTargetArn: Match.anyValue() },
    });
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: Match.anyValue(),
    });
    // The overflow queue, the one subscription's own queue, and the parked queue.
    stateless.resourcePropertiesCountIs('AWS::SQS::Queue', { FifoQueue: true }, 3);
  });

  it('generates each subscription a secret in the secret store, which only the delivery function reads', () => {
    stateful.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'data-access-service/dev/webhooks/crm',
      GenerateSecretString: Match.objectLike({ GenerateStringKey: 'secret', PasswordLength: 48 }),
    });
    stateless.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'secretsmanager:GetSecretValue',
            Resource: Match.objectLike({
              'Fn::Join': Match.arrayWith([Match.arrayWith([':secret:data-access-service/dev/webhooks/crm-??????'])]),
            }),
          }),
        ]),
      },
    });
  });

  it('alarms on parked events, on the change log lag and on stream batches that could not be logged', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-webhooks-parked',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
    });
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-change-log-lag',
      MetricName: 'IteratorAge',
      Threshold: 300000,
    });
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-change-stream-failures',
      MetricName: 'ApproximateNumberOfMessagesVisible',
    });
  });

  it('gives the feed function the events table and a Query of its feed index only', () => {
    stateless.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('\\(changes\\)$'),
      Environment: { Variables: Match.objectLike({ EVENTS_TABLE: 'data-access-service-dev-events' }) },
    });
  });

  it('folds per-value totals through an SQS queue with a dead-letter queue, fed by the stream function', () => {
    stateless.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: Match.absent(),
      MessageRetentionPeriod: 4 * 86400,
      VisibilityTimeout: 720,
      RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: Match.anyValue() },
    });
    const folder = stateless.findResources('AWS::Lambda::Function', {
      Properties: { Description: Match.stringLikeRegexp('per-value totals fold') },
    });
    expect(Object.keys(folder)).toHaveLength(1);
    const [folderId, folderResource] = Object.entries(folder)[0] as [string, { Properties: Record<string, unknown> }];
    expect(folderResource.Properties.Timeout).toBe(120);
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: folderId },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // The stream function (the writer) and the fold function (asking for itself again) send to the fold queue.
    const writers = stateless.findResources('AWS::Lambda::Function', {
      Properties: {
        Environment: { Variables: Match.objectLike({ FOLD_QUEUE_URL: Match.anyValue() }) },
      },
    });
    expect(Object.keys(writers).length).toBeGreaterThanOrEqual(2);
  });

  it('gives the fold function the records table and its count index, with no scan and no table-wide wildcard', () => {
    const policies = stateless.findResources('AWS::IAM::Policy', {
      Properties: { PolicyName: Match.stringLikeRegexp('ValueFoldRole') },
    });
    const statements = Object.values(policies).flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: { Action: unknown }[] } } }).Properties.PolicyDocument
          .Statement,
    );
    const dynamo = statements.find((statement) => JSON.stringify(statement.Action).includes('dynamodb:Query'));
    expect(dynamo?.Action).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(JSON.stringify(dynamo)).toContain('table/data-access-service-dev-records');
    expect(JSON.stringify(dynamo)).toContain('/index/count');
    expect(JSON.stringify(statements)).not.toContain('dynamodb:Scan');
    expect(JSON.stringify(statements)).toContain('sqs:SendMessage');
  });

  it('alarms when folds are given up on', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-dev-value-fold-failures',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
    });
  });
});
