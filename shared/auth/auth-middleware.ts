/**
 * Authentication of signed requests, in the order of docs/interface.md §3: headers well formed and agreeing with
 * the body, application known, timestamp within 10 minutes, signature valid for an active key. The first failure
 * answers. What it establishes (the caller, the dataset code the request names) it keeps to itself and hands to
 * whoever asks (`authenticationOf`): the access step checks the dataset and the grant next (steps 5 and 6,
 * access/dataset-access.ts), the quota counts the caller's application.
 */
import type middy from '@middy/core';
import {
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  NONCE_HEADER,
  TIME_STAMP_HEADER,
  TIMESTAMP_WINDOW_MS,
  TOKEN_HEADER,
} from '../../packages/client/src/headers';
import { verifySignature } from '../../packages/client/src/signature';
import { NONCE_PATTERN } from '../../packages/client/src/signature-v2';
import { type Authentication, applicationCaller } from '../access/caller';
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
import { type ApiEvent, type ApiResult, requestSlot, type ServiceContext, type ServiceRequest } from '../http/request';
import type { NonceStore } from '../storage/nonce-store';
import type { KeyStore } from './key-store';
import { signatureMismatch } from './signature-hint';
import { verifyVersionTwo } from './signature-v2-request';

/** Without a nonce store, a version-2 request cannot be verified: a failure of ours (3001). */
const noNonceStore: NonceStore = {
  claim: () => Promise.reject(new Error('no nonce store is configured')),
};

const TIMESTAMP = /^\d{1,16}$/;
const BASE64 = /^[A-Za-z0-9+/]{1,200}={0,2}$/;

export interface AuthOptions {
  catalog: CatalogProvider;
  keys: KeyStore;
  /** Single-use nonces of signature version 2 (docs/interface.md §16); required once an application uses it. */
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

/** An authentication step, either way in: signed headers here, a personal access key in client-key-middleware.ts. */
export interface AuthenticationStep extends middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  /** What the step established for the request; none until its `before` has passed. */
  authenticationOf(request: ServiceRequest): Authentication | undefined;
}

export function authenticate(options: AuthOptions): AuthenticationStep {
  const now = options.now ?? Date.now;
  const established = requestSlot<Authentication>('authentication');

  const checkRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const { request: received, outcome } = request.context;
    const { route, body, headers } = received;

    // 1. Headers present and well formed, and the body agreeing with them.
    const timeStamp = header(headers, TIME_STAMP_HEADER, true, TIMESTAMP) as string;
    const appCode = header(headers, APP_CODE_HEADER, true, CODE_PATTERN) as string;
    const token = header(headers, TOKEN_HEADER, true, BASE64) as string;
    const datasetCode = header(headers, DATASET_CODE_HEADER, route.requiresDataset, CODE_PATTERN);
    // X-Nonce is a header of signature version 2 (docs/interface.md §16): well formed for an application on version
    // 2, in this step as always; any value, or none, for one on version 1, which reads neither it nor X-Sign-Version.
    if (
      headers[NONCE_HEADER.toLowerCase()] &&
      (await options.catalog.current()).application(appCode)?.config.signatureVersion === 2
    ) {
      header(headers, NONCE_HEADER, false, NONCE_PATTERN);
    }
    bodyCode(body, 'appCode', APP_CODE_HEADER, appCode);
    if (route.requiresDataset) bodyCode(body, 'datasetCode', DATASET_CODE_HEADER, datasetCode as string);

    // 2. Application known.
    const catalog = await options.catalog.current();
    const application = catalog.application(appCode);
    if (!application) throw new ApplicationNotFoundError(appCode);
    outcome.appCode = application.appCode;
    const caller = applicationCaller(application);

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
    // ---- Signature version 2, opt-in per application (docs/interface.md §16); version 1 below is unchanged, and
    // ignores the version-2 headers.
    if (application.config.signatureVersion === 2) {
      await verifyVersionTwo(
        {
          headers: headers,
          appCode,
          datasetCode,
          timeStamp,
          token,
          method: request.event.httpMethod,
          path: route.path,
          rawBody: received.rawBody ?? Buffer.alloc(0),
          windowEndsAt: Number(timeStamp) + TIMESTAMP_WINDOW_MS,
          capacity: outcome.capacity,
        },
        keys.accessKeys,
        secret,
        options.nonces ?? noNonceStore,
      );
    } else if (!verifySignature(token, { appCode, datasetCode, timeStamp }, keys.accessKeys, secret)) {
      throw signatureMismatch({ appCode, datasetCode, timeStamp });
    }
    // ---- end of signature version 2

    established.set(received, { catalog, caller, datasetCode });
  };

  return { before: checkRequest, authenticationOf: (request) => established.get(request) };
}
