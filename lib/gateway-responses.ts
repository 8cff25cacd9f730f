/**
 * API Gateway's own refusals (body too large, throttled, unknown route, its default 4xx/5xx) rewritten into the
 * contract's failure envelope and codes (docs/interface.md §2), so a caller never has to parse a second error format.
 * The statuses come from the same code → status table the functions use.
 */
import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { READABLE_RESPONSE_HEADERS, RETRY_AFTER_HEADER } from '../packages/client/src/headers';
import { ErrorCode, type ErrorCodeValue, httpStatusFor } from '../shared/contract/errors';
import type { RouteDefinition } from '../shared/contract/routes';

/** Headers a browser caller may read from any response (docs/interface.md §2: request id and rate-limit state). */
export const EXPOSED_HEADERS = [...READABLE_RESPONSE_HEADERS];

export interface GatewayRefusal {
  type: ResponseType;
  errorCode: ErrorCodeValue;
  /**
   * The `errorMsg` value as it appears in the mapping template: either a JSON string literal (which may contain
   * `$context` variables, filled in by API Gateway) or a `$context...String` variable that API Gateway quotes.
   */
  errorMsgTemplate: string;
  extraHeaders?: Record<string, string>;
}

const literal = (text: string): string => JSON.stringify(text);

/** Seconds a client throttled by the stage-wide limit should wait: the token bucket refills every second. */
export const STAGE_THROTTLE_RETRY_AFTER_SECONDS = 1;

export function gatewayRefusals(routes: readonly RouteDefinition[]): GatewayRefusal[] {
  const operations = routes.map((route) => `${route.method} ${route.path}`).join(', ');
  return [
    {
      // The contract makes an oversized body a 1001, and its status table pairs 1001 with 400; 413 would be the
      // HTTP-native status but would make dashboards count the same error code under two statuses.
      type: ResponseType.REQUEST_TOO_LARGE,
      errorCode: ErrorCode.InvalidParameter,
      errorMsgTemplate: literal('request body is too large: at most 1 MB is accepted'),
    },
    {
      type: ResponseType.THROTTLED,
      errorCode: ErrorCode.RateLimited,
      errorMsgTemplate: literal(
        `the service is receiving too many requests; retry after ${STAGE_THROTTLE_RETRY_AFTER_SECONDS} second(s)`,
      ),
      extraHeaders: { [RETRY_AFTER_HEADER]: `'${STAGE_THROTTLE_RETRY_AFTER_SECONDS}'` },
    },
    {
      // REST APIs answer an unknown path or method with this type (a 403 by default); for a caller it is a wrong
      // request, so 1001 with the list of what exists.
      type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
      errorCode: ErrorCode.InvalidParameter,
      errorMsgTemplate: literal(`no operation at this path and method; the operations are ${operations}`),
    },
    {
      type: ResponseType.WAF_FILTERED,
      errorCode: ErrorCode.AccessDenied,
      errorMsgTemplate: literal('request refused by the web application firewall'),
    },
    {
      type: ResponseType.INTEGRATION_TIMEOUT,
      errorCode: ErrorCode.QueryTimeout,
      errorMsgTemplate: literal(
        'the request took longer than the service allows; ask for fewer records or fields, or narrow the filter',
      ),
    },
    {
      // API Gateway's own wording ("Unsupported Media Type", ...) is safe to show and says what went wrong.
      type: ResponseType.DEFAULT_4XX,
      errorCode: ErrorCode.InvalidParameter,
      errorMsgTemplate: '$context.error.messageString',
    },
    {
      // The request id is API Gateway's, which is also in the access log line of this request.
      type: ResponseType.DEFAULT_5XX,
      errorCode: ErrorCode.Internal,
      errorMsgTemplate: literal('internal error; request id $context.requestId'),
    },
  ];
}

/** The failure envelope of docs/interface.md §2 as a mapping template. */
export function envelopeTemplate(refusal: GatewayRefusal): string {
  return `{"success":false,"msg":null,"data":null,"errorCode":${refusal.errorCode},"errorMsg":${refusal.errorMsgTemplate}}`;
}

/**
 * Add every refusal to the API, with the CORS headers a browser needs to read the error body when an origin is
 * allowed (none otherwise: a deployment without `corsAllowOrigin` answers no cross-origin caller).
 */
export function addGatewayRefusals(
  api: RestApi,
  routes: readonly RouteDefinition[],
  corsAllowOrigin: string | undefined,
): void {
  const cors: Record<string, string> = corsAllowOrigin
    ? {
        'Access-Control-Allow-Origin': `'${corsAllowOrigin}'`,
        'Access-Control-Expose-Headers': `'${EXPOSED_HEADERS.join(',')}'`,
      }
    : {};
  for (const refusal of gatewayRefusals(routes)) {
    api.addGatewayResponse(`Refusal-${refusal.type.responseType}`, {
      type: refusal.type,
      statusCode: String(httpStatusFor(refusal.errorCode)),
      responseHeaders: { ...cors, ...refusal.extraHeaders },
      templates: { 'application/json': envelopeTemplate(refusal) },
    });
  }
}
