/**
 * The operations of the API: path, the Lambda that serves it, and what it needs from authentication.
 * The CDK stack and the local server read this one list; the client package keeps the caller's view of it
 * (packages/client/src/operations.ts), which a test holds to this one.
 */
import type { GrantOperation } from './codes';

export type OperationName =
  | 'get-list'
  | 'get-one'
  | 'create'
  | 'batch-create'
  | 'update'
  | 'execute-sql'
  | 'login-user-info'
  | 'bff-endpoint';

/** How a path authenticates: signed headers (docs/interface.md §3) or a personal access key on `/client/` (§14). */
export type AuthMode = 'signed' | 'client';

export interface RouteDefinition {
  operation: OperationName;
  method: 'POST' | 'GET';
  /** API Gateway's resource path: a `{name}` segment is a path parameter (see `pathParametersOf`). */
  path: string;
  /** Signed when absent; the `/client/` routes (see client-routes.ts) are derived from this list. */
  mode?: AuthMode;
  /** Module under `functions/` exporting `handler`. */
  functionFile: string;
  /** Data operations sign and send a dataset code; custom SQL may. */
  requiresDataset: boolean;
  /** What the application's grant on the dataset must allow (data operations). */
  grantOperation?: GrantOperation;
  /** `false` for an operation that never reads the records table (decides the function's table permissions). */
  readsRecords?: boolean;
  /** Whether the operation may write records (decides the function's table permissions). */
  writes: boolean;
  /** Whether it keeps a dataset's bookkeeping items up to date (get-list moves the record-count checkpoint). */
  writesDatasetMeta?: boolean;
  /** Whether it writes new records with BatchWriteItem (batch create). */
  batchWrites?: boolean;
  /** Whether it accepts an `Idempotency-Key` header (contract §13): a retry answers the first outcome again. */
  idempotent?: boolean;
}

export const ROUTES: readonly RouteDefinition[] = [
  {
    operation: 'get-list',
    method: 'POST',
    path: '/openapi/data/get-list',
    functionFile: 'get-list',
    requiresDataset: true,
    grantOperation: 'read',
    writes: false,
    writesDatasetMeta: true,
  },
  {
    operation: 'get-one',
    method: 'POST',
    path: '/openapi/data/get-one',
    functionFile: 'get-one',
    requiresDataset: true,
    grantOperation: 'read',
    writes: false,
  },
  {
    operation: 'create',
    method: 'POST',
    path: '/openapi/data/create',
    functionFile: 'create',
    requiresDataset: true,
    grantOperation: 'create',
    writes: true,
    idempotent: true,
  },
  {
    operation: 'batch-create',
    method: 'POST',
    path: '/openapi/data/batch-create',
    functionFile: 'batch-create',
    requiresDataset: true,
    grantOperation: 'create',
    writes: true,
    batchWrites: true,
    idempotent: true,
  },
  {
    operation: 'update',
    method: 'POST',
    path: '/openapi/data/update',
    functionFile: 'update',
    requiresDataset: true,
    grantOperation: 'update',
    writes: true,
    idempotent: true,
  },
  {
    operation: 'execute-sql',
    method: 'POST',
    path: '/api/custom/executeSql',
    functionFile: 'execute-sql',
    requiresDataset: false,
    writes: false,
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
