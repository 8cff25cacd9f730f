/**
 * The change log and webhook delivery of a deployment (docs/interface.md §18, docs/deploying.md "Change log and
 * webhooks"), on AWS's own parts:
 *
 * - the records table's stream (NEW_AND_OLD_IMAGES) feeds the stream function through Lambda's event source, from
 *   the oldest record kept, with partial batch responses (the first item change not logged, and all after it, come
 *   again), bisection of a failing batch, and an on-failure destination (an SQS queue, watched by an alarm) for a
 *   batch that still fails when its records are about to leave the stream: nothing is dropped unseen;
 * - the stream function logs events in the events table and queues one message per subscription and event on the
 *   subscription's own SQS FIFO queue (the shared overflow queue for one without), grouped per subscription and
 *   record (per-record order, records in parallel);
 * - the delivery function sends them, fed by one event source mapping per queue, each with a maximum concurrency of
 *   its own: a receiver that hangs holds only its own subscription's pollers (changes/delivery-routes.ts); a failed
 *   attempt waits on the queue itself (its visibility set to the retry schedule's wait, at most SQS's 12 hours a
 *   step); a message given up on goes to the parked queue, which is also every delivery queue's dead-letter queue;
 * - each subscription's signing secret is in Secrets Manager (created by the stateful stack);
 * - the stream function also asks for folds of per-value totals (shared/changes/value-folds.ts): one message per
 *   dataset whose change items a batch holds, on a standard SQS queue with a delivery delay until they have settled;
 *   the fold function takes them (a failing one comes again, then goes to the fold queue's dead-letter queue);
 * - alarms on parked events, on the stream's iterator age (delivery lag), on failed stream batches and on folds
 *   given up on.
 */
import { Annotations, ArnFormat, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  deliveryQueueNameFor,
  encodeSubscriptionQueues,
  subscriptionQueueNameFor,
} from '../shared/changes/delivery-routes';
import { COUNT_INDEX, FEED_INDEX } from '../shared/storage/table-definitions';
import { backgroundFunction } from './background-function';
import { acknowledge } from './nag-acknowledgements';
import type { StatefulResources } from './stateful-stack';

export interface ChangeLogFunctionsProps {
  stage: string;
  resources: StatefulResources;
  projectRoot: string;
  metricNamespace: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  encryptionKey?: IKey;
  alarmAction?: IAlarmAction;
  /** The configuration's webhook subscriptions, in its order: each gets a delivery queue of its own. */
  subscriptionIds: readonly string[];
  /** Deliveries of one subscription in flight at once: its queue's event source mapping's maximum concurrency. */
  subscriptionConcurrency?: number;
}

/** A subscription's (and the overflow queue's) share of the delivery function: concurrent batches of its queue. */
export const DEFAULT_SUBSCRIPTION_CONCURRENCY = 5;
/**
 * At most this many subscriptions get a queue of their own (three resources each: the queue, its policy and its
 * event source mapping, in a stack CloudFormation caps at 500); later ones in the configuration share the overflow.
 */
export const MAX_SUBSCRIPTION_QUEUES = 40;
/**
 * The longest `WEBHOOK_QUEUES` may be: Lambda allows 4 KB of environment in all, and the stream function's other
 * variables take about 1 KB.
 */
const MAX_SUBSCRIPTION_LIST = 2_400;

/** The subscriptions that get a queue of their own: the configuration's first ones, as many as the limits allow. */
export function subscriptionsWithQueues(subscriptionIds: readonly string[]): string[] {
  const chosen: string[] = [];
  for (const id of subscriptionIds.slice(0, MAX_SUBSCRIPTION_QUEUES)) {
    if (encodeSubscriptionQueues([...chosen, id]).length > MAX_SUBSCRIPTION_LIST) break;
    chosen.push(id);
  }
  return chosen;
}

