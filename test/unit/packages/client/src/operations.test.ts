/**
 * The client package carries its own view of the operations, error codes and wire types so that it needs
 * nothing of the service; here they are held to the service's route table, error codes and schemas.
 */

import { TOKEN_LIFETIME_MS } from '../../../../../packages/client/src/browser-token';
import { ErrorCode as ClientErrorCode } from '../../../../../packages/client/src/errors';
import { OPERATIONS, routeFor } from '../../../../../packages/client/src/operations';
import { NONCE_HEADER, newNonce, SIGN_VERSION_HEADER } from '../../../../../packages/client/src/signature-v2';
import type {
  DataRecord as ClientDataRecord,
  GetListParams as ClientGetListParams,
  ListResult as ClientListResult,
  SqlParamValue as ClientSqlParamValue,
  SqlResult as ClientSqlResult,
} from '../../../../../packages/client/src/types';
import { ErrorCode } from '../../../../../shared/contract/errors';
import { buildOpenApiDocument } from '../../../../../shared/contract/openapi-document';
import {
  type DataRecord,
  type GetListParams,
  getListParamsSchema,
  type ListResult,
  listResultSchema,
  type SqlParamValue,
  type SqlResult,
} from '../../../../../shared/contract/operation-schemas';
import { ROUTES } from '../../../../../shared/contract/routes';
import { TIMESTAMP_WINDOW_MS } from '../../../../../shared/contract/signed-headers';

it('every route the service serves is in the client with the same method, path and dataset rule', () => {
  for (const route of ROUTES) {
    // The signed routes only: the service's operation names also cover client-only ones (bff-endpoint).
    expect(routeFor(route.operation as Parameters<typeof routeFor>[0])).toEqual({
      operation: route.operation,
      method: route.method,
      path: route.path,
      requiresDataset: route.requiresDataset,
    });
  }
  expect(OPERATIONS.map((o) => o.operation).sort()).toEqual(ROUTES.map((r) => r.operation).sort());
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

it('the client’s wire types are the schemas’ shapes', () => {
  expect(getListParamsSchema.parse(accepted)).toEqual(sent);
  expect(read.tableData[0]).toBe(record);
  expect([sqlAnswer.execSuccess, param]).toEqual([true, null]);
});
