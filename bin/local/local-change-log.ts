/**
 * `npm start`'s change log and webhook deliveries (docs/interface.md §18), in the server's own process: what the
 * deployment's stream function and delivery queue do, with the same code. The records table's stream (the embedded
 * store's twin, or the Streams API of another endpoint) is read by the stream poller from its checkpoint; each
 * batch goes to the change log's writer (shared/changes/change-stream.ts), which logs events and queues deliveries
 * on the local twin of the SQS queue. Over the embedded store the writer is its events' only writer, and the store
 * stops with it (a `kill -9` leaves no write of it in flight), so it logs each batch whole, with one read and batch
 * writes (ChangeLogWriting); over another endpoint, one conditional write per event, as the deployment does. The
 * deliveries sign and send them on the deployment's retry schedule (which `webhookRetryScale` may shorten, for
 * tests). The writer's folds of per-value totals go to the local twin of the fold queue
 * (shared/changes/local-value-folds.ts), which runs them in this process when they are due.
 */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import { endpointClientConfig } from '../../shared/aws/dynamodb';
import { CachedCatalogProvider } from '../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../shared/catalog/schema';
import { readDeployedCatalog } from '../../shared/catalog-store/catalog-store';
import { logItemChanges } from '../../shared/changes/change-stream';
import { DynamoDbStreamsSource } from '../../shared/changes/dynamodb-streams-source';
import { LocalDeliveries } from '../../shared/changes/local-deliveries';
import { LocalValueFolds } from '../../shared/changes/local-value-folds';
import { retrySchedule } from '../../shared/changes/retry-schedule';
import { type ChangeStreamSource, StreamPoller } from '../../shared/changes/stream-poller';
import { ConfigWebhookSecrets } from '../../shared/changes/webhook-secrets';
import { httpWebhookTransport } from '../../shared/changes/webhook-transport';
import { batchFinisher } from '../../shared/composition/batch-finisher';
import { CapacityMeter } from '../../shared/observability/capacity-meter';
import { logChangeBatch } from '../../shared/observability/change-metrics';
import { DatasetBookkeeping } from '../../shared/storage/dataset-bookkeeping';
import { EventStore } from '../../shared/storage/event-store';
import { LocalDeliveryQueueItems } from '../../shared/storage/local-delivery-queue';
import { RecordStore } from '../../shared/storage/record-store';
import { StreamCheckpoints } from '../../shared/storage/stream-checkpoints';
import { WebhookStateStore } from '../../shared/storage/webhook-state';
import type { EmbeddedDynamo, ExternalDynamoOptions } from './embedded-dynamo';

export interface LocalChangeLogOptions {
  dynamo: EmbeddedDynamo;
  documents: DynamoDBDocumentClient;
  config: CatalogConfig;
  tables: { records: string; catalog: string; events: string };
  /** Another endpoint (its Streams API is read); the embedded store's twin without it. */
  external?: ExternalDynamoOptions;
  metricNamespace: string;
  /** Every wait of the retry schedule multiplied by this (1: the deployment's schedule). */
  webhookRetryScale?: number;
  /** How long after its position an event may still be written (the feed's handlers are given the same). */
  settleMs: number;
  /** How often a stream with nothing new is read again (ms); the embedded twin also wakes the reader on a write. */
  idleMs?: number;
  /** The clock folds of per-value totals run by (default Date.now); tests that drive the handlers' clock pass it. */
  clock?: () => number;
}

export interface LocalChangeLog {
  /**
   * Resolves once every change made so far is logged, every delivery due now is made (or waits its retry), and
   * every fold of per-value totals due by the clock has run.
   */
  settled(): Promise<void>;
  /** Resolves once every change made before the call is in the change log (the MySQL mirror reads it). */
  logged(): Promise<void>;
  /** The change log's events, as its readers read them. */
  events: EventStore;
  stop(): Promise<void>;
}

export async function startLocalChangeLog(options: LocalChangeLogOptions): Promise<LocalChangeLog> {
  const { documents, tables } = options;
  const catalog = new CachedCatalogProvider({
    load: () => readDeployedCatalog(documents, tables.catalog),
    ttlMs: 1_000,
  });
  const events = new EventStore(documents, tables.events, options.settleMs);
  const nextPosition = monotonicFactory();
  const folds = new LocalValueFolds({
    ports: {
      catalog: () => catalog.current(),
      bookkeeping: new DatasetBookkeeping(documents, tables.records),
      now: options.clock ?? Date.now,
      finishBatches: batchFinisher(new RecordStore(documents, tables.records), options.clock ?? Date.now),
    },
    metricNamespace: options.metricNamespace,
  });
  const deliveries = new LocalDeliveries({
    items: new LocalDeliveryQueueItems(documents, tables.events),
    ports: {
      catalog: () => catalog.current(),
      events,
      state: new WebhookStateStore(documents, tables.events),
      secrets: new ConfigWebhookSecrets(options.config),
      transport: httpWebhookTransport({ allowNonPublic: true }),
      schedule: retrySchedule(options.webhookRetryScale ?? 1),
      now: Date.now,
    },
    metricNamespace: options.metricNamespace,
    meter: () => new CapacityMeter(),
  });
  const source: ChangeStreamSource =
    options.dynamo.stream?.source(tables.records) ??
    new DynamoDbStreamsSource(
      new DynamoDBStreamsClient(
        endpointClientConfig(
          options.dynamo.endpoint,
          options.external?.region ?? 'local',
          options.external?.credentialsConfigured ?? false,
        ),
      ),
      tables.records,
    );
  const poller = new StreamPoller({
    source,
    checkpoints: new StreamCheckpoints(documents, tables.events),
    idleMs: options.idleMs ?? (options.dynamo.stream ? 5_000 : 500),
    retryMs: 1_000,
    handle: async (records) => {
      const meter = new CapacityMeter();
      const started = performance.now();
      const outcome = await logItemChanges(
        records,
        {
          catalog: () => catalog.current(),
          events,
          deliveries,
          folds,
          nextPosition: () => nextPosition(),
          now: Date.now,
        },
        meter,
        { soleWriter: options.dynamo.stream !== undefined },
      );
      logChangeBatch(
        {
          records: records.length,
          logged: outcome.logged,
          duplicates: outcome.duplicates,
          queued: outcome.queued,
          failed:
            outcome.failedAt === undefined
              ? 0
              : records.length - records.findIndex((r) => r.dynamodb?.SequenceNumber === outcome.failedAt),
          writeUnits: meter.writeUnits,
          readUnits: meter.readUnits,
          ...(outcome.lagMs === undefined ? {} : { lagMs: outcome.lagMs }),
          durationMs: performance.now() - started,
          ...(outcome.error ? { error: outcome.error.message } : {}),
        },
        options.metricNamespace,
      );
      return outcome;
    },
  });
  await deliveries.start();
  poller.start();
  return {
    settled: async () => {
      await poller.caughtUp();
      await deliveries.idle();
      await folds.idle();
    },
    logged: () => poller.caughtUp(),
    events,
    stop: async () => {
      await poller.stop();
      await deliveries.stop();
      await folds.stop();
    },
  };
}