/** SQS keeps a message at most 14 days: longer than the retry schedule's ~4 days, so no wait outlives its message. */
const QUEUE_RETENTION = Duration.days(14);
/** One delivery waits at most 15 s for its receiver; a batch holds up to 10, one group's after the other. */
const DELIVERY_TIMEOUT = Duration.minutes(3);
/** Receives of one message before SQS moves it to the parked queue: the schedule's 10 attempts take ~13 receives. */
const MAX_RECEIVES = 40;
/** One fold turn lasts at most 20 s (changes/value-folds.ts `FOLD_TURN_MS`), then the batch's next dataset. */
const FOLD_TIMEOUT = Duration.minutes(2);
/** Receives of a fold message before SQS moves it to the fold queue's dead-letter queue. */
const FOLD_MAX_RECEIVES = 5;
/** The stream's iterator age (how far behind the change log is) that raises the delivery-lag alarm. */
export const CHANGE_LAG_ALARM_MS = 5 * 60_000;

export type ChangeLogMetric =
  | 'deliveries'
  | 'failures'
  | 'parked'
  | 'oldestAge'
  | 'lag'
  | 'folded'
  | 'foldsWaiting'
  | 'foldFailures';

export class ChangeLogFunctions extends Construct {
  readonly streamFunction: NodejsFunction;
  readonly deliveryFunction: NodejsFunction;
  /** The shared overflow queue: subscriptions without a queue of their own (and replays of them). */
  readonly deliveryQueue: Queue;
  /** Each subscription's own delivery queue, by subscription id. */
  readonly subscriptionQueues = new Map<string, Queue>();
  readonly parkedQueue: Queue;
  readonly streamFailures: Queue;
  readonly foldFunction: NodejsFunction;
  readonly foldQueue: Queue;
  readonly foldFailures: Queue;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ChangeLogFunctionsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { resources } = props;
    const events = resources.tables.events;
    const encryption = props.encryptionKey
      ? { encryption: QueueEncryption.KMS, encryptionMasterKey: props.encryptionKey }
      : { encryption: QueueEncryption.SQS_MANAGED };

