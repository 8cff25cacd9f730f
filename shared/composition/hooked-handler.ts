/**
 * The handler of an operation hooks run in (get-list, get-one, create, batch-create, update; docs/interface.md
 * §15). A hook's `context.client.sql` runs custom SQL in that function: its code is loaded by a hook's first query,
 * and on a stage whose custom SQL runs on Aurora (`SQL_ENGINE=aurora`) the query runs there, as execute-sql's does
 * (lazy-mirror-engine.ts), so a container whose hooks run no SQL starts and runs without either.
 *
 * The `import()` is here, not in hooks/hooked-operation.ts, because every function's pipeline carries that module:
 * in execute-sql's and aggregate's bundles, which load custom SQL at start, esbuild would wrap all of it to run on
 * first use as well, about 4 KB more at their start for nothing.
 */
import { useHookCustomSql } from '../hooks/hooked-operation';
import type { Operation } from '../operation/operation';
import { withLazyDeployedMirrorEngine } from './lazy-mirror-engine';
import { type ApiHandler, createHandler } from './pipeline';

useHookCustomSql(() => import('../operations/execute-sql').then((module) => module.executeSqlOperation));

export function hookedHandler(operation: Operation): ApiHandler {
  return withLazyDeployedMirrorEngine(createHandler(operation));
}
