/**
 * A deployment's custom SQL engine (docs/interface.md §20): with `SQL_ENGINE=aurora`, queries run on Aurora MySQL
 * through the RDS Data API, waiting for the mirror through its bookkeeping rows. Only execute-sql's handler
 * imports this file, so no other function's bundle loads the Data API client (aggregate's has no room for it
 * within the cold-start budget, docs/performance.md: it runs the embedded engine in a deployment).
 */
import { rdsDataClient } from '../aws/rds-data';
import { DataApiQueryEngine } from '../mirror/data-api-query-engine';
import { MirrorStateWait } from '../mirror/mirror-state-wait';
import { environment } from '../runtime/environment';
import { useMirrorEngine } from '../sql/mirror-engine';
import type { ApiHandler } from './pipeline';

let registered = false;

/** Registers the engine the environment names, once per container (none: the embedded engine, or one already registered). */
export function registerDeployedMirrorEngine(): void {
  if (registered) return;
  let sql: ReturnType<typeof environment>['sqlEngine'];
  try {
    sql = environment().sqlEngine;
  } catch {
    // A bad environment is reported by the pipeline, through the envelope (3001).
    return;
  }
  registered = true;
  if (!sql) return;
  const target = {
    client: rdsDataClient(),
    resourceArn: sql.clusterArn,
    secretArn: sql.querySecretArn,
    database: sql.database,
  };
  useMirrorEngine(new DataApiQueryEngine({ ...target, feed: new MirrorStateWait(target) }));
}

/** The handler, with the deployment's engine registered before its first request. */
export function withDeployedMirrorEngine(handler: ApiHandler): ApiHandler {
  return (event, context) => {
    registerDeployedMirrorEngine();
    return handler(event, context);
  };
}
