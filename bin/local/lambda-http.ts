/**
 * Serves Lambda handlers over plain HTTP the way API Gateway's REST proxy integration calls them: each request
 * becomes an APIGatewayProxyEvent, the handler's result becomes the response. Refusals that API Gateway itself
 * makes (unknown route, body beyond its limit) answer with the contract's envelope, as the deployed gateway
 * responses do.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { serviceRoutes } from '../../shared/contract/client-routes';
import { pathParametersOf, type RouteDefinition } from '../../shared/contract/routes';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Lambda's synchronous invocation payload limit: a larger body never reaches a function. */
const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
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
  /** Set when an operation's handler ran. */
  requestId?: string;
}

function envelope(status: number, errorCode: number, errorMsg: string) {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ success: false, msg: null, data: null, errorCode, errorMsg }),
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
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
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  return {
    httpMethod: req.method ?? 'POST',
    path,
    resource: route.path,
    headers,
    multiValueHeaders,
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
      const matched = matchRoute(path);
      const handler = matched && options.handlers.get(matched.route.operation);
      if (!matched || !handler) {
        send(res, envelope(400, 1001, `no operation at ${req.method} ${path}`));
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
        });
        res.end();
        return;
      }
      if (req.method !== route.method) {
        send(res, envelope(400, 1001, `${path} accepts ${route.method} only`));
        return;
      }
      const body = await readBody(req);
      if (!body) {
        send(res, envelope(400, 1001, 'request body is larger than 1 MB (1048576 bytes)'));
        return;
      }
      requestId = randomUUID();
      send(res, await handler(toEvent(req, matched, path, body, requestId), toContext(route, requestId)));
    } catch (error) {
      // A handler never throws (the envelope answers every error); this is the server's own failure.
      process.stderr.write(`local server error: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) send(res, envelope(500, 3001, 'internal error of the local server'));
      else res.end();
    }
  });
}
