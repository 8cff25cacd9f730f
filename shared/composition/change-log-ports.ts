/**
 * The composition root of the deployment's change log functions (docs/interface.md §18): the stream function, fed
 * by Lambda's DynamoDB Streams event source on the records table, the delivery function, fed by the SQS FIFO
 * delivery queues (one per subscription, and the overflow queue: changes/delivery-routes.ts), and the fold function of per-value totals, fed by the fold queue (changes/value-folds.ts). Their ports are built once per container, from the environment, and the batches are handed to
 * the same code `npm start` runs (changes/change-stream.ts, changes/sqs-deliveries.ts).
 */
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { monotonicFactory } from 'ulid';
import { dynamoDocumentClient } from '../aws/dynamodb';
import { secretsManagerClient } from '../aws/secrets-manager';
import { sqsClient } from '../aws/sqs';
import { CachedCatalogProvider } from '../catalog/catalog-provider';
import { readDeployedCatalog } from '../catalog-store/catalog-store';
import { type ChangeLogPorts, type ItemChangeRecord, logItemChanges } from '../changes/change-stream';
import { DeliveryRoutes } from '../changes/delivery-routes';
import { retrySchedule } from '../changes/retry-schedule';
import { deliverSqsBatch, SqsDeliveryQueue } from '../changes/sqs-deliveries';
import { foldSqsBatch, SqsFoldQueue } from '../changes/sqs-value-folds';
import type { FoldPorts } from '../changes/value-folds';
import type { DeliveryPorts } from '../changes/webhook-delivery';
import { SecretsManagerWebhookSecrets } from '../changes/webhook-secrets';
import { httpWebhookTransport } from '../changes/webhook-transport';
import { CapacityMeter } from '../observability/capacity-meter';
import { logChangeBatch } from '../observability/change-metrics';
import { type Environment, environment, MissingEnvironmentError } from '../runtime/environment';
import { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { EventStore } from '../storage/event-store';
import { RecordStore } from '../storage/record-store';
import { WebhookStateStore } from '../storage/webhook-state';
import { batchFinisher } from './batch-finisher';

function required<K extends keyof Environment>(env: Environment, key: K, name: string): NonNullable<Environment[K]> {
  const value = env[key];
  if (value === undefined) throw new MissingEnvironmentError(name, 'the change log functions need it');
  return value as NonNullable<Environment[K]>;
}

interface SharedPorts {
  catalog: CachedCatalogProvider;
  events: EventStore;
  folds: SqsFoldQueue;
}

let shared: SharedPorts | undefined;

function sharedPorts(): SharedPorts {
  if (shared) return shared;
  const env = environment();
  const client = dynamoDocumentClient();
  shared = {
    catalog: new CachedCatalogProvider({ load: () => readDeployedCatalog(client, env.catalogTable) }),
    events: new EventStore(client, required(env, 'eventsTable', 'EVENTS_TABLE'), env.changeSettleMs),
    folds: new SqsFoldQueue(sqsClient(), required(env, 'foldQueueUrl', 'FOLD_QUEUE_URL')),
  };
  return shared;
}

let writer: ChangeLogPorts | undefined;

function changeLogPorts(): ChangeLogPorts {
  if (writer) return writer;
  const env = environment();
  const { catalog, events, folds } = sharedPorts();
  const nextPosition = monotonicFactory();
  const routes = new DeliveryRoutes(
    required(env, 'deliveryQueueUrl', 'DELIVERY_QUEUE_URL'),
    env.stage,
    env.subscriptionQueues,
  );
  writer = {
    catalog: () => catalog.current(),
    events,
    deliveries: new SqsDeliveryQueue(sqsClient(), (subscriptionId) => routes.urlOf(subscriptionId)),
    folds,
    nextPosition: () => nextPosition(),
    now: Date.now,
  };
  return writer;
}

/** The stream function's batch: log it; the first item change not finished is reported, so it and the rest come again. */
export async function handleStreamBatch(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const records = event.Records as ItemChangeRecord[];
  const meter = new CapacityMeter();
  const started = performance.now();
  const outcome = await logItemChanges(records, changeLogPorts(), meter);
  const failedIndex =
    outcome.failedAt === undefined
      ? records.length
      : records.findIndex((r) => r.dynamodb?.SequenceNumber === outcome.failedAt);
  logChangeBatch(
    {
      records: records.length,
      logged: outcome.logged,
      duplicates: outcome.duplicates,
      queued: outcome.queued,
      failed: records.length - failedIndex,
      writeUnits: meter.writeUnits,
      readUnits: meter.readUnits,
      ...(outcome.lagMs === undefined ? {} : { lagMs: outcome.lagMs }),
      durationMs: performance.now() - started,
      ...(outcome.error ? { error: `${outcome.error.name}: ${outcome.error.message}` } : {}),
    },
    environment().metricNamespace,
  );
  return { batchItemFailures: outcome.failedAt === undefined ? [] : [{ itemIdentifier: outcome.failedAt }] };
}

let delivery: DeliveryPorts | undefined;

function deliveryPorts(): DeliveryPorts {
  if (delivery) return delivery;
  const env = environment();
  const { catalog, events } = sharedPorts();
  delivery = {
    catalog: () => catalog.current(),
    events,
    state: new WebhookStateStore(dynamoDocumentClient(), required(env, 'eventsTable', 'EVENTS_TABLE')),
    secrets: new SecretsManagerWebhookSecrets({
      client: secretsManagerClient(),
      secretPrefix: required(env, 'secretPrefix', 'SECRET_PREFIX'),
    }),
    // A deployment never reaches a private, loopback or link-local address, whatever a name resolves to.
    transport: httpWebhookTransport({ allowNonPublic: false }),
    schedule: retrySchedule(),
    now: Date.now,
  };
  return delivery;
}

/** The delivery function's batch of a delivery queue (a subscription's own, or the overflow queue). */
export function handleDeliveryBatch(
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<SQSBatchResponse> {
  const env = environment();
  return deliverSqsBatch(event, {
    client: sqsClient(),
    queueUrl: required(env, 'deliveryQueueUrl', 'DELIVERY_QUEUE_URL'),
    ...(context ? { remainingMs: () => context.getRemainingTimeInMillis() } : {}),
    parkedQueueUrl: required(env, 'parkedQueueUrl', 'PARKED_QUEUE_URL'),
    ports: deliveryPorts(),
    metricNamespace: env.metricNamespace,
    meter: new CapacityMeter(),
  });
}

let folding: FoldPorts | undefined;

function foldPorts(): FoldPorts {
  if (folding) return folding;
  const env = environment();
  const { catalog } = sharedPorts();
  folding = {
    catalog: () => catalog.current(),
    bookkeeping: new DatasetBookkeeping(dynamoDocumentClient(), env.recordsTable),
    now: Date.now,
    finishBatches: batchFinisher(new RecordStore(dynamoDocumentClient(), env.recordsTable), Date.now),
  };
  return folding;
}

/** The fold function's batch of the fold queue: per-value totals folded beside the writes. */
export function handleFoldBatch(event: SQSEvent): Promise<SQSBatchResponse> {
  return foldSqsBatch(event, {
    ports: foldPorts(),
    queue: sharedPorts().folds,
    metricNamespace: environment().metricNamespace,
  });
}
