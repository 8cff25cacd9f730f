/**
 * Receivers are isolated in a deployment (docs/interface.md §22, lib/change-log-functions.ts): each subscription of
 * the configuration has its own SQS FIFO queue, named after the stage and the subscription, whose dead-letter queue
 * is the parked queue, read by the delivery function through a mapping of its own with its own maximum concurrency;
 * the stream function is told which subscriptions have a queue and may send to exactly those queues and the
 * overflow queue; past the cap, subscriptions share the overflow queue, with a warning at synth.
 */
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import {
  DEFAULT_SUBSCRIPTION_CONCURRENCY,
  MAX_SUBSCRIPTION_QUEUES,
  subscriptionsWithQueues,
} from '../../../lib/change-log-functions';
import { parseConfig } from '../../../shared/catalog-store/load-config';
import { buildService, TEST_CONFIG } from '../../support/service-fixture';

type Resources = Record<string, { Properties: Record<string, unknown> }>;

let stateless: Template;

beforeAll(() => {
  const config = parseConfig({
    ...TEST_CONFIG,
    webhooks: [
      { id: 'crm', appCode: 'app-reports', url: 'https://crm.example.com/hooks', datasets: ['orders'] },
      { id: 'erp', appCode: 'app-reports', url: 'https://erp.example.com/hooks', datasets: ['orders'] },
    ],
  });
  stateless = buildService({ config }).statelessTemplate;
});

function logicalIdOfQueue(queueName: string): string {
  const found = Object.keys(stateless.findResources('AWS::SQS::Queue', { Properties: { QueueName: queueName } }));
  expect(found).toHaveLength(1);
  return found[0] as string;
}

function functionId(description: RegExp): string {
  const found = Object.entries(stateless.findResources('AWS::Lambda::Function') as Resources).filter(([, r]) =>
    description.test(String(r.Properties.Description)),
  );
  expect(found).toHaveLength(1);
  return (found[0] as [string, unknown])[0];
}

function policyStatementsOf(roleId: string): { Action: unknown; Resource: unknown }[] {
  const policies = stateless.findResources('AWS::IAM::Policy') as Resources;
  return Object.values(policies)
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(
      (policy) =>
        (policy.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
    );
}

const QUEUES = {
  overflow: 'data-access-service-dev-deliveries.fifo',
  crm: 'data-access-service-dev-deliveries-crm.fifo',
  erp: 'data-access-service-dev-deliveries-erp.fifo',
};

describe('webhook receivers isolated in a deployment', () => {
  it('gives each subscription a FIFO queue of its own, beside the overflow queue, each parking in the parked queue', () => {
    const parked = Object.keys(
      stateless.findResources('AWS::SQS::Queue', {
        Properties: { FifoQueue: true, RedrivePolicy: Match.absent(), QueueName: Match.absent() },
      }),
    );
    expect(parked).toHaveLength(1);
    for (const name of Object.values(QUEUES)) {
      stateless.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: name,
        FifoQueue: true,
        MessageRetentionPeriod: 14 * 86400,
        VisibilityTimeout: 1080,
        RedrivePolicy: { maxReceiveCount: 40, deadLetterTargetArn: { 'Fn::GetAtt': [parked[0], 'Arn'] } },
      });
    }
    stateless.resourcePropertiesCountIs('AWS::SQS::Queue', { FifoQueue: true }, 4);
  });

  it('reads each queue through a mapping of its own, with its own maximum concurrency', () => {
    const delivery = functionId(/: webhook delivery$/);
    const mappings = stateless.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: delivery } },
    }) as Resources;
    const bySource = Object.values(mappings).map((m) => ({
      source: (m.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
      batchSize: m.Properties.BatchSize,
      maximumConcurrency: (m.Properties.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency,
      responses: m.Properties.FunctionResponseTypes,
    }));
    expect(bySource.sort((a, b) => a.source.localeCompare(b.source))).toEqual(
      Object.values(QUEUES)
        .map((name) => ({
          source: logicalIdOfQueue(name),
          batchSize: 10,
          maximumConcurrency: DEFAULT_SUBSCRIPTION_CONCURRENCY,
          responses: ['ReportBatchItemFailures'],
        }))
        .sort((a, b) => a.source.localeCompare(b.source)),
    );
    expect(DEFAULT_SUBSCRIPTION_CONCURRENCY).toBe(5);
  });

  it('tells the stream function which subscriptions have a queue, and lets it send to exactly those and the overflow', () => {
    const writer = functionId(/change log writer/);
    const resource = (stateless.findResources('AWS::Lambda::Function') as Resources)[writer];
    expect(resource?.Properties.Environment).toEqual({
      Variables: expect.objectContaining({
        WEBHOOK_QUEUES: 'crm,erp',
        DELIVERY_QUEUE_URL: { Ref: logicalIdOfQueue(QUEUES.overflow) },
        STAGE: 'dev',
      }),
    });
    const role = (resource?.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const sends = policyStatementsOf(role).filter((s) => JSON.stringify(s.Action).includes('sqs:SendMessage'));
    const queues = sends.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));
    const deliveryQueues = Object.values(QUEUES).map((name) => ({ 'Fn::GetAtt': [logicalIdOfQueue(name), 'Arn'] }));
    // The delivery queues, the fold queue and the stream's on-failure queue: each by name, nothing by wildcard.
    expect(queues).toEqual(expect.arrayContaining(deliveryQueues));
    expect(queues).toHaveLength(5);
    expect(JSON.stringify(queues)).not.toContain('*');
  });

  it('lets the delivery function take messages from the delivery queues and send only to the parked queue', () => {
    const delivery = functionId(/: webhook delivery$/);
    const resource = (stateless.findResources('AWS::Lambda::Function') as Resources)[delivery];
    const role = (resource?.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = policyStatementsOf(role);
    const consume = statements.find((s) => JSON.stringify(s.Action).includes('sqs:ChangeMessageVisibility'));
    expect(consume?.Resource).toEqual(
      expect.arrayContaining(Object.values(QUEUES).map((name) => ({ 'Fn::GetAtt': [logicalIdOfQueue(name), 'Arn'] }))),
    );
    expect(consume?.Resource).toHaveLength(3);
    const sends = statements.filter((s) => JSON.stringify(s.Action).includes('sqs:SendMessage'));
    expect(sends.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))).toHaveLength(1);
  });
});

