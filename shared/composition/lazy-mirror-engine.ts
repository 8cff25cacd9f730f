/**
 * The deployment's MySQL engine (docs/interface.md §20) for a function that may never need it: aggregate (§21) on a
 * stage whose custom SQL runs on Aurora, get-list for a related condition or sort past its read budget only (§21),
 * and every operation a hook runs in for a hook's `context.client.sql` (hooked-handler.ts). The engine is registered on the first request from the environment alone; the Data API client and the
 * engine's code (deployed-mirror-engine.ts) are loaded by the first statement, so a container that never needs
 * MySQL starts and runs without them.
 */
import { type AuroraSqlEngine, environment } from '../runtime/environment';
import { type MirrorQueryEngine, useMirrorEngine } from '../sql/mirror-engine';
import type { ApiHandler } from './pipeline';

let registered = false;

/** An engine that loads the deployed one on its first statement. */
export function lazyDeployedMirrorEngine(sql: AuroraSqlEngine): MirrorQueryEngine {
  let loaded: Promise<MirrorQueryEngine> | undefined;
  return {
    database: sql.database,
    async run(request) {
      loaded ??= import('./deployed-mirror-engine').then((module) => module.deployedMirrorEngine(sql));
      return (await loaded).run(request);
    },
  };
}

/** The handler, with the deployment's engine registered (lazily) before its first request. */
export function withLazyDeployedMirrorEngine(handler: ApiHandler): ApiHandler {
  return (event, context) => {
    if (!registered) {
      let sql: AuroraSqlEngine | undefined;
      try {
        sql = environment().sqlEngine;
        registered = true;
      } catch {
        // A bad environment is reported by the pipeline, through the envelope (3001).
      }
      if (sql) useMirrorEngine(lazyDeployedMirrorEngine(sql));
    }
    return handler(event, context);
  };
}
