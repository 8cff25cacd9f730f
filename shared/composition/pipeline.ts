/**
 * The request pipeline every operation runs in: envelope · body · authentication · access · quota · operation
 * (and the request's log line around them all). A read operation runs beside its quota admission (the store sees
 * both at once); a write runs after it. `functions/<operation>.ts` is this plus the operation, nothing more.
 * Authentication is the only step that differs between signed requests and client-key requests (`/client/`
 * paths). The steps share the read-only request and the outcome (http/request.ts); what each decides it keeps,
 * and this module hands it on: the caller to access and quota, the dataset, grant and admission to the operation.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import {
  ETAG_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  IF_MATCH_HEADER,
} from '../../packages/client/src/headers';
import { checkDatasetAccess } from '../access/dataset-access';
import { type AuthenticationStep, authenticate } from '../auth/auth-middleware';
import { authenticateClientKey } from '../auth/client-key-middleware';
import { modeOfPath, routeIn } from '../contract/client-routes';
import { QueryTimeoutError } from '../contract/errors';
import type { RouteDefinition } from '../contract/routes';
import { withHooks } from '../hooks/hooked-operation';
import { parseBody } from '../http/body-middleware';
import { envelope } from '../http/envelope-middleware';
import type { ApiEvent, ApiResult, ServiceContext } from '../http/request';
import { requestLog } from '../http/request-log-middleware';
import { withIdempotency } from '../idempotency/idempotent-operation';
import type { Operation, OperationPorts } from '../operation/operation';
import { enforceQuota } from '../quota/quota-middleware';
import { readySandboxIfProvisioned } from '../sandbox/sandbox';
import { type RuntimePorts, runtimePorts } from './ports';

export interface HandlerOptions {
  /** The container's ports; built from the environment on first use when not given. */
  ports?: () => RuntimePorts;
  now?: () => number;
}

/** Answer 2001 this long before the function's own timeout, rather than dying without a response. */
const TIMEOUT_MARGIN_MS = 500;

/** What Lambda calls: the envelope and body steps add the outcome and the request to the context. */
export type ApiHandler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

export function createHandler(operation: Operation, options: HandlerOptions = {}): ApiHandler {
  const ports = options.ports ?? runtimePorts;
  const now = options.now ?? Date.now;
  // Ports are built lazily so that a missing environment variable is reported through the envelope (3001)
  // and the log, not as a failed cold start.
  const lazy = () => ports();
  const catalog = { current: () => lazy().catalog.current() };

  // One function serves an operation's signed path and its /client/ path: two pipelines that differ only in
  // their authentication step (signed headers, or a personal access key), chosen by the request's path.
  const signedRoute = routeIn(operation.name, 'signed');
  const clientRoute = routeIn(operation.name, 'client');
  const signed =
    signedRoute &&
    pipelineFor(
      signedRoute,
      authenticate({
        catalog,
        keys: {
          applicationKeys: (appCode) => lazy().keys.applicationKeys(appCode),
          defaultSecret: () => lazy().keys.defaultSecret(),
        },
        nonces: {
          claim: (appCode, nonce, expiresAtMs, capacity) => {
            const nonces = lazy().nonces;
            if (!nonces) throw new Error('no nonce store is configured');
            return nonces.claim(appCode, nonce, expiresAtMs, capacity);
          },
        },
        now,
      }),
      operation,
      lazy,
      now,
    );
  const client = clientRoute && pipelineFor(clientRoute, authenticateClientKey({ catalog }), operation, lazy, now);
  const fallback = (signed ?? client) as ApiHandler;
  // The last step of a function's init: a provisioned container waits here for its hook sandbox to be ready.
  readySandboxIfProvisioned();
  return (event, context) => {
    const chosen = modeOfPath(event.resource || event.path) === 'client' ? client : signed;
    return (chosen ?? fallback)(event, context);
  };
}

