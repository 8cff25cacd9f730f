/**
 * Serves Lambda handlers over plain HTTP the way API Gateway's REST proxy integration calls them: each request
 * becomes an APIGatewayProxyEvent, the handler's result becomes the response. Refusals that API Gateway itself
 * makes (unknown route, body beyond its limit) answer with the contract's envelope, as the deployed gateway
 * responses do, and with an `X-Request-Id` like every answer (docs/interface.md §2). Header names are the
 * caller's: any name (`__proto__`, `constructor`) is a plain entry of the event's header maps.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { serviceRoutes } from '../../shared/contract/client-routes';
import { pathParametersOf, type RouteDefinition } from '../../shared/contract/routes';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Lambda's synchronous invocation payload limit: a larger body never reaches a function. */
const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
/**
 * API Gateway's own limit: a larger body is read to its end (so that the caller gets the answer) and refused; past
 * this the connection is closed after the answer, as the gateway does.
 */
const MAX_READ_BYTES = 10 * 1024 * 1024;
/** Request headers a browser caller sends (the signed headers). */
export const CORS_ALLOW_HEADERS =
  'Content-Type, X-Time-Stamp, X-App-Code, X-Dataset-Code, X-Token, X-Sign-Version, X-Nonce, Idempotency-Key, If-Match';

/** The deployed functions' timeout. */
const FUNCTION_TIMEOUT_MS = 28_000;

export interface LambdaHttpOptions {
  handlers: ReadonlyMap<string, ProxyHandler>;
  /** Extra GET endpoints of the local server (health, documents). */
  pages?: ReadonlyMap<string, () => { contentType: string; body: string | Buffer }>;
  /** Told of every answered request (the terminal's request log). */
  onResponse?: (answered: AnsweredRequest) => void;
}

export interface AnsweredRequest {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  /** Set for every answer but the local pages (health, documents). */
  requestId?: string;
}

function envelope(status: number, errorCode: number, errorMsg: string, requestId: string): APIGatewayProxyResult {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId },
    body: JSON.stringify({ success: false, msg: null, data: null, errorCode, errorMsg }),
  };
}

/** The body, or why not: larger than a function takes (read to its end up to `MAX_READ_BYTES`, then left). */
async function readBody(req: IncomingMessage): Promise<Buffer | 'too large' | 'too large, unread'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_READ_BYTES) return 'too large, unread';
    if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
  }
  return size > MAX_REQUEST_BYTES ? 'too large' : Buffer.concat(chunks);
}

/** A request path matched to a route: the route, and the values of its `{name}` segments (URL-decoded). */
interface MatchedRoute {
  route: RouteDefinition;
  pathParameters: Record<string, string> | null;
}

/**
 * Finds a request path's route as API Gateway does: a literal path exactly, a `{name}` segment as one whole
 * non-empty segment. A segment that is not valid percent-encoding matches nothing.
 */
export function routeMatcher(routes: readonly RouteDefinition[]): (path: string) => MatchedRoute | undefined {
  const literal = new Map(routes.filter((r) => !r.path.includes('{')).map((route) => [route.path, route]));
  const templated = routes
    .filter((r) => r.path.includes('{'))
    .map((route) => ({
      route,
      names: pathParametersOf(route.path),
      pattern: new RegExp(
        `^${route.path
          .split(/\{[A-Za-z][A-Za-z0-9]*\}/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('([^/]+)')}$`,
      ),
    }));
  return (path) => {
    const exact = literal.get(path);
    if (exact) return { route: exact, pathParameters: null };
    for (const { route, names, pattern } of templated) {
      const match = pattern.exec(path);
      if (!match) continue;
      try {
        const values = names.map((name, i) => [name, decodeURIComponent(match[i + 1] as string)]);
        return { route, pathParameters: Object.fromEntries(values) };
      } catch {
        return undefined;
      }
    }
    return undefined;
  };
}