    this.parkedQueue = new Queue(this, 'Parked', {
      fifo: true,
      retentionPeriod: QUEUE_RETENTION,
      enforceSSL: true,
      ...encryption,
    });
    const deliveryQueue = (id: string, queueName: string) =>
      new Queue(this, id, {
        // Named: the stream function and `das webhooks replay --stage` find each queue by it (delivery-routes.ts).
        queueName,
        fifo: true,
        retentionPeriod: QUEUE_RETENTION,
        // Lambda's guidance: six times the function's timeout, so a message is not handed out twice while in hand.
        visibilityTimeout: Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6),
        // One dead-letter queue for all: nothing reads it on the delivery path, so sharing it delays no one.
        deadLetterQueue: { queue: this.parkedQueue, maxReceiveCount: MAX_RECEIVES },
        enforceSSL: true,
        ...encryption,
      });
    this.deliveryQueue = deliveryQueue('Deliveries', deliveryQueueNameFor(props.stage));
    const own = subscriptionsWithQueues(props.subscriptionIds);
    for (const id of own) {
      this.subscriptionQueues.set(id, deliveryQueue(`Deliveries-${id}`, subscriptionQueueNameFor(props.stage, id)));
    }
    const shared = props.subscriptionIds.filter((id) => !own.includes(id));
    if (shared.length > 0) {
      Annotations.of(this).addWarning(
        `${shared.length} webhook subscription(s) share the overflow delivery queue (${shared.join(', ')}): at most ` +
          `${MAX_SUBSCRIPTION_QUEUES} get a queue of their own. A receiver of theirs that hangs delays the others ` +
          'among them (docs/deploying.md, "Change log and webhooks").',
      );
    }
    this.streamFailures = new Queue(this, 'StreamFailures', {
      retentionPeriod: QUEUE_RETENTION,
      enforceSSL: true,
      ...encryption,
    });
    this.foldFailures = new Queue(this, 'FoldFailures', {
      retentionPeriod: QUEUE_RETENTION,
      enforceSSL: true,
      ...encryption,
    });
    this.foldQueue = new Queue(this, 'Folds', {
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(FOLD_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.foldFailures, maxReceiveCount: FOLD_MAX_RECEIVES },
      enforceSSL: true,
      ...encryption,
    });
    for (const queue of [this.parkedQueue, this.streamFailures]) {
      acknowledge(queue, [
        {
          id: 'AwsSolutions-SQS3',
          reason:
            'It is the end of the line: parked deliveries and stream batches that could not be logged stay here, ' +
            'watched by an alarm, for a replay (das webhooks replay); a dead-letter queue of its own would add nothing.',
        },
      ]);
    }
    acknowledge(this.foldFailures, [
      {
        id: 'AwsSolutions-SQS3',
        reason:
          "It is the fold queue's dead-letter queue, watched by an alarm; a fold given up on loses no count (the " +
          'change items still count) and the next write of the dataset asks for a fold again.',
      },
    ]);

    // On this construct: the IAM5 finding is on the roles' policies, the L1 finding on the functions.
    acknowledge(this, [
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only X-Ray (tracing: active) is granted on "*": xray:PutTraceSegments and xray:PutTelemetryRecords ' +
          'have no resource-level permissions. Every table, queue and secret is listed by name.',
      },
      {
        id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
        reason:
          'With a customer-managed key, sending to an encrypted SQS queue needs kms:GenerateDataKey*, granted on ' +
          'that one key only (the queue grant); the wildcard is in the action name, not the resource.',
      },
      {
        id: 'AwsSolutions-IAM5[Action::kms:ReEncrypt*]',
        reason: 'As above: the queue grant of a customer-managed key, on that one key only.',
      },
      {
        id: 'AwsSolutions-L1',
        reason: 'Node.js 22 is the runtime the design fixes for the service, as for the operations.',
      },
    ]);
    const tableArn = (tableName: string) =>
      stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: tableName });
    const eventsArn = tableArn(events.tableName);
    const common = (name: string, description: string, entry: string, timeout: Duration) => {
      const made = backgroundFunction(this, props, {
        name,
        description,
        entry,
        timeout,
        environment: {
          DELIVERY_QUEUE_URL: this.deliveryQueue.queueUrl,
          PARKED_QUEUE_URL: this.parkedQueue.queueUrl,
          FOLD_QUEUE_URL: this.foldQueue.queueUrl,
        },
      });
      made.role.addToPolicy(
        new PolicyStatement({
          actions: ['dynamodb:GetItem'],
          resources: [tableArn(resources.tables.catalog.tableName)],
        }),
      );
      return made;
    };

    // The change log's writer: the stream in, events and delivery messages out.
    const writer = common('ChangeStream', 'change log writer (records stream)', 'change-stream', Duration.minutes(1));
    this.streamFunction = writer.fn;
    writer.role.addToPolicy(
      new PolicyStatement({ actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], resources: [eventsArn] }),
    );
    this.deliveryQueue.grantSendMessages(writer.role);
    for (const queue of this.subscriptionQueues.values()) {
      queue.grantSendMessages(writer.role);
      // The writer puts a subscription's deliveries on its queue once that queue exists.
      writer.fn.node.addDependency(queue);
    }
    writer.fn.addEnvironment('WEBHOOK_QUEUES', encodeSubscriptionQueues(own));
    this.foldQueue.grantSendMessages(writer.role);
    const records: ITable = Table.fromTableAttributes(this, 'RecordsStream', {
      tableName: resources.tables.records.tableName,
      tableStreamArn: resources.recordsStreamArn,
    });
    this.streamFunction.addEventSource(
      new DynamoEventSource(records, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: 10_000,
        onFailure: new SqsDlq(this.streamFailures),
      }),
    );

    // The deliveries: read the event, sign, send; retry on the queue; park.
    const sender = common('WebhookDelivery', 'webhook delivery', 'webhook-delivery', DELIVERY_TIMEOUT);
    this.deliveryFunction = sender.fn;
    sender.role.addToPolicy(
      new PolicyStatement({
        actions: [
          'dynamodb:GetItem',
          'dynamodb:BatchGetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:Query',
        ],
        resources: [eventsArn, `${eventsArn}/index/${FEED_INDEX.indexName}`],
      }),
    );
    if (resources.webhookSecretNames.length > 0) {
      sender.role.addToPolicy(
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: resources.webhookSecretNames.map((name) =>
            stack.formatArn({
              service: 'secretsmanager',
              resource: 'secret',
              resourceName: `${name}-??????`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ),
        }),
      );
    }
    this.parkedQueue.grantSendMessages(sender.role);
    // One mapping per queue, each with its own maximum concurrency: a receiver that hangs holds its queue's
    // pollers only, and no subscription takes more of the account's concurrency than its share.
    const maxConcurrency = props.subscriptionConcurrency ?? DEFAULT_SUBSCRIPTION_CONCURRENCY;
    for (const queue of [this.deliveryQueue, ...this.subscriptionQueues.values()]) {
      this.deliveryFunction.addEventSource(
        new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency }),
      );
    }

    // The folds of per-value totals: the dataset's change items and count pages in the records table, its
    // configuration in the catalog (granted to every function above); a fold that leaves work asks for itself again.
    // A fold first finishes the batch updates their writers left (their intents, holds and records, in the same
    // table: the same actions).
    const folder = common('ValueFold', 'per-value totals fold (fold queue)', 'value-fold', FOLD_TIMEOUT);
    this.foldFunction = folder.fn;
    const recordsArn = tableArn(resources.tables.records.tableName);
    folder.role.addToPolicy(
      new PolicyStatement({
        actions: [
          'dynamodb:GetItem',
          'dynamodb:BatchGetItem',
          'dynamodb:Query',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:BatchWriteItem',
        ],
        resources: [recordsArn, `${recordsArn}/index/${COUNT_INDEX.indexName}`],
      }),
    );
    this.foldQueue.grantSendMessages(folder.role);
    this.foldFunction.addEventSource(
      new SqsEventSource(this.foldQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );

    const alarm = (alarmId: string, description: string, metric: Metric, threshold: number) => {
      const created = new Alarm(this, alarmId, {
        alarmName: `data-access-service-${props.stage}-${alarmId.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}`,
        alarmDescription: `${props.stage}: ${description}`,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (props.alarmAction) {
        created.addAlarmAction(props.alarmAction);
        created.addOkAction(props.alarmAction);
      }
      this.alarms.push(created);
    };
    alarm(
      'WebhooksParked',
      'webhook events parked after their last attempt (das webhooks status; das webhooks replay)',
      this.parkedQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      1,
    );
    alarm(
      'ChangeLogLag',
      'the change log is more than 5 minutes behind the records table (the stream iterator age)',
      this.streamFunction.metric('IteratorAge', { period: Duration.minutes(5), statistic: 'Maximum' }),
      CHANGE_LAG_ALARM_MS,
    );
    alarm(
      'ChangeStreamFailures',
      'stream batches that could not be logged are on the on-failure queue',
      this.streamFailures.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      1,
    );
    alarm(
      'ValueFoldFailures',
      'folds of per-value totals were given up on (lists fold what is left themselves, at a higher cost)',
      this.foldFailures.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      1,
    );
  }

  /** The oldest undelivered message's age over every delivery queue. */
  private oldestDeliveryAge(): IMetric {
    const queues = [this.deliveryQueue, ...this.subscriptionQueues.values()];
    const ages = Object.fromEntries(
      queues.map((queue, index) => [
        `q${index}`,
        queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: Duration.minutes(5) }),
      ]),
    );
    if (queues.length === 1) return ages.q0 as Metric;
    return new MathExpression({
      expression: `MAX([${Object.keys(ages).join(', ')}])`,
      usingMetrics: ages,
      label: 'oldest undelivered (any queue)',
      period: Duration.minutes(5),
    });
  }

  /**
   * The dashboard's metrics of webhooks (deliveries, failures, parked events, the oldest undelivered event's age,
   * the change log's lag) and of folds of per-value totals (records folded, folds waiting, folds given up on).
   */
  metrics(namespace: string): Record<ChangeLogMetric, IMetric> {
    const emf = (metricName: string, statistic = 'Sum') =>
      new Metric({ namespace, metricName, statistic, period: Duration.minutes(5) });
    return {
      deliveries: emf('webhookDeliveries'),
      failures: emf('webhookFailures'),
      parked: this.parkedQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
      oldestAge: this.oldestDeliveryAge(),
      lag: this.streamFunction.metric('IteratorAge', { statistic: 'Maximum' }),
      folded: emf('valueFoldRecords'),
      foldsWaiting: this.foldQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
      foldFailures: this.foldFailures.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
    };
  }
}
