/**
 * The composition root of a container: builds the catalog provider, key store, record store and quota store
 * once, from the environment, and hands them to every request.
 */
import { READABLE_RESPONSE_HEADERS } from '../../packages/client/src/headers';
import { FileKeyStore } from '../auth/file-key-store';
import type { KeyStore } from '../auth/key-store';
import { SecretsManagerKeyStore } from '../auth/secrets-manager-key-store';
import { dynamoClient, dynamoDocumentClient } from '../aws/dynamodb';
import { secretsManagerClient } from '../aws/secrets-manager';
import { CachedCatalogProvider, type CatalogProvider } from '../catalog/catalog-provider';
import { readDeployedCatalog } from '../catalog-store/catalog-store';
import { parseStoredConfig, readConfigFile } from '../catalog-store/read-config';
import { environment } from '../runtime/environment';
import { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { EventStore } from '../storage/event-store';
import { IdempotencyStore } from '../storage/idempotency-store';
import { IndexBuildStore } from '../storage/index-build-store';
import { ListReader } from '../storage/list-reader';
import { DynamoNonceStore, type NonceStore } from '../storage/nonce-store';
import { QuotaStore } from '../storage/quota-store';
import { RecordBatchStore } from '../storage/record-batch-store';
import { RecordStore } from '../storage/record-store';

export interface RuntimePorts {
  catalog: CatalogProvider;
  keys: KeyStore;
  records: RecordStore;
  lists: ListReader;
  bookkeeping: DatasetBookkeeping;
  /** Batch create's chunked writes. */
  recordBatches: RecordBatchStore;
  /** Requests sent with an Idempotency-Key (kept in the records table). */
  idempotency: IdempotencyStore;
  /** Index builds' progress (kept in the catalog table). */
  indexBuilds: IndexBuildStore;
  quota: QuotaStore;
  /** The change log, read by the feed (docs/interface.md §18); absent where EVENTS_TABLE is not set. */
  changeLog?: EventStore;
  /** Single-use nonces of signature version 2; without it, version-2 requests cannot be verified (3001). */
  nonces?: NonceStore;
  metricNamespace: string;
  /** Headers every response carries (CORS for browser callers). */
  responseHeaders: Record<string, string>;
}

/** Response headers a browser may read. */
export const EXPOSED_HEADERS = READABLE_RESPONSE_HEADERS.join(', ');

let ports: RuntimePorts | undefined;

export function runtimePorts(): RuntimePorts {
  if (ports) return ports;
  const env = environment();
  const client = dynamoDocumentClient();
  const keys: KeyStore =
    env.keyStore === 'file'
      ? new FileKeyStore(readConfigFile(env.keyFile as string, parseStoredConfig))
      : new SecretsManagerKeyStore({
          client: secretsManagerClient(),
          secretPrefix: env.secretPrefix as string,
          defaultSecretId: env.defaultSecretId as string,
        });
  ports = {
    catalog: new CachedCatalogProvider({
      load: () => readDeployedCatalog(client, env.catalogTable),
      ...(env.catalogCacheMs === undefined ? {} : { ttlMs: env.catalogCacheMs }),
    }),
    keys,
    records: new RecordStore(client, env.recordsTable),
    lists: new ListReader(
      client,
      env.recordsTable,
      env.listReadBudget === undefined ? {} : { listReadBudget: env.listReadBudget },
    ),
    bookkeeping: new DatasetBookkeeping(client, env.recordsTable),
    recordBatches: new RecordBatchStore(client, env.recordsTable),
    idempotency: new IdempotencyStore(client, env.recordsTable),
    indexBuilds: new IndexBuildStore(client, { records: env.recordsTable, catalog: env.catalogTable }),
    quota: new QuotaStore(dynamoClient(), env.quotaTable),
    ...(env.eventsTable ? { changeLog: new EventStore(client, env.eventsTable, env.changeSettleMs) } : {}),
    nonces: new DynamoNonceStore(client, env.quotaTable),
    metricNamespace: env.metricNamespace,
    responseHeaders: env.corsAllowOrigin
      ? {
          'Access-Control-Allow-Origin': env.corsAllowOrigin,
          'Access-Control-Expose-Headers': EXPOSED_HEADERS,
          ...(env.corsAllowOrigin === '*' ? {} : { Vary: 'Origin' }),
        }
      : {},
  };
  return ports;
}