/** envelope · body · authentication (the given step) · access · quota · operation, for one route. */
function pipelineFor(
  route: RouteDefinition,
  authentication: AuthenticationStep,
  operation: Operation,
  lazy: () => RuntimePorts,
  now: () => number,
): ApiHandler {
  // Create, batch create and update remember their answer under an Idempotency-Key (docs/interface.md §13).
  // Hooks run inside the idempotency wrapper: a replay answers what the hooks made of the first attempt.
  const hooked = withHooks(operation);
  const run = route.idempotent ? withIdempotency(hooked) : hooked;
  const authenticated = authentication.authenticationOf;
  const access = checkDatasetAccess({ authentication: authenticated });
  const quota = enforceQuota({
    gate: { admit: (request) => lazy().quota.admit(request) },
    application: (request) => authenticated(request)?.caller.application,
    now,
  });
  const { metricNamespace, responseHeaders } = envelopeSettings(lazy);
  const handler = middy<ApiEvent, ApiResult, Error, ServiceContext>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new QueryTimeoutError('the request took too long and was stopped; narrow the query or try again');
    },
  })
    .use(requestLog({ metricNamespace, now }))
    .use(envelope({ route, responseHeaders, now }))
    .use(parseBody())
    .use(authentication)
    .use(access)
    .use(quota)
    .handler(async (_event, context) => {
      const { request, outcome } = context;
      // Authentication has resolved the caller and the catalog, or thrown; the operation sees no HTTP state.
      const { catalog, caller } = authenticated(request) as NonNullable<ReturnType<typeof authenticated>>;
      const granted = access.accessOf(request);
      const { records, lists, bookkeeping, recordBatches, idempotency, changeLog, indexBuilds } = lazy();
      const ports: OperationPorts = {
        records,
        lists,
        bookkeeping,
        recordBatches,
        idempotency,
        indexBuilds,
        ...(changeLog ? { changeLog } : {}),
      };
      const remaining = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 0;
      // The revision of the record answered, as the ETag of a successful answer only (docs/interface.md §18).
      let revision: number | undefined;
      const ifMatch = route.conditional ? request.headers[IF_MATCH_HEADER.toLowerCase()] : undefined;
      const work = (ports: OperationPorts) =>
        run.run(
          {
            requestId: request.requestId,
            operation: operation.name,
            caller,
            catalog,
            dataset: granted?.dataset,
            grant: granted?.grant,
            view: granted?.view,
            ports,
            telemetry: outcome.telemetry(),
            now,
            ...(remaining > 0 ? { deadline: now() + remaining - TIMEOUT_MARGIN_MS } : {}),
            ...(ifMatch === undefined ? {} : { ifMatch }),
            answerRevision: (answered: number) => {
              revision = answered;
            },
            ...(route.idempotent
              ? {
                  idempotencyKey: request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()],
                  markReplayed: () => {
                    outcome.responseHeaders[IDEMPOTENT_REPLAYED_HEADER] = 'true';
                  },
                }
              : {}),
          },
          request.body as Record<string, unknown>,
        );
      // The operation returns the envelope's `data`; the envelope's `after` makes it the HTTP result. It runs once
      // the quota admits the request, or beside the decision for a read (quota/admission.ts).
      const admission = quota.admissionOf(request);
      const data = admission
        ? await admission.run(ports, operation.readsBesideAdmission === true, work)
        : await work(ports);
      if (revision !== undefined) outcome.responseHeaders[ETAG_HEADER] = `"${revision}"`;
      return data as ApiResult;
    });
  return handler as unknown as ApiHandler;
}

/** The envelope's settings; when the environment is broken, defaults, so the failure still gets an envelope. */
function envelopeSettings(ports: () => RuntimePorts): {
  metricNamespace: string;
  responseHeaders: Record<string, string>;
} {
  try {
    const { metricNamespace, responseHeaders } = ports();
    return { metricNamespace, responseHeaders };
  } catch {
    return { metricNamespace: 'DataAccessService', responseHeaders: {} };
  }
}
