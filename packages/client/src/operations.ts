/**
 * The operations a caller can send: name, method, path and whether a dataset code is signed and sent. The
 * service builds its route table from these (shared/contract/routes.ts adds which function serves each path and
 * what the grant must allow), so the two cannot disagree.
 *
 * Two ways in: the signed paths (`OPERATIONS`), and client-key mode, where a personal access key goes in
 * `X-User-AK` to each operation's `/client/` twin (`/openapi/data/get-list` → `/client/data/get-list`), plus
 * `GET /client/user/loginUserInfo` and `GET /client/bff/endpoint/{appCode}/{functionName}`, which exist only there.
 */
export type OperationName =
  | 'get-list'
  | 'get-one'
  | 'create'
  | 'batch-create'
  | 'update'
  | 'execute-sql'
  | 'aggregate'
  | 'changes'
  | 'indexes'
  | 'login-user-info'
  | 'bff-endpoint';

/** How a request authenticates: signed headers, or a personal access key (client-key mode). */
export type AuthMode = 'signed' | 'client';

export interface OperationRoute {
  operation: OperationName;
  method: 'POST' | 'GET';
  /** `{name}` segments are filled in from the request's fields (`pathWith`). */
  path: string;
  /** Data operations sign and send a dataset code; custom SQL and the index status may. */
  requiresDataset: boolean;
}

/** The signed operations. */
export const OPERATIONS: readonly OperationRoute[] = [
  { operation: 'get-list', method: 'POST', path: '/openapi/data/get-list', requiresDataset: true },
  { operation: 'get-one', method: 'POST', path: '/openapi/data/get-one', requiresDataset: true },
  { operation: 'create', method: 'POST', path: '/openapi/data/create', requiresDataset: true },
  { operation: 'batch-create', method: 'POST', path: '/openapi/data/batch-create', requiresDataset: true },
  { operation: 'update', method: 'POST', path: '/openapi/data/update', requiresDataset: true },
  { operation: 'execute-sql', method: 'POST', path: '/api/custom/executeSql', requiresDataset: false },
  // The platform SDK's aggregate (§21): SUM, AVG, COUNT, MAX, MIN over one dataset, grouped and paged.
  { operation: 'aggregate', method: 'POST', path: '/openapi/data/aggregate', requiresDataset: true },
  // The change feed (§18): every dataset the caller may read, or the one a datasetCode names.
  { operation: 'changes', method: 'POST', path: '/openapi/data/changes', requiresDataset: false },
  { operation: 'indexes', method: 'POST', path: '/openapi/data/indexes', requiresDataset: false },
];

/** Answers the user a personal access key belongs to; client-key mode only. */
export const LOGIN_USER_INFO_ROUTE: OperationRoute = {
  operation: 'login-user-info',
  method: 'GET',
  path: '/client/user/loginUserInfo',
  requiresDataset: false,
};

/**
 * Answers a backend function's description, version and modified time; client-key mode only. The application and
 * the function are path segments, and the key must belong to that application.
 */
export const BFF_ENDPOINT_ROUTE: OperationRoute = {
  operation: 'bff-endpoint',
  method: 'GET',
  path: '/client/bff/endpoint/{appCode}/{functionName}',
  requiresDataset: false,
};

/** The routes that exist only in client-key mode. */
const CLIENT_ONLY_ROUTES: readonly OperationRoute[] = [LOGIN_USER_INFO_ROUTE, BFF_ENDPOINT_ROUTE];

/** A signed path's client-key twin: its first segment becomes `client`. */
export function clientPathOf(signedPath: string): string {
  const rest = signedPath.indexOf('/', 1);
  if (!signedPath.startsWith('/') || rest < 0) throw new Error(`not an operation path: ${signedPath}`);
  return `/client${signedPath.slice(rest)}`;
}

/** The signed route of an operation. */
export function routeFor(operation: OperationName): OperationRoute {
  const route = OPERATIONS.find((r) => r.operation === operation);
  if (!route) throw new Error(`no signed route for operation ${operation}`);
  return route;
}

/** The route of an operation in one mode; `undefined` when the operation has no such path. */
export function routeIn(operation: OperationName, mode: AuthMode): OperationRoute | undefined {
  if (mode === 'signed') return OPERATIONS.find((r) => r.operation === operation);
  const only = CLIENT_ONLY_ROUTES.find((r) => r.operation === operation);
  if (only) return only;
  const signed = OPERATIONS.find((r) => r.operation === operation);
  return signed && { ...signed, path: clientPathOf(signed.path) };
}

/**
 * A route's path with each `{name}` segment replaced by the URL-encoded value of that field, so that a name with
 * `/`, `?` or a space stays one segment. A missing or empty value, or `.` and `..` (which a URL resolves away), is
 * an error: the request would reach another path.
 */
export function pathWith(path: string, fields: Record<string, unknown>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = fields[name];
    if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
      throw new Error(`${path} needs ${name}: a non-empty string other than '.' and '..'`);
    }
    return encodeURIComponent(value);
  });
}
