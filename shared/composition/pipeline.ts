/**
 * The request pipeline every operation runs in: envelope · body · authentication · quota · operation. A read
 * operation runs beside its quota admission (the store sees both at once); a write runs after it.
 * `functions/<operation>.ts` is this plus the operation, nothing more.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { QueryTimeoutError } from '../contract/errors';
import { routeFor } from '../contract/routes';
import { authenticate } from '../http/auth-middleware';
import { parseBody } from '../http/body-middleware';
import { envelope } from '../http/envelope-middleware';
import { enforceQuota } from '../http/quota-middleware';
import { type ApiEvent, type ApiResult, requestTelemetry, type ServiceContext } from '../http/request-state';
import type { Operation } from '../operations/operation';
import { besideAdmission } from '../quota/beside-admission';
import { type RuntimePorts, runtimePorts } from './ports';

export interface HandlerOptions {
  /** The container's ports; built from the environment on first use when not given. */
  ports?: () => RuntimePorts;
  now?: () => number;
}

/** Answer 2001 this long before the function's own timeout, rather than dying without a response. */
const TIMEOUT_MARGIN_MS = 500;

/** What Lambda calls: the request state is added to the context by the envelope middleware. */
export type ApiHandler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

export function createHandler(operation: Operation, options: HandlerOptions = {}): ApiHandler {
  const route = routeFor(operation.name);
  const ports = options.ports ?? runtimePorts;
  const now = options.now ?? Date.now;
  // Ports are built lazily so that a missing environment variable is reported through the envelope (3001)
  // and the log, not as a failed cold start.
  const lazy = () => ports();

  const handler = middy<ApiEvent, ApiResult, Error, ServiceContext>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new QueryTimeoutError('the request took too long and was stopped; narrow the query or try again');
    },
  })
    .use(envelope({ route, ...envelopeSettings(lazy), now }))
    .use(parseBody())
    .use(
      authenticate({
        catalog: { current: () => lazy().catalog.current() },
        keys: {
          applicationKeys: (appCode) => lazy().keys.applicationKeys(appCode),
          defaultSecret: () => lazy().keys.defaultSecret(),
        },
        now,
      }),
    )
    .use(
      enforceQuota({
        gate: {
          admit: (request) => lazy().quota.admit(request),
          release: (request) => lazy().quota.release(request),
        },
        now,
        besideOperation: operation.readsBesideAdmission === true,
      }),
    )
    .handler(async (_event, context) => {
      const state = context.state;
      const admission = state.admission;
      const { records, lists, bookkeeping } = lazy();
      const ports = { records, lists, bookkeeping };
      // The operation returns the envelope's `data`; the envelope middleware's `after` makes it the HTTP result.
      // Authentication has resolved the caller and the catalog, or thrown; the operation sees no HTTP state.
      let data: unknown;
      try {
        data = await operation.run(
          {
            requestId: state.requestId,
            operation: operation.name,
            caller: state.caller as NonNullable<typeof state.caller>,
            catalog: state.catalog as NonNullable<typeof state.catalog>,
            dataset: state.dataset,
            grant: state.grant,
            ports: admission ? besideAdmission(ports, admission) : ports,
            telemetry: requestTelemetry(state),
            now,
          },
          state.body ?? {},
        );
      } catch (error) {
        // The quota comes before the operation (docs/interface.md §3): a refusal answers, whatever the operation
        // found.
        await admission;
        throw error;
      }
      await admission;
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
