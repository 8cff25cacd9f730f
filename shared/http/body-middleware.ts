/**
 * Reads the request: header names lower-cased, body size limit (checked before any parsing work), JSON
 * parsing and the object check (contract §2, §7).
 */
import type middy from '@middy/core';
import { InvalidParameterError } from './errors';
import type { ApiEvent, ApiResult, ServiceContext } from './request-state';

export const MAX_BODY_BYTES = 1024 * 1024;

export function parseBody(): middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  const readBody: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const state = request.context.state;
    for (const [name, value] of Object.entries(request.event.headers ?? {})) {
      if (value !== undefined) state.headers[name.toLowerCase()] = value;
    }
    const raw = request.event.body;
    if (raw === null || raw === undefined || raw === '') {
      throw new InvalidParameterError('request body is required: a JSON object with appCode and paramMap');
    }
    // Base64 takes 4 characters for 3 bytes: the size is known before decoding.
    const size = request.event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw);
    if (size > MAX_BODY_BYTES) {
      throw new InvalidParameterError(`request body is larger than 1 MB (${MAX_BODY_BYTES} bytes)`);
    }
    const text = request.event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new InvalidParameterError('request body is not valid JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new InvalidParameterError('request body must be a JSON object');
    }
    state.body = parsed as Record<string, unknown>;
  };
  return { before: readBody };
}