describe('more subscriptions than queues', () => {
  it('gives the first 40 a queue each and lets the rest share the overflow queue, with a warning', () => {
    const ids = Array.from({ length: 43 }, (_, i) => `sub-${i}`);
    expect(MAX_SUBSCRIPTION_QUEUES).toBe(40);
    expect(subscriptionsWithQueues(ids)).toEqual(ids.slice(0, 40));
    const config = parseConfig({
      ...TEST_CONFIG,
      webhooks: ids.map((id) => ({
        id,
        appCode: 'app-reports',
        url: `https://${id}.example.com/hooks`,
        datasets: ['orders'],
      })),
    });
    const built = buildService({ config });
    built.statelessTemplate.resourcePropertiesCountIs('AWS::SQS::Queue', { FifoQueue: true }, 42);
    Annotations.fromStack(built.stateless).hasWarning(
      '*',
      Match.stringLikeRegexp(
        '3 webhook subscription\\(s\\) share the overflow delivery queue \\(sub-40, sub-41, sub-42\\)',
      ),
    );
  });

  it('keeps the list the stream function is given within what Lambda allows for its environment', () => {
    const long = Array.from({ length: 40 }, (_, i) => `${'x'.repeat(60)}-${String(i).padStart(3, '0')}`);
    const chosen = subscriptionsWithQueues(long);
    expect(chosen.join(',').length).toBeLessThanOrEqual(2_400);
    expect(chosen).toEqual(long.slice(0, 36));
  });
});

describe('webhookConcurrency', () => {
  it("sets every delivery queue's mapping's maximum concurrency", () => {
    const config = parseConfig({
      ...TEST_CONFIG,
      webhooks: [{ id: 'crm', appCode: 'app-reports', url: 'https://crm.example.com/hooks', datasets: ['orders'] }],
    });
    const template = buildService({ config, context: { webhookConcurrency: '12' } }).statelessTemplate;
    const mappings = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { ScalingConfig: Match.anyValue() },
      }) as Resources,
    ).map((m) => m.Properties.ScalingConfig);
    expect(mappings).toEqual([{ MaximumConcurrency: 12 }, { MaximumConcurrency: 12 }]);
  });
});