function toEvent(
  req: IncomingMessage,
  matched: MatchedRoute,
  path: string,
  body: Buffer,
  requestId: string,
): APIGatewayProxyEvent {
  const route = matched.route;
  // Maps, then own properties: a name such as `__proto__` or `constructor` is an entry like any other, never a
  // lookup on Object.prototype (as API Gateway's event, parsed from JSON, has it).
  const headers = new Map<string, string>();
  const multiValueHeaders = new Map<string, string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers.set(name, value);
    multiValueHeaders.set(name, [...(multiValueHeaders.get(name) ?? []), value]);
  }
  return {
    httpMethod: req.method ?? 'POST',
    path,
    resource: route.path,
    headers: Object.fromEntries(headers),
    multiValueHeaders: Object.fromEntries(multiValueHeaders),
    body: body.length ? body.toString('utf8') : null,
    isBase64Encoded: false,
    pathParameters: matched.pathParameters,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {
      requestId,
      httpMethod: req.method ?? 'POST',
      path,
      resourcePath: route.path,
      stage: 'local',
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
    } as APIGatewayProxyEvent['requestContext'],
  };
}

function toContext(route: RouteDefinition, requestId: string): Context {
  const deadline = Date.now() + FUNCTION_TIMEOUT_MS;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${route.operation}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${route.operation}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/local/${route.operation}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  res.writeHead(result.statusCode, result.headers as Record<string, string>);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

export function createLambdaHttpServer(options: LambdaHttpOptions): Server {
  const matchRoute = routeMatcher(serviceRoutes());
  return createServer(async (req, res) => {
    const started = Date.now();
    const path = (req.url ?? '/').split('?')[0] as string;
    // Every answer but the local pages carries a request id, the server's own refusals included.
    let requestId: string | undefined;
    if (options.onResponse) {
      const report = options.onResponse;
      res.once('finish', () =>
        report({
          method: req.method ?? 'GET',
          path,
          status: res.statusCode,
          durationMs: Date.now() - started,
          ...(requestId ? { requestId } : {}),
        }),
      );
    }
    try {
      const page = req.method === 'GET' ? options.pages?.get(path) : undefined;
      if (page) {
        const { contentType, body } = page();
        res.writeHead(200, { 'Content-Type': contentType });
        res.end(body);
        return;
      }
      requestId = randomUUID();
      const matched = matchRoute(path);
      const handler = matched && options.handlers.get(matched.route.operation);
      if (!matched || !handler) {
        send(res, envelope(400, 1001, `no operation at ${req.method} ${path}`, requestId));
        return;
      }
      const route = matched.route;
      if (req.method === 'OPTIONS') {
        // The CORS preflight, answered by API Gateway's CORS configuration when deployed. X-User-AK is not among
        // the allowed headers: client-key mode is for server-side tools, browsers use pre-generated tokens.
        res.writeHead(204, {
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': 'POST, OPTIONS',
          'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
          'Access-Control-Max-Age': '600',
          'X-Request-Id': requestId,
        });
        res.end();
        return;
      }
      if (req.method !== route.method) {
        send(res, envelope(400, 1001, `${path} accepts ${route.method} only`, requestId));
        return;
      }
      const body = await readBody(req);
      if (!Buffer.isBuffer(body)) {
        const refused = envelope(400, 1001, 'request body is larger than 1 MB (1048576 bytes)', requestId);
        if (body === 'too large, unread') refused.headers = { ...refused.headers, Connection: 'close' };
        send(res, refused);
        return;
      }
      send(res, await handler(toEvent(req, matched, path, body, requestId), toContext(route, requestId)));
    } catch (error) {
      // A handler never throws (the envelope answers every error); this is the server's own failure.
      process.stderr.write(`local server error: ${(error as Error).stack ?? String(error)}\n`);
      requestId ??= randomUUID();
      if (!res.headersSent) {
        send(res, envelope(500, 3001, `internal error of the local server; quote request id ${requestId}`, requestId));
      } else res.end();
    }
  });
}
