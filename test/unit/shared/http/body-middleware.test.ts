/**
 * The 1 MB body limit (docs/interface.md §7) is checked on the decoded size, before any decoding or parsing; the
 * nesting limit right after parsing, before anything walks the body.
 */
import type middy from '@middy/core';
import fc from 'fast-check';
import { nestsDeeperThan } from '../../../../shared/contract/body-schemas';
import { InvalidParameterError } from '../../../../shared/contract/errors';
import { routeFor } from '../../../../shared/contract/routes';
import { base64DecodedBytes, MAX_BODY_BYTES, parseBody } from '../../../../shared/http/body-middleware';
import { type ApiEvent, type ApiResult, RequestOutcome, type ServiceContext } from '../../../../shared/http/request';

function readBody(body: string, isBase64Encoded: boolean) {
  const request = {
    event: { headers: {}, body, isBase64Encoded },
    context: { outcome: new RequestOutcome('request-1', routeFor('get-list'), 0) },
  } as unknown as middy.Request<ApiEvent, ApiResult, Error, ServiceContext>;
  (parseBody().before as middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext>)(request);
  return request.context.request.body;
}

/** A JSON object body of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  const frame = '{"pad":""}';
  return `{"pad":"${'x'.repeat(bytes - frame.length)}"}`;
}

describe('base64DecodedBytes', () => {
  it('is the decoded length for any content, padded or not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(base64DecodedBytes(Buffer.from(bytes).toString('base64'))).toBe(bytes.length);
      }),
    );
  });
});

describe('the 1 MB body limit', () => {
  it.each([
    ['plain', false],
    ['base64', true],
  ])('accepts a %s body of exactly 1 MB and refuses one byte more', (_label, base64) => {
    const encode = (text: string) => (base64 ? Buffer.from(text).toString('base64') : text);
    expect(readBody(encode(jsonOfSize(MAX_BODY_BYTES)), base64)).toEqual({ pad: expect.any(String) });
    expect(() => readBody(encode(jsonOfSize(MAX_BODY_BYTES + 1)), base64)).toThrow(
      new InvalidParameterError('request body is larger than 1 MB (1048576 bytes)'),
    );
  });

  it('counts bytes, not characters', () => {
    const multiByte = `{"pad":"${'é'.repeat(MAX_BODY_BYTES / 2)}"}`; // 2 bytes each: well over 1 MB
    expect(multiByte.length).toBeLessThan(MAX_BODY_BYTES);
    expect(() => readBody(multiByte, false)).toThrow('request body is larger than 1 MB');
  });
});

describe('the nesting limit', () => {
  /** A body `levels` deep in all: the body object, then arrays or objects inside it. */
  const bodyOfDepth = (levels: number, open: string, close: string) =>
    `{"paramMap":${open.repeat(levels - 2)}{}${close.repeat(levels - 2)}}`;

  it('accepts a body 64 levels deep and refuses one 65 levels deep, in arrays or objects', () => {
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
    ] as const) {
      expect(readBody(bodyOfDepth(64, open, close), false)).toEqual({ paramMap: expect.anything() });
      expect(() => readBody(bodyOfDepth(65, open, close), false)).toThrow(
        new InvalidParameterError('request body nests deeper than 64 levels; a json field may hold at most 30 levels'),
      );
    }
  });

  it('measures the deepest branch of any JSON value, without recursing', () => {
    const depth = (value: unknown): number =>
      value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value).map(depth)) : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, limit) => {
        expect(nestsDeeperThan(value, limit)).toBe(depth(value) > limit);
      }),
    );
    const million = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    expect([nestsDeeperThan(million, 999_999), nestsDeeperThan(million, 1_000_000)]).toEqual([true, false]);
  });
});
