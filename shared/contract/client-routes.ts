/**
 * The `/client/` paths of client-key mode (docs/interface.md §14), derived from the signed route table rather than listed:
 * every signed operation gets the same operation under `/client/` (`/openapi/data/get-list` →
 * `/client/data/get-list`, `/api/custom/executeSql` → `/client/custom/executeSql`), so an operation added to
 * `ROUTES` is reachable both ways with nothing more to write. `GET /client/user/loginUserInfo` and
 * `GET /client/bff/endpoint/{appCode}/{functionName}` exist only here.
 * The CDK stack, the local server, the OpenAPI document and the client all read these lists.
 */
import {
  BFF_ENDPOINT_ROUTE as BFF_ENDPOINT_WIRE_ROUTE,
  clientPathOf,
  LOGIN_USER_INFO_ROUTE as LOGIN_USER_INFO_WIRE_ROUTE,
} from '../../packages/client/src/operations';
import { type AuthMode, type OperationName, ROUTES, type RouteDefinition } from './routes';

export const CLIENT_PATH_PREFIX = '/client/';

/** A signed path's client-mode twin: its first segment becomes `client` (the client package's rule). */
export { clientPathOf };

/** Answers the user a personal access key belongs to; there is no signed equivalent. */
export const LOGIN_USER_INFO_ROUTE: RouteDefinition = {
  ...LOGIN_USER_INFO_WIRE_ROUTE,
  mode: 'client',
  functionFile: 'login-user-info',
  readsRecords: false,
  writes: false,
};

/**
 * A backend function's description, version and modified time (docs/interface.md §15). The application and the
 * function are path parameters: the key must belong to that application (else 1006).
 */
export const BFF_ENDPOINT_ROUTE: RouteDefinition = {
  ...BFF_ENDPOINT_WIRE_ROUTE,
  mode: 'client',
  functionFile: 'bff-endpoint',
  readsRecords: false,
  writes: false,
};

/** Every `/client/` route: the signed operations under `/client/`, then those that exist only in client mode. */
export function clientRoutes(signed: readonly RouteDefinition[] = ROUTES): RouteDefinition[] {
  return [
    ...signed.map((route): RouteDefinition => ({ ...route, path: clientPathOf(route.path), mode: 'client' })),
    LOGIN_USER_INFO_ROUTE,
    BFF_ENDPOINT_ROUTE,
  ];
}

/** Every route of the service, signed and client, each path once. */
export function serviceRoutes(): RouteDefinition[] {
  return [...ROUTES, ...clientRoutes()];
}

/** One route per operation, for what exists once per operation (a function, a handler): the signed one first. */
export function operationRoutes(): RouteDefinition[] {
  const byOperation = new Map<OperationName, RouteDefinition>();
  for (const route of serviceRoutes()) if (!byOperation.has(route.operation)) byOperation.set(route.operation, route);
  return [...byOperation.values()];
}

/** The route of an operation in one mode; `undefined` when the operation has no such path. */
export function routeIn(operation: OperationName, mode: AuthMode): RouteDefinition | undefined {
  return serviceRoutes().find((route) => route.operation === operation && (route.mode ?? 'signed') === mode);
}

/** The mode of a request path (API Gateway's resource path, or the local server's path). */
export function modeOfPath(path: string | undefined | null): AuthMode {
  return path?.startsWith(CLIENT_PATH_PREFIX) ? 'client' : 'signed';
}
