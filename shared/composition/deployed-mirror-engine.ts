/**
 * A deployment's custom SQL engine (docs/interface.md §20): with `SQL_ENGINE=aurora`, queries run on Aurora MySQL
 * through the RDS Data API, waiting for the mirror through its bookkeeping rows. execute-sql's handler imports
 * this file; the other functions that run SQL (aggregate, and the operations hooks run in) load it on their first
 * statement (lazy-mirror-engine.ts), so their cold start carries none of it.
 */
import { rdsDataClient } from '../aws/rds-data';
import { DataApiQueryEngine } from '../mirror/data-api-query-engine';
import { MirrorStateWait } from '../mirror/mirror-state-wait';
import { type AuroraSqlEngine, environment } from '../runtime/environment';
import { type MirrorQueryEngine, useMirrorEngine } from '../sql/mirror-engine';
import type { ApiHandler } from './pipeline';

let registered = false;

/** The Aurora engine the environment names: queries through the Data API as the query user. */
export function deployedMirrorEngine(sql: AuroraSqlEngine): MirrorQueryEngine {
  const target = {
    client: rdsDataClient(),
    resourceArn: sql.clusterArn,
    secretArn: sql.querySecretArn,
    database: sql.database,
  };
  return new DataApiQueryEngine({ ...target, feed: new MirrorStateWait(target) });
}

/** Registers the engine the environment names, once per container (none: the embedded engine, or one already registered). */
export function registerDeployedMirrorEngine(): void {
  if (registered) return;
  let sql: AuroraSqlEngine | undefined;
  try {
    sql = environment().sqlEngine;
  } catch {
    // A bad environment is reported by the pipeline, through the envelope (3001).
    return;
  }
  registered = true;
  if (sql) useMirrorEngine(deployedMirrorEngine(sql));
}

/** The handler, with the deployment's engine registered before its first request. */
export function withDeployedMirrorEngine(handler: ApiHandler): ApiHandler {
  return (event, context) => {
    registerDeployedMirrorEngine();
    return handler(event, context);
  };
}
