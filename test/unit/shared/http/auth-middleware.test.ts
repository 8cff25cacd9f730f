/**
 * The authentication middleware in process, as middy tests its own: a request with several faults answers
 * the first in the order of docs/interface.md §3, and a request without faults leaves the caller, dataset and
 * grant in the request state for the steps after it.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { signRequest } from '../../../../packages/client/src/signature';
import { FileKeyStore } from '../../../../shared/auth/file-key-store';
import { StaticCatalogProvider } from '../../../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../../../shared/catalog/schema';
import { routeFor } from '../../../../shared/contract/routes';
import { authenticate } from '../../../../shared/http/auth-middleware';
import { parseBody } from '../../../../shared/http/body-middleware';
import {
  type ApiEvent,
  type ApiResult,
  newRequestState,
  type RequestState,
  type ServiceContext,
} from '../../../../shared/http/request-state';

const NOW = 1_700_000_000_000;

const config: CatalogConfig = {
  applications: [
    {
      appCode: 'app-a',
      accessKey: 'ak-a-00000001',
      signingSecret: 'sk-a-secret',
      grants: [
        { datasetCode: 'orders', operations: ['read'] },
        { datasetCode: 'notes', operations: ['read', 'create'] },
      ],
    },
  ],
  datasets: [
    { appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] },
    { appCode: 'app-a', datasetCode: 'notes', fields: [{ name: 'text', type: 'string' }] },
    { appCode: 'app-a', datasetCode: 'secret', fields: [{ name: 'text', type: 'string' }] },
  ],
};

interface Signed {
  appCode?: string;
  datasetCode?: string;
  timeStamp?: number;
  secret?: string;
}

/** An API Gateway event for get-list (or `operation`), signed as described. */
function event({ appCode = 'app-a', datasetCode = 'orders', timeStamp = NOW, secret = 'sk-a-secret' }: Signed) {
  const stamp = String(timeStamp);
  const token = signRequest({ accessKey: 'ak-a-00000001', appCode, datasetCode, timeStamp: stamp }, secret);
  return {
    headers: { 'X-App-Code': appCode, 'X-Dataset-Code': datasetCode, 'X-Time-Stamp': stamp, 'X-Token': token },
    body: JSON.stringify({ appCode, datasetCode, paramMap: {} }),
  } as unknown as ApiEvent;
}

/** body · authentication, then a handler that hands back the request state. */
function authenticated(operation: 'get-list' | 'create' = 'get-list') {
  const route = routeFor(operation);
  return middy<ApiEvent, ApiResult, Error, ServiceContext>()
    .before((request) => {
      request.context.state = newRequestState(route, 'req-test', NOW);
    })
    .use(parseBody())
    .use(
      authenticate({
        catalog: new StaticCatalogProvider(config),
        keys: new FileKeyStore(config),
        // No application here requires signature version 2, so no nonce is ever claimed.
        nonces: { claim: async () => true },
        now: () => NOW,
      }),
    )
    .handler(async (_event, context) => context.state as unknown as ApiResult) as unknown as (
    event: ApiEvent,
    context: Context,
  ) => Promise<RequestState>;
}

const context = () => ({ awsRequestId: 'aws-req' }) as Context;

describe('authentication, in process', () => {
  it('answers 1004 for an unknown application before looking at its expired timestamp or signature', async () => {
    await expect(
      authenticated()(event({ appCode: 'app-x', timeStamp: NOW - 11 * 60_000, secret: 'wrong' }), context()),
    ).rejects.toMatchObject({ code: 1004, message: "application 'app-x' not found" });
  });

  it('answers 1003 for an expired timestamp before checking a wrong signature', async () => {
    await expect(
      authenticated()(event({ timeStamp: NOW - 11 * 60_000, secret: 'wrong' }), context()),
    ).rejects.toMatchObject({ code: 1003 });
  });

  it('answers 1002 for a wrong signature before looking up an unknown dataset', async () => {
    await expect(authenticated()(event({ datasetCode: 'missing', secret: 'wrong' }), context())).rejects.toMatchObject({
      code: 1002,
      message:
        'signature verification failed: X-Token must be base64 of HMAC-SHA256 over ' +
        '"accessKey=<your access key>&appCode=app-a&datasetCode=missing&timeStamp=1700000000000" ' +
        '(the values sent, names sorted, datasetCode only with X-Dataset-Code), ' +
        'keyed with the signing secret issued for app-a, not its access key',
    });
  });

  it('answers 1005 for an unknown dataset before the grant check', async () => {
    await expect(authenticated()(event({ datasetCode: 'missing' }), context())).rejects.toMatchObject({
      code: 1005,
      message: "dataset 'missing' not found",
    });
  });

  it('answers 1006 for a dataset without a grant, and for an operation outside the grant', async () => {
    await expect(authenticated()(event({ datasetCode: 'secret' }), context())).rejects.toMatchObject({
      code: 1006,
      message: "application 'app-a' has no access to dataset 'secret'",
    });
    await expect(authenticated('create')(event({ datasetCode: 'orders' }), context())).rejects.toMatchObject({
      code: 1006,
      message: "application 'app-a' may not create records of dataset 'orders'",
    });
  });

  it('leaves the caller, the dataset and the grant for the operation when every check passes', async () => {
    const state = await authenticated('create')(event({ datasetCode: 'notes' }), context());
    expect(state.caller?.application.appCode).toBe('app-a');
    expect(state.caller?.user).toBeUndefined();
    expect(state.dataset?.datasetCode).toBe('notes');
    expect(state.grant).toEqual({ datasetCode: 'notes', operations: ['read', 'create'] });
  });
});
