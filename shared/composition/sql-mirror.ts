/**
 * The composition root of the deployment's mirror function (docs/interface.md §20; mirror/mirror-run.ts): a schedule
 * starts it every minute with the cluster, database and writer secret it writes through (the schedule's input, set
 * by the stack), and it reads the change log, the records (a backfill) and the catalog from the environment's
 * tables. It writes the mirror through the RDS Data API as the writer user, whose secret no other function reads.
 * A run whose every round failed fails the invocation, which goes to the function's dead-letter queue.
 */
import type { Context } from 'aws-lambda';
import { dynamoDocumentClient } from '../aws/dynamodb';
import { rdsDataClient } from '../aws/rds-data';
import { CachedCatalogProvider } from '../catalog/catalog-provider';
import { readDeployedCatalog } from '../catalog-store/catalog-store';
import { dataApiSession } from '../mirror/data-api-session';
import { runMirror } from '../mirror/mirror-run';
import { MirrorTables } from '../mirror/mirror-tables';
import { logMirrorRun, type MirrorRunEntry } from '../observability/mirror-metrics';
import { environment, MissingEnvironmentError } from '../runtime/environment';
import { EventStore } from '../storage/event-store';
import { IndexBuildStore } from '../storage/index-build-store';

/** What the schedule sends: where the mirror is and who writes it. */
export interface MirrorTargetInput {
  clusterArn: string;
  database: string;
  writerSecretArn: string;
}

/** A run keeps the mirror in step this long: a little more than the schedule's minute, so runs overlap. */
export const MIRROR_RUN_MS = 65_000;
/** The run stops this long before the function's timeout, leaving its backfill time to save its page. */
const MARGIN_MS = 20_000;
/**
 * How long after a round starts the change log holds every write acknowledged before it: the records table's
 * stream reaches the change log's writer within a second while it keeps up (its lag is alarmed on at 5 minutes).
 */
export const CHANGE_LOG_DELAY_MS = 1_000;
/** Records a second a backfill reads from the records table and upserts. */
export const BACKFILL_RECORDS_PER_SECOND = 1_000;

let catalog: CachedCatalogProvider | undefined;

function isTarget(input: unknown): input is MirrorTargetInput {
  const target = input as Partial<MirrorTargetInput> | null;
  return (
    typeof target?.clusterArn === 'string' &&
    typeof target.database === 'string' &&
    typeof target.writerSecretArn === 'string'
  );
}

export async function handleMirrorRun(input: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) {
  if (!isTarget(input)) {
    throw new Error(
      'the mirror function is started with {clusterArn, database, writerSecretArn} (its schedule sends them)',
    );
  }
  const env = environment();
  const client = dynamoDocumentClient();
  if (!env.eventsTable) throw new MissingEnvironmentError('EVENTS_TABLE', 'the mirror applies the change log');
  catalog ??= new CachedCatalogProvider({ load: () => readDeployedCatalog(client, env.catalogTable) });
  const provider = catalog;
  const session = dataApiSession({
    client: rdsDataClient(),
    resourceArn: input.clusterArn,
    secretArn: input.writerSecretArn,
    database: input.database,
  });
  let entry: MirrorRunEntry;
  try {
    entry = await runMirror({
      // The query user reads the whole mirror database (granted once, lib/sql-query-user.ts): no grant per table.
      tables: new MirrorTables(session),
      datasets: async () => (await provider.current()).allDatasets(),
      changeRetentionDays: async () => (await provider.current()).changeRetentionDays,
      events: new EventStore(client, env.eventsTable, env.changeSettleMs),
      logged: () => new Promise((resolve) => setTimeout(resolve, CHANGE_LOG_DELAY_MS)),
      backfill: {
        records: new IndexBuildStore(client, { records: env.recordsTable, catalog: env.catalogTable }),
        recordsPerSecond: BACKFILL_RECORDS_PER_SECOND,
      },
      runMs: MIRROR_RUN_MS,
      remainingMs: () => context.getRemainingTimeInMillis(),
      marginMs: MARGIN_MS,
    });
  } catch (error) {
    logMirrorRun(
      { rounds: 0, failedRounds: 1, backfilling: 0, backfilledAgain: [], durationMs: 0, error: String(error) },
      env.metricNamespace,
    );
    throw error;
  }
  logMirrorRun(entry, env.metricNamespace);
  if (entry.rounds > 0 && entry.failedRounds === entry.rounds) {
    throw new Error(`every round of the mirror failed; the last: ${entry.error ?? 'unknown'}`);
  }
  return { rounds: entry.rounds, failedRounds: entry.failedRounds };
}
