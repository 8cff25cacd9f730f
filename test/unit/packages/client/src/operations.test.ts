/**
 * The client package carries its own view of the operations, error codes and wire types so that it needs
 * nothing of the service; here they are held to the service's route table, error codes and schemas.
 */

import { TOKEN_LIFETIME_MS } from '../../../../../packages/client/src/browser-token';
import { ErrorCode as ClientErrorCode } from '../../../../../packages/client/src/errors';
import {
  BFF_ENDPOINT_ROUTE,
  type OperationName as ClientOperationName,
  OPERATIONS,
  pathWith,
  routeFor,
  routeIn,
} from '../../../../../packages/client/src/operations';
import { NONCE_HEADER, newNonce, SIGN_VERSION_HEADER } from '../../../../../packages/client/src/signature-v2';
import type {
  BffEndpoint as ClientBffEndpoint,
  DataRecord as ClientDataRecord,
  GetListParams as ClientGetListParams,
  ListResult as ClientListResult,
  SqlParamValue as ClientSqlParamValue,
  SqlResult as ClientSqlResult,
} from '../../../../../packages/client/src/types';
import { clientRoutes } from '../../../../../shared/contract/client-routes';
import { ErrorCode } from '../../../../../shared/contract/errors';
import { buildOpenApiDocument } from '../../../../../shared/contract/openapi-document';
import {
  type BffEndpoint,
  bffEndpointSchema,
  type DataRecord,
  type GetListParams,
  getListParamsSchema,
  type ListResult,
  listResultSchema,
  type SqlParamValue,
  type SqlResult,
} from '../../../../../shared/contract/operation-schemas';
import { type OperationName, ROUTES } from '../../../../../shared/contract/routes';
import { TIMESTAMP_WINDOW_MS } from '../../../../../shared/contract/signed-headers';

it('every route the service serves is in the client with the same method, path and dataset rule', () => {
  for (const route of ROUTES) {
    expect(routeFor(route.operation)).toEqual({
      operation: route.operation,
      method: route.method,
      path: route.path,
      requiresDataset: route.requiresDataset,
    });
  }
  expect(OPERATIONS.map((o) => o.operation).sort()).toEqual(ROUTES.map((r) => r.operation).sort());
});

it('every /client/ route is in the client too, those that exist only there (loginUserInfo, bff endpoint) included', () => {
  const routes = clientRoutes();
  for (const route of routes) {
    expect(routeIn(route.operation, 'client')).toEqual({
      operation: route.operation,
      method: route.method,
      path: route.path,
      requiresDataset: route.requiresDataset,
    });
  }
  const clientOnly = routes.filter((r) => !ROUTES.some((s) => s.operation === r.operation)).map((r) => r.operation);
  expect(clientOnly).toEqual(['login-user-info', 'bff-endpoint']);
  for (const operation of clientOnly) expect(routeIn(operation, 'signed')).toBeUndefined();
});

// Each way round, so that an operation named on one side only fails `npm run lint`.
const everyClientName: OperationName = 'bff-endpoint' as ClientOperationName;
const everyServiceName: ClientOperationName = 'bff-endpoint' as OperationName;

it('fills a path’s segments URL-encoded, one segment each, and refuses a value that would change the path', () => {
  expect([everyClientName, everyServiceName]).toEqual(['bff-endpoint', 'bff-endpoint']);
  expect(pathWith(BFF_ENDPOINT_ROUTE.path, { appCode: 'app-main', functionName: 'mask-email' })).toBe(
    '/client/bff/endpoint/app-main/mask-email',
  );
  expect(pathWith(BFF_ENDPOINT_ROUTE.path, { appCode: 'app main', functionName: 'a/b?c#d%' })).toBe(
    '/client/bff/endpoint/app%20main/a%2Fb%3Fc%23d%25',
  );
  expect(pathWith('/client/user/loginUserInfo', {})).toBe('/client/user/loginUserInfo');
  for (const functionName of [undefined, '', '.', '..', 7]) {
    expect(() => pathWith(BFF_ENDPOINT_ROUTE.path, { appCode: 'app-main', functionName })).toThrow(
      "/client/bff/endpoint/{appCode}/{functionName} needs functionName: a non-empty string other than '.' and '..'",
    );
  }
});

it('the error codes and the token lifetime are the service’s', () => {
  expect(ClientErrorCode).toEqual(ErrorCode);
  expect(TOKEN_LIFETIME_MS).toBe(TIMESTAMP_WINDOW_MS);
});

it('sends the signature-version-2 headers the OpenAPI document declares, with nonces its pattern accepts', () => {
  const { parameters } = (buildOpenApiDocument() as { components: { parameters: Record<string, SchemaParameter> } })
    .components;
  expect([SIGN_VERSION_HEADER, NONCE_HEADER]).toEqual([parameters.SignVersion?.name, parameters.Nonce?.name]);
  expect(newNonce()).toMatch(new RegExp(parameters.Nonce?.schema.pattern as string));
});

interface SchemaParameter {
  name: string;
  schema: { pattern?: string };
}

// Each way round where the shapes must agree: what the client sends the service accepts, what the service
// answers the client reads. `npm run lint` type-checks these assignments.
const sent: ClientGetListParams = { pageSize: 5, ytSortList: [{ amount: 'desc' }], status_in: ['new'] };
const accepted: GetListParams = sent;
const answered: ListResult = listResultSchema.parse({
  paging: { pageSize: 5, totalCount: 1, currentPage: 1 },
  tableData: [
    { id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8', gmt_create: '2024-05-01 09:30:00', gmt_modified: '2024-05-01 09:30:00' },
  ],
  tableColumns: [{ title: 'Amount', dataIndex: 'amount' }],
});
const read: ClientListResult = answered;
const record: ClientDataRecord = answered.tableData[0] as DataRecord;
const sqlAnswer: ClientSqlResult = { execSuccess: true, execResult: [] } satisfies SqlResult;
const param: SqlParamValue = null as ClientSqlParamValue;
const functionRead: ClientBffEndpoint = bffEndpointSchema.parse({
  description: null,
  version: 3,
  gmt_modified: '2024-05-02 14:05:12',
});
const functionAnswered: BffEndpoint = functionRead;

it('the client’s wire types are the schemas’ shapes', () => {
  expect(getListParamsSchema.parse(accepted)).toEqual(sent);
  expect(read.tableData[0]).toBe(record);
  expect([sqlAnswer.execSuccess, param]).toEqual([true, null]);
  expect(functionAnswered).toEqual({ description: null, version: 3, gmt_modified: '2024-05-02 14:05:12' });
});
