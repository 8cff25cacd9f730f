/**
 * Authentication and access, in the order of docs/interface.md §3: headers well formed and agreeing with the body,
 * application known, timestamp within 10 minutes, signature valid for an active key, dataset known, grant
 * covering the dataset and the operation. The first failure answers.
 */
import type middy from '@middy/core';
import { verifySignature } from '../../packages/client/src/signature';
import { NONCE_PATTERN } from '../../packages/client/src/signature-v2';
import type { KeyStore } from '../auth/key-store';
import type { NonceStore } from '../auth/nonce-store';
import { verifyVersionTwo } from '../auth/signature-v2-request';
import type { CatalogProvider } from '../catalog/catalog-provider';
import { codeSchema } from '../contract/body-schemas';
import { CODE_PATTERN } from '../contract/codes';
import {
  ApplicationNotFoundError,
  InvalidParameterError,
  ServiceUnavailableError,
  SignatureMismatchError,
  TimestampExpiredError,
} from '../contract/errors';
import { TIMESTAMP_WINDOW_MS } from '../contract/signed-headers';
import { applicationCaller } from '../permissions/caller';
import { admitDataset } from './dataset-access';
import type { ApiEvent, ApiResult, ServiceContext } from './request-state';

/** Without a nonce store, a version-2 request cannot be verified: a failure of ours (3001). */
const noNonceStore: NonceStore = {
  claim: () => Promise.reject(new Error('no nonce store is configured')),
};

const TIMESTAMP = /^\d{1,16}$/;
const BASE64 = /^[A-Za-z0-9+/]{1,200}={0,2}$/;

export interface AuthOptions {
  catalog: CatalogProvider;
  keys: KeyStore;
  /** Single-use nonces of signature version 2 (contract §16); required once an application uses it. */
  nonces?: NonceStore;
  now?: () => number;
}

function header(headers: Record<string, string>, name: string, required: boolean, pattern: RegExp): string | undefined {
  const value = headers[name.toLowerCase()];
  if (value === undefined || value === '') {
    if (required) throw new InvalidParameterError(`header ${name} is required`);
    return undefined;
  }
  if (!pattern.test(value)) throw new InvalidParameterError(`header ${name} is malformed`);
  return value;
}

function bodyCode(body: Record<string, unknown>, name: string, headerName: string, headerValue: string): void {
  const value = body[name];
  if (value === undefined || value === null) throw new InvalidParameterError(`${name} is required in the request body`);
  // The same code schema describes appCode and datasetCode in the OpenAPI document.
  if (!codeSchema.safeParse(value).success) {
    throw new InvalidParameterError(`${name} must be 1 to 64 letters, digits, "_" or "-"`);
  }
  if (value !== headerValue) throw new InvalidParameterError(`${name} in the body does not match header ${headerName}`);
}

export function authenticate(options: AuthOptions): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const now = options.now ?? Date.now;

  const checkRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const state = request.context.state;
    const route = state.route;
    const body = state.body ?? {};

    // 1. Headers present and well formed, and the body agreeing with them.
    const timeStamp = header(state.headers, 'X-Time-Stamp', true, TIMESTAMP) as string;
    const appCode = header(state.headers, 'X-App-Code', true, CODE_PATTERN) as string;
    const token = header(state.headers, 'X-Token', true, BASE64) as string;
    const datasetCode = header(state.headers, 'X-Dataset-Code', route.requiresDataset, CODE_PATTERN);
    // X-Nonce is a header of signature version 2 (contract §16): well formed for an application on version 2, in
    // this step as always; any value, or none, for one on version 1, which reads neither it nor X-Sign-Version.
    if (
      state.headers['x-nonce'] &&
      (await options.catalog.current()).application(appCode)?.config.signatureVersion === 2
    ) {
      header(state.headers, 'X-Nonce', false, NONCE_PATTERN);
    }
    bodyCode(body, 'appCode', 'X-App-Code', appCode);
    if (route.requiresDataset) bodyCode(body, 'datasetCode', 'X-Dataset-Code', datasetCode as string);

    // 2. Application known.
    const catalog = await options.catalog.current();
    state.catalog = catalog;
    const application = catalog.application(appCode);
    if (!application) throw new ApplicationNotFoundError(appCode);
    state.application = application;
    const caller = applicationCaller(application);
    state.caller = caller;

    // 3. Timestamp within the window, either direction.
    if (Math.abs(now() - Number(timeStamp)) > TIMESTAMP_WINDOW_MS) throw new TimestampExpiredError();

    // 4. Signature valid for one of the active keys.
    let keys: Awaited<ReturnType<KeyStore['applicationKeys']>>;
    let secret: string;
    try {
      keys = await options.keys.applicationKeys(appCode);
      secret = keys?.signingSecret ?? (await options.keys.defaultSecret());
    } catch (cause) {
      // Only without a usable cached key (see the key store's bounds): a cold container during an outage.
      throw new ServiceUnavailableError(
        'the service cannot verify requests right now: its key store is out of reach; retry in a few seconds',
        { cause },
      );
    }
    if (!keys) throw new SignatureMismatchError();
    // ---- Signature version 2, opt-in per application (contract §16); version 1 below is unchanged, and ignores
    // the version-2 headers.
    if (application.config.signatureVersion === 2) {
      await verifyVersionTwo(
        {
          headers: state.headers,
          appCode,
          datasetCode,
          timeStamp,
          token,
          method: request.event.httpMethod,
          path: route.path,
          rawBody: state.rawBody ?? Buffer.alloc(0),
          windowEndsAt: Number(timeStamp) + TIMESTAMP_WINDOW_MS,
          capacity: state.capacity,
        },
        keys.accessKeys,
        secret,
        options.nonces ?? noNonceStore,
      );
    } else if (!verifySignature(token, { appCode, datasetCode, timeStamp }, keys.accessKeys, secret)) {
      throw new SignatureMismatchError();
    }
    // ---- end of signature version 2

    // 5. Dataset known in the deployment; 6. a grant covering the dataset and the operation.
    if (datasetCode) admitDataset(state, catalog, caller, datasetCode);
  };

  return { before: checkRequest };
}
