/**
 * What the steps of the pipeline share, and nothing more: the request as it arrived (read-only, built once by
 * the body step) and the outcome the request builds as it runs (the response's headers, the log line's facts).
 * Each step keeps what it decides to itself, in a slot of its own (`requestSlot`): authentication its caller
 * (auth/), access the dataset and grant (access/), the quota its admission (quota/); whoever needs one asks that
 * step, as composition/pipeline.ts wires them. Operations see neither: they get a context of their own (operation/operation.ts).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { REQUEST_ID_HEADER } from '../../packages/client/src/headers';
import type { RouteDefinition } from '../contract/routes';
import { CapacityMeter } from '../observability/capacity-meter';
import type { HookRun, Telemetry } from '../observability/telemetry';

export type ApiEvent = APIGatewayProxyEvent;
export type ApiResult = APIGatewayProxyResult;

/** The request as the pipeline reads it: built once by the body step (body-middleware.ts), never changed. */
export interface ServiceRequest {
  readonly requestId: string;
  readonly route: RouteDefinition;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body (an object); for a GET, its path parameters. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The body's bytes as received (signature version 2 signs their digest); absent for a GET. */
  readonly rawBody?: Buffer;
}

/**
 * What the request's answer and its one log line collect while it runs: the envelope starts it, every step and
 * the operation (through `telemetry()`) add to it, the envelope and the log read it at the end.
 */
export class RequestOutcome {
  readonly capacity = new CapacityMeter();
  /** Headers every response carries once known (request id, rate-limit state, CORS). */
  readonly responseHeaders: Record<string, string>;
  /** Extra metrics for the request's log line (e.g. `sqlDurationMs`). */
  readonly metrics: Record<string, number> = {};
  /** Extra log-only facts for the request's line (never caller data). */
  readonly logDetail: Record<string, string> = {};
  /** The hooks that ran, each published by function when the request ends. */
  readonly hookRuns: HookRun[] = [];
  /** Who called and on what, for the log line, once authentication and access have found them. */
  appCode?: string;
  datasetCode?: string;
  userId?: string;
  /** How the request failed, for the log line: its error code, and an unexpected error's cause (never shown). */
  errorCode?: number;
  cause?: Error;

  constructor(
    readonly requestId: string,
    readonly route: RouteDefinition,
    readonly startedAt: number,
  ) {
    this.responseHeaders = { [REQUEST_ID_HEADER]: requestId };
  }

  /** The telemetry sink an operation writes to: it fills this request's log line. */
  telemetry(): Telemetry {
    return {
      capacity: this.capacity,
      metric: (name, milliseconds) => {
        this.metrics[name] = milliseconds;
      },
      detail: (name, value) => {
        this.logDetail[name] = value;
      },
      hookRun: (run) => {
        this.hookRuns.push(run);
      },
    };
  }
}

/** A step's own slot on a request: only the step that made it can read or write it, through these two. */
export interface RequestSlot<T> {
  get(request: ServiceRequest): T | undefined;
  set(request: ServiceRequest, value: T): void;
}

/**
 * A new slot, named for debugging: a private symbol on the request, so what a step keeps lives and dies with the
 * request, and nothing but the step reads it. (A WeakMap per step would keep it as privately, at about 0.7 µs
 * per request and step for the collector's bookkeeping of short-lived keys.)
 */
export function requestSlot<T>(name: string): RequestSlot<T> {
  const key = Symbol(name);
  return {
    get: (request) => (request as unknown as Record<symbol, T | undefined>)[key],
    set: (request, value) => {
      (request as unknown as Record<symbol, T>)[key] = value;
    },
  };
}

/**
 * Lambda's context as the pipeline's steps see it: the outcome from the envelope on, the request from the body
 * step on (a step before it that fails leaves none).
 */
export type ServiceContext = Context & { outcome: RequestOutcome; request: ServiceRequest };
