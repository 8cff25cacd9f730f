/**
 * The authentication step and the access step after it, in process, as middy tests its own: a request with
 * several faults answers the first in the order of docs/interface.md §3, and a request without faults leaves the
 * caller, dataset and grant for the operation.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { signRequest } from '../../../../packages/client/src/signature';
import type { Caller } from '../../../../shared/access/caller';
import { checkDatasetAccess } from '../../../../shared/access/dataset-access';
import { authenticate } from '../../../../shared/auth/auth-middleware';
import { FileKeyStore } from '../../../../shared/auth/file-key-store';
import type { Dataset } from '../../../../shared/catalog/catalog';
import { StaticCatalogProvider } from '../../../../shared/catalog/catalog-provider';
import type { CatalogConfig, GrantConfig } from '../../../../shared/catalog/schema';
import { routeFor } from '../../../../shared/contract/routes';
import { parseBody } from '../../../../shared/http/body-middleware';
import { type ApiEvent, type ApiResult, RequestOutcome, type ServiceContext } from '../../../../shared/http/request';

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

/** What the steps leave for the operation: the caller, and the dataset and grant it may use. */
interface Established {
  caller?: Caller;
  dataset?: Dataset;
  grant?: GrantConfig;
}

/** body · authentication · access, then a handler that hands back what they established. */
function authenticated(operation: 'get-list' | 'create' = 'get-list') {
  const route = routeFor(operation);
  const authentication = authenticate({
    catalog: new StaticCatalogProvider(config),
    keys: new FileKeyStore(config),
    // No application here requires signature version 2, so no nonce is ever claimed.
    nonces: { claim: async () => true },
    now: () => NOW,
  });
  const access = checkDatasetAccess({ authentication: authentication.authenticationOf });
  return middy<ApiEvent, ApiResult, Error, ServiceContext>()
    .before((request) => {
      request.context.outcome = new RequestOutcome('req-test', route, NOW);
    })
    .use(parseBody())
    .use(authentication)
    .use(access)
    .handler(async (_event, context) => {
      const granted = access.accessOf(context.request);
      const established: Established = {
        caller: authentication.authenticationOf(context.request)?.caller,
        dataset: granted?.dataset,
        grant: granted?.grant,
      };
      return established as unknown as ApiResult;
    }) as unknown as (event: ApiEvent, context: Context) => Promise<Established>;
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
