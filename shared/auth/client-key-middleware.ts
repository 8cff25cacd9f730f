/**
 * Authentication of client-key mode (docs/interface.md §14), the `/client/` paths: the personal access key in
 * `X-User-AK` is looked up by its SHA-256 digest in the cached catalog (no key store, no Secrets Manager call, no
 * table read beyond the catalog's refresh), the body's `appCode` must be the key's application, and then the
 * dataset and the grant are checked by the access step as for a signed request (§3 from step 5), with the user's
 * narrowed grants. A GET has no body: its path parameters stand in for it (body-middleware.ts), so a path's
 * `{appCode}` is checked as a body's would be. It establishes what signed authentication establishes, a Caller
 * (here with its user and the user's grants) and the dataset code named, so everything after it (access, quota,
 * operation, log) is shared. Signed headers open nothing here; `X-User-AK` opens nothing on signed paths.
 */
import type middy from '@middy/core';
import { USER_KEY_HEADER } from '../../packages/client/src/headers';
import type { Authentication } from '../access/caller';
import type { CatalogProvider } from '../catalog/catalog-provider';
import { codeSchema } from '../contract/body-schemas';
import { AccessDeniedError, InvalidParameterError, SignatureMismatchError } from '../contract/errors';
import { pathParametersOf } from '../contract/routes';
import { type ApiEvent, type ApiResult, requestSlot, type ServiceContext } from '../http/request';
import type { AuthenticationStep } from './auth-middleware';
import { userCallerForKey } from './user-callers';
import { USER_KEY_PATTERN } from './user-key';

export interface ClientKeyAuthOptions {
  catalog: CatalogProvider;
}

function bodyCode(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) {
    if (required) throw new InvalidParameterError(`${name} is required in the request body`);
    return undefined;
  }
  if (!codeSchema.safeParse(value).success) {
    throw new InvalidParameterError(`${name} must be 1 to 64 letters, digits, "_" or "-"`);
  }
  return value as string;
}

export function authenticateClientKey(options: ClientKeyAuthOptions): AuthenticationStep {
  const established = requestSlot<Authentication>('authentication');

  const checkRequest: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = async (request) => {
    const { request: received, outcome } = request.context;
    const { route, body } = received;

    // A key, known by its digest: missing, malformed, unknown and revoked all answer 1002, and alike.
    const key = received.headers[USER_KEY_HEADER.toLowerCase()];
    if (key === undefined || key === '') {
      throw new SignatureMismatchError(
        `header ${USER_KEY_HEADER} is required on /client/ paths: a personal access key`,
      );
    }
    const catalog = await options.catalog.current();
    const caller = USER_KEY_PATTERN.test(key) ? userCallerForKey(catalog, key) : undefined;
    if (!caller) throw new SignatureMismatchError(`${USER_KEY_HEADER} is not an active personal access key`);
    outcome.userId = caller.user?.userId;

    // The key's application, which the body (or a GET's path) names; loginUserInfo names none: the key alone says it.
    if (route.method === 'POST' || pathParametersOf(route.path).includes('appCode')) {
      const appCode = bodyCode(body, 'appCode', true);
      if (appCode !== caller.application.appCode) {
        throw new AccessDeniedError(`this personal access key does not belong to application '${appCode}'`);
      }
    }
    outcome.appCode = caller.application.appCode;

    // From here on as for a signed request (§3 steps 5 and 6, the access step), with the user's grants.
    const datasetCode = bodyCode(body, 'datasetCode', route.requiresDataset);
    established.set(received, { catalog, caller, datasetCode });
  };

  return { before: checkRequest, authenticationOf: (request) => established.get(request) };
}
