/**
 * The operations of the API: path, the Lambda that serves it, and what it needs from authentication.
 * The CDK stack and the local server read this one list. What a caller sees of each operation (its name,
 * method, path and whether it names a dataset) is the client package's (packages/client/src/operations.ts),
 * and each route here starts from it.
 */
import {
  type AuthMode,
  type OperationName,
  type OperationRoute,
  routeFor as wireRoute,
} from '../../packages/client/src/operations';
import type { GrantOperation } from './codes';

/**
 * The operations' names, and how a path authenticates: signed headers (docs/interface.md §3) or a personal access
 * key on `/client/` (§14). Both are the client package's.
 */
export type { AuthMode, OperationName };

/**
 * An operation as the caller sees it (`operation`, `method`, `path`, `requiresDataset`; the path is API Gateway's
 * resource path, a `{name}` segment a path parameter, see `pathParametersOf`), and how the service serves it.
 */
export interface RouteDefinition extends OperationRoute {
  /** Signed when absent; the `/client/` routes (see client-routes.ts) are derived from this list. */
  mode?: AuthMode;
  /** Module under `functions/` exporting `handler`. */
  functionFile: string;
  /** What the application's grant on the dataset must allow (data operations). */
  grantOperation?: GrantOperation;
  /** `false` for an operation that never reads the records table (decides the function's table permissions). */
  readsRecords?: boolean;
  /** Whether the operation may write records (decides the function's table permissions). */
  writes: boolean;
  /** Whether it keeps a dataset's bookkeeping items up to date (get-list moves the record-count checkpoint). */
  writesDatasetMeta?: boolean;
  /** Whether it reads the change log (the events table: the feed, docs/interface.md §18). */
  readsChangeLog?: boolean;
  /** Whether it writes new records with BatchWriteItem (batch create). */
  batchWrites?: boolean;
  /** Whether it answers one record with its revision as `ETag` (docs/interface.md §18). */
  answersRevision?: boolean;
  /** Whether it accepts an `If-Match` header (docs/interface.md §18): the write applies only at that revision. */
  conditional?: boolean;
  /** Whether it accepts an `Idempotency-Key` header (docs/interface.md §13): a retry answers the first outcome again. */
  idempotent?: boolean;
}

export const ROUTES: readonly RouteDefinition[] = [
  {
    ...wireRoute('get-list'),
    functionFile: 'get-list',
    grantOperation: 'read',
    writes: false,
    writesDatasetMeta: true,
  },
  {
    ...wireRoute('get-one'),
    functionFile: 'get-one',
    grantOperation: 'read',
    writes: false,
    answersRevision: true,
  },
  {
    ...wireRoute('create'),
    functionFile: 'create',
    grantOperation: 'create',
    writes: true,
    idempotent: true,
    answersRevision: true,
  },
  {
    ...wireRoute('batch-create'),
    functionFile: 'batch-create',
    grantOperation: 'create',
    writes: true,
    batchWrites: true,
    idempotent: true,
  },
  {
    ...wireRoute('update'),
    functionFile: 'update',
    grantOperation: 'update',
    writes: true,
    idempotent: true,
    answersRevision: true,
    conditional: true,
  },
  {
    ...wireRoute('execute-sql'),
    functionFile: 'execute-sql',
    writes: false,
  },
  {
    // Runs on custom SQL's engine over the caller's readable copy of the dataset (docs/interface.md §21).
    ...wireRoute('aggregate'),
    functionFile: 'aggregate',
    grantOperation: 'read',
    writes: false,
  },
  {
    ...wireRoute('changes'),
    functionFile: 'changes',
    grantOperation: 'read',
    readsRecords: false,
    readsChangeLog: true,
    writes: false,
  },
  {
    // The indexes of the datasets the caller may read and how far their builds have come (docs/interface.md §17):
    // the catalog and the builds' progress, both in the catalog table.
    ...wireRoute('indexes'),
    functionFile: 'indexes',
    writes: false,
    readsRecords: false,
  },
];

/** The names of a path's `{name}` segments, in order: what a GET route reads instead of a body. */
export function pathParametersOf(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z][A-Za-z0-9]*)\}/g)].map((match) => match[1] as string);
}

export function routeFor(operation: OperationName): RouteDefinition {
  const route = ROUTES.find((r) => r.operation === operation);
  if (!route) throw new Error(`no route for operation ${operation}`);
  return route;
}
