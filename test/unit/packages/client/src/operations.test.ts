/**
 * The client package owns the operations' names, paths and header names, which the service builds on; its wire
 * types are written by hand, so here they are held to the service's schemas, and its paths and headers to what
 * the OpenAPI document declares.
 */
import { NONCE_HEADER, SIGN_VERSION_HEADER } from '../../../../../packages/client/src/headers';
import { BFF_ENDPOINT_ROUTE, pathWith } from '../../../../../packages/client/src/operations';
import { newNonce } from '../../../../../packages/client/src/signature-v2';
import type {
  AggregateParams as ClientAggregateParams,
  AggregateResult as ClientAggregateResult,
  BffEndpoint as ClientBffEndpoint,
  DataRecord as ClientDataRecord,
  GetListParams as ClientGetListParams,
  ListResult as ClientListResult,
  SqlParamValue as ClientSqlParamValue,
  SqlResult as ClientSqlResult,
} from '../../../../../packages/client/src/types';
import { buildOpenApiDocument } from '../../../../../shared/contract/openapi-document';
import {
  type AggregateParams,
  type AggregateResult,
  aggregateParamsSchema,
  aggregateResultSchema,
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

it('fills a path’s segments URL-encoded, one segment each, and refuses a value that would change the path', () => {
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
const aggregateSent: ClientAggregateParams = {
  aggregate: [{ type: 'sum', column: 'amount', alias: 'total', round: true, precision: 2 }, { type: 'COUNT' }],
  groupBy: ['status'],
  having: { total: { $gte: 10 } },
  orderBy: [{ total: 'desc' }],
  pageSize: 5,
};
const aggregateAccepted: AggregateParams = aggregateSent;
const aggregateAnswered: AggregateResult = aggregateResultSchema.parse({
  paging: { pageSize: 5, totalCount: 1, currentPage: 1 },
  tableData: [{ status: 'paid', total: 12.5, count: 2 }],
  tableColumns: [{ title: 'status', dataIndex: 'status' }],
});
const aggregateRead: ClientAggregateResult = aggregateAnswered;
const sentAsThePlatform: ClientGetListParams = { page: 2, pageSize: 5, orderBy: [{ amount: 'DESC' }] };
const acceptedAsThePlatform: GetListParams = sentAsThePlatform;
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
  expect(getListParamsSchema.parse(acceptedAsThePlatform)).toEqual(sentAsThePlatform);
  expect(aggregateParamsSchema.parse(aggregateAccepted)).toEqual(aggregateSent);
  expect(aggregateRead.tableData).toEqual([{ status: 'paid', total: 12.5, count: 2 }]);
  expect(read.tableData[0]).toBe(record);
  expect([sqlAnswer.execSuccess, param]).toEqual([true, null]);
  expect(functionAnswered).toEqual({ description: null, version: 3, gmt_modified: '2024-05-02 14:05:12' });
});
