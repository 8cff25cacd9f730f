/**
 * The operations of the API: path, the Lambda that serves it, and what it needs from authentication.
 * The CDK stack, the local server and the client all read this one list.
 */
import type { GrantOperation } from './codes';

export type OperationName = 'get-list' | 'get-one' | 'create' | 'update' | 'execute-sql';

export interface RouteDefinition {
  operation: OperationName;
  method: 'POST';
  path: string;
  /** Module under `functions/` exporting `handler`. */
  functionFile: string;
  /** Data operations sign and send a dataset code; custom SQL may. */
  requiresDataset: boolean;
  /** What the application's grant on the dataset must allow (data operations). */
  grantOperation?: GrantOperation;
  /** Whether the operation may write records (decides the function's table permissions). */
  writes: boolean;
  /** Whether it keeps a dataset's bookkeeping items up to date (get-list moves the record-count checkpoint). */
  writesDatasetMeta?: boolean;
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
  },
  {
    operation: 'update',
    method: 'POST',
    path: '/openapi/data/update',
    functionFile: 'update',
    requiresDataset: true,
    grantOperation: 'update',
    writes: true,
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

export function routeFor(operation: OperationName): RouteDefinition {
  const route = ROUTES.find((r) => r.operation === operation);
  if (!route) throw new Error(`no route for operation ${operation}`);
  return route;
}
