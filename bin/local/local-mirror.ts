/**
 * `npm start -- --sql-engine mysql://…` (docs/interface.md §20): custom SQL runs on that MySQL server, over a
 * mirror of the datasets this process keeps from the change log (shared/mirror/), and the handlers of this
 * process find the engine through sql/mirror-engine.ts.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CachedCatalogProvider } from '../../shared/catalog/catalog-provider';
import { readDeployedCatalog } from '../../shared/catalog-store/catalog-store';
import { MirrorFeed } from '../../shared/mirror/mirror-feed';
import { MirrorTables } from '../../shared/mirror/mirror-tables';
import { connectMysql, parseMysqlUrl, sessionOf } from '../../shared/mirror/mysql-connection';
import { MysqlQueryEngine } from '../../shared/mirror/mysql-query-engine';
import { useMirrorEngine } from '../../shared/sql/mirror-engine';
import { IndexBuildStore } from '../../shared/storage/index-build-store';
import type { LocalChangeLog } from './local-change-log';

export interface LocalMirrorOptions {
  /** `mysql://user:password@host:port/db[?socketPath=…]`. */
  url: string;
  documents: DynamoDBDocumentClient;
  tables: { records: string; catalog: string };
  changeLog: LocalChangeLog;
  /** Records a second the backfill of a dataset reads and writes at most (default 2,000; 0 unpaced). */
  backfillRecordsPerSecond?: number;
  /** How often the mirror applies the change log when no query asks it to (ms, default 1,000). */
  idleMs?: number;
  onError?: (error: unknown) => void;
}

export interface LocalMirror {
  feed: MirrorFeed;
  /** The mirror's description without its password. */
  database: string;
  stop(): Promise<void>;
}

export async function startLocalMirror(options: LocalMirrorOptions): Promise<LocalMirror> {
  const target = parseMysqlUrl(options.url);
  const connections = await connectMysql(target);
  const catalog = new CachedCatalogProvider({
    load: () => readDeployedCatalog(options.documents, options.tables.catalog),
    ttlMs: 1_000,
  });
  const tables = new MirrorTables(sessionOf(connections.writer), (table) => connections.grantRead(table));
  const feed = new MirrorFeed({
    tables,
    datasets: async () => (await catalog.current()).allDatasets(),
    changeRetentionDays: async () => (await catalog.current()).changeRetentionDays,
    events: options.changeLog.events,
    logged: () => options.changeLog.logged(),
    backfill: {
      records: new IndexBuildStore(options.documents, options.tables),
      recordsPerSecond: options.backfillRecordsPerSecond ?? 2_000,
    },
    ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
    onError: options.onError ?? ((error) => process.stderr.write(`MySQL mirror: ${(error as Error).message}\n`)),
    onBackfillAgain: (datasetCode, reason) =>
      process.stderr.write(`MySQL mirror: dataset '${datasetCode}': ${reason}\n`),
  });
  feed.start();
  useMirrorEngine(
    new MysqlQueryEngine({
      database: target.database,
      reader: connections.reader,
      killer: connections.killer,
      feed,
    }),
  );
  return {
    feed,
    database: target.database,
    stop: async () => {
      useMirrorEngine(undefined);
      await feed.stop();
      await connections.close();
    },
  };
}
