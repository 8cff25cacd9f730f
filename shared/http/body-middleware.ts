/**
 * Reads the request: header names lower-cased, body size limit (checked before any parsing work), JSON
 * parsing, the object check and the nesting limit (docs/interface.md §2, §7): whatever walks the body later
 * (the idempotency fingerprint, hooks, the operation) walks at most `MAX_BODY_DEPTH` levels. A GET has no body: its
 * request is its path parameters. What it reads becomes the request every later step shares, read-only
 * (`ServiceRequest`, request.ts).
 */
import type middy from '@middy/core';
import { MAX_BODY_DEPTH, MAX_JSON_DEPTH, nestsDeeperThan } from '../contract/body-schemas';
import { InvalidParameterError } from '../contract/errors';
import { pathParametersOf } from '../contract/routes';
import type { ApiEvent, ApiResult, ServiceContext } from './request';

export const MAX_BODY_BYTES = 1024 * 1024;

export function parseBody(): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const readBody: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const { requestId, route } = request.context.outcome;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.event.headers ?? {})) {
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
    // A GET (client-mode loginUserInfo, bff endpoint) has no body to read, and whatever one carries is ignored:
    // the route's path parameters (API Gateway's, already URL-decoded) stand in for it, and only those.
    if (route.method === 'GET') {
      const sent = request.event.pathParameters ?? {};
      const parameters: Record<string, unknown> = {};
      for (const name of pathParametersOf(route.path)) {
        if (Object.hasOwn(sent, name)) parameters[name] = sent[name];
      }
      request.context.request = { requestId, route, headers, body: parameters };
      return;
    }
    const raw = request.event.body;
    if (raw === null || raw === undefined || raw === '') {
      throw new InvalidParameterError('request body is required: a JSON object with appCode and paramMap');
    }
    const size = request.event.isBase64Encoded ? base64DecodedBytes(raw) : Buffer.byteLength(raw);
    if (size > MAX_BODY_BYTES) {
      throw new InvalidParameterError(`request body is larger than 1 MB (${MAX_BODY_BYTES} bytes)`);
    }
    const bytes = request.event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
    const text = bytes.toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new InvalidParameterError('request body is not valid JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new InvalidParameterError('request body must be a JSON object');
    }
    if (nestsDeeperThan(parsed, MAX_BODY_DEPTH)) {
      throw new InvalidParameterError(
        `request body nests deeper than ${MAX_BODY_DEPTH} levels; a json field may hold at most ${MAX_JSON_DEPTH} levels`,
      );
    }
    request.context.request = { requestId, route, headers, body: parsed as Record<string, unknown>, rawBody: bytes };
  };
  return { before: readBody };
}

/**
 * Base64 takes 4 characters for 3 bytes, and its `=` padding stands for no byte: the decoded size is known
 * before decoding (without the padding, a body of exactly 1 MB would count as 2 bytes over).
 */
export function base64DecodedBytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}
