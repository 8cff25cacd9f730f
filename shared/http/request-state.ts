/** What the middlewares learn about a request and hand to the next one and to the operation. */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Caller } from '../access/caller';
import type { Application, Catalog, Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import type { RouteDefinition } from '../contract/routes';
import { CapacityMeter } from '../observability/capacity-meter';
import type { HookRun, Telemetry } from '../observability/telemetry';

export type ApiEvent = APIGatewayProxyEvent;
export type ApiResult = APIGatewayProxyResult;

export interface RequestState {
  requestId: string;
  route: RouteDefinition;
  startedAt: number;
  capacity: CapacityMeter;
  /** Lower-cased request header names. */
  headers: Record<string, string>;
  /** The parsed JSON body (an object). */
  body?: Record<string, unknown>;
  /** The body's bytes as received (signature version 2 signs their digest). */
  rawBody?: Buffer;
  catalog?: Catalog;
  /** The calling application (for a client-key request, the application of the key). */
  application?: Application;
  /** Who calls, once authentication has resolved it: for a client-key request, the user and its narrowed grants. */
  caller?: Caller;
  dataset?: Dataset;
  grant?: GrantConfig;
  /** Headers every response carries once known (request id, rate-limit state). */
  responseHeaders: Record<string, string>;
  /** Extra metrics for the request's log line (e.g. `sqlDurationMs`). */
  extraMetrics: Record<string, number>;
  /** Extra log-only facts for the request's line (never caller data). */
  logDetail: Record<string, string>;
  /** The hooks that ran, each published by function when the request ends. */
  hookRuns: HookRun[];
  /**
   * The quota's answer when a read runs beside it: resolves once the request is admitted (its lease release
   * is then in `cleanups`), rejects with the refusal. Absent when the request was admitted before the operation.
   */
  admission?: Promise<void>;
  /** Work to run when the request ends, whatever the outcome (e.g. releasing a concurrency lease). */
  cleanups: (() => Promise<void>)[];
}

/** The telemetry sink an operation writes to: it fills this request's log line. */
export function requestTelemetry(state: RequestState): Telemetry {
  return {
    capacity: state.capacity,
    metric(name, milliseconds) {
      state.extraMetrics[name] = milliseconds;
    },
    detail(name, value) {
      state.logDetail[name] = value;
    },
    hookRun(run) {
      state.hookRuns.push(run);
    },
  };
}

export type ServiceContext = Context & { state: RequestState };

export function newRequestState(route: RouteDefinition, requestId: string, startedAt: number): RequestState {
  return {
    requestId,
    route,
    startedAt,
    capacity: new CapacityMeter(),
    headers: {},
    responseHeaders: { 'X-Request-Id': requestId },
    extraMetrics: {},
    logDetail: {},
    hookRuns: [],
    cleanups: [],
  };
}
