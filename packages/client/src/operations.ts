/**
 * The operations a caller can send, as the client sees them: name, method, path and whether a dataset code is
 * signed and sent. The service keeps its own route table (which function serves each path, what the grant
 * must allow); a test checks that every route it serves is here with the same path.
 */
export type OperationName = 'get-list' | 'get-one' | 'create' | 'update' | 'execute-sql';

export interface OperationRoute {
  operation: OperationName;
  method: 'POST';
  path: string;
  /** Data operations sign and send a dataset code; custom SQL may. */
  requiresDataset: boolean;
}

export const OPERATIONS: readonly OperationRoute[] = [
  { operation: 'get-list', method: 'POST', path: '/openapi/data/get-list', requiresDataset: true },
  { operation: 'get-one', method: 'POST', path: '/openapi/data/get-one', requiresDataset: true },
  { operation: 'create', method: 'POST', path: '/openapi/data/create', requiresDataset: true },
  { operation: 'update', method: 'POST', path: '/openapi/data/update', requiresDataset: true },
  { operation: 'execute-sql', method: 'POST', path: '/api/custom/executeSql', requiresDataset: false },
];

export function routeFor(operation: OperationName): OperationRoute {
  const route = OPERATIONS.find((r) => r.operation === operation);
  if (!route) throw new Error(`no route for operation ${operation}`);
  return route;
}
