/**
 * The OpenAPI 3.1 document of the API, derived rather than written: paths from `ROUTES` and their `/client/`
 * twins (client-routes.ts), bodies and envelopes
 * from the zod schemas in `operation-schemas.ts` (JSON Schema 2020-12, which OpenAPI 3.1 uses as is), error
 * codes and their HTTP statuses from `errors.ts`. `npm run openapi` writes it to docs/openapi.json and the local
 * server serves it at /openapi.json, so the document cannot drift from what the service checks.
 */
import * as z from 'zod';
import {
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  ETAG_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  IF_MATCH_HEADER,
  NONCE_HEADER,
  RATE_LIMIT_LIMIT_HEADER,
  RATE_LIMIT_REMAINING_HEADER,
  RATE_LIMIT_RESET_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER_HEADER,
  SIGN_VERSION_HEADER,
  TIME_STAMP_HEADER,
  TIMESTAMP_WINDOW_MS,
  TOKEN_HEADER,
  USER_KEY_HEADER,
} from '../../packages/client/src/headers';
import { NONCE_PATTERN } from '../../packages/client/src/signature-v2';
import { operationRoutes, serviceRoutes } from './client-routes';
import { type ErrorCodeValue, httpStatusFor, PRECONDITION_FAILED } from './errors';
import {
  dataRecordSchema,
  errorCodesByStatus,
  failureEnvelope,
  failureEnvelopeSchema,
  listResultSchema,
  OPERATION_SCHEMAS,
  sqlResultSchema,
  successEnvelopeSchema,
} from './operation-schemas';
import { pathParametersOf, type RouteDefinition } from './routes';

type JsonObject = { [key: string]: unknown };

export interface OpenApiOptions {
  /** The server the document names (default: a `baseUrl` variable defaulting to the local server). */
  serverUrl?: string;
  /** The API's version (the generators pass package.json's). */
  version?: string;
}

const ERROR_MEANING: Record<ErrorCodeValue, string> = {
  1001: 'parameter error: missing or malformed parameter, wrong field type, body not JSON, over 1 MB or nested deeper than 64 levels',
  1002:
    'signature verification failed: a wrong token, a version-1 token where version 2 is required, or a reused ' +
    'X-Nonce (client-key mode: no active personal access key)',
  1003: 'timestamp more than 10 minutes away from the server clock',
  1004: 'application not found',
  1005: 'dataset not found',
  1006: 'no access: dataset not granted, or operation or field outside the grant',
  2001: 'query timeout; when the work goes on after it (custom SQL data still loading), Retry-After says when to try again',
  2002: 'record not found (or outside the grant row filter)',
  3001: 'internal error; the message carries the request id',
  4001: 'request rate exceeded; Retry-After says when to try again',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  504: 'Gateway Timeout',
};

/** The signed headers, one security scheme each: a request must carry them together. */
const SECURITY_SCHEMES = {
  timeStamp: { name: TIME_STAMP_HEADER, description: 'Request time: milliseconds since the epoch, as text.' },
  appCode: { name: APP_CODE_HEADER, description: 'The application code; equal to the body appCode.' },
  datasetCode: {
    name: DATASET_CODE_HEADER,
    description: 'The dataset code; equal to the body datasetCode. Required by data operations.',
  },
  token: {
    name: TOKEN_HEADER,
    description:
      'base64 of HMAC-SHA256 keyed with the signing secret over the sorted pairs accessKey, appCode, datasetCode ' +
      `(only when sent) and timeStamp, joined as name=value with "&". Valid for ${TIMESTAMP_WINDOW_MS / 60_000} minutes. ` +
      `Signature version 2 (applications configured with signatureVersion 2, which accept nothing else): the same ` +
      'secret over those pairs plus bodySha256 (lower-case hex SHA-256 of the raw body bytes), method (POST or ' +
      'GET), nonce (the X-Nonce value), path (the request path, no query) and signVersion=2, sorted the same way; ' +
      `sent with ${SIGN_VERSION_HEADER}: 2 and ${NONCE_HEADER}.`,
  },
} as const;

/**
 * The headers signature version 2 adds (docs/interface.md §16), as header parameters of every signed operation: optional
 * in the document because only applications configured with `signatureVersion: 2` send them, and those must.
 */
const SIGNATURE_V2_PARAMETERS = {
  SignVersion: {
    name: SIGN_VERSION_HEADER,
    in: 'header',
    required: false,
    description:
      'Signature version 2: "2". Required, with X-Nonce, by an application configured with signatureVersion 2, ' +
      'whose X-Token then signs the body digest, method, nonce and path too; any other token is 1002. ' +
      'Applications on version 1 ignore it, whatever its value.',
    schema: { type: 'string', enum: ['2'] },
  },
  Nonce: {
    name: NONCE_HEADER,
    in: 'header',
    required: false,
    description:
      'Signature version 2: a new value for every request, 16 to 64 letters, digits, "_" or "-", signed as the ' +
      `nonce pair. A nonce already used within the timestamp window (${TIMESTAMP_WINDOW_MS / 60_000} minutes) is ` +
      '1002, so a captured request cannot be replayed; a malformed one is 1001. Sent with X-Sign-Version: 2. ' +
      'Applications on version 1 ignore it, whatever its value.',
    schema: {
      type: 'string',
      minLength: 16,
      maxLength: 64,
      pattern: NONCE_PATTERN.source,
      examples: ['3f9c2b7e81d04a6f9e5b0c1d2a3b4c5d'],
    },
  },
} as const;

const RESPONSE_HEADERS = {
  [REQUEST_ID_HEADER]: { description: 'The request id, also in the service log line', schema: { type: 'string' } },
  [RATE_LIMIT_LIMIT_HEADER]: {
    description: 'Requests allowed in the tightest quota window (once the caller is authenticated)',
    schema: { type: 'integer' },
  },
  [RATE_LIMIT_REMAINING_HEADER]: { description: 'Requests left in that window', schema: { type: 'integer' } },
  [RATE_LIMIT_RESET_HEADER]: { description: 'Seconds until that window resets', schema: { type: 'integer' } },
};

function headerRefs(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const refs: Record<string, unknown> = {};
  for (const name of Object.keys(RESPONSE_HEADERS)) refs[name] = { $ref: `#/components/headers/${name}` };
  return { ...refs, ...extra };
}

/** Codes only signed requests can meet: client-key mode has no timestamp and finds the application by the key. */
const SIGNED_ONLY_CODES: ReadonlySet<ErrorCodeValue> = new Set([1003, 1004]);

/** `clientGetList`, ...; loginUserInfo keeps the platform's name. */
function clientOperationId(route: RouteDefinition): string {
  return route.operation === 'login-user-info' ? 'loginUserInfo' : `client${pascalCase(route.operation)}`;
}

/** A route's `{name}` segments as OpenAPI path parameters, described by the operation's request schema. */
function pathParameters(route: RouteDefinition, request: z.ZodType): Record<string, unknown>[] {
  const names = pathParametersOf(route.path);
  if (names.length === 0) return [];
  const schema = z.toJSONSchema(request, { io: 'input' }) as { properties?: Record<string, JsonObject> };
  return names.map((name) => {
    const { description, ...property } = schema.properties?.[name] ?? { type: 'string' };
    return { name, in: 'path', required: true, ...(description ? { description } : {}), schema: property };
  });
}

function pascalCase(operation: string): string {
  return operation.replace(/(^|-)([a-z])/g, (_match, _dash, letter: string) => letter.toUpperCase());
}

function camelCase(operation: string): string {
  const pascal = pascalCase(operation);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}

/**
 * zod writes the safe-integer range as the bounds of every integer; they say nothing an `integer` type does not,
 * and Swagger UI shows -9007199254740991 as the example of such a field. Only bounds zod added are dropped.
 */
function withoutSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'minimum' && child === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && child === Number.MAX_SAFE_INTEGER) continue;
    out[key] = withoutSafeIntegerBounds(child);
  }
  return out;
}

/** JSON Schemas of a registry, with `$ref`s between them pointing into components.schemas. */
function componentSchemas(entries: [string, z.ZodType][], io: 'input' | 'output'): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of entries) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` });
  const out: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // Inside an OpenAPI document a component is addressed by its place, not by $id; the dialect is the document's.
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonObject;
    out[id] = withoutSafeIntegerBounds(rest) as JsonObject;
  }
  return out;
}

/** Build the document. Pure: the same inputs give the same document, byte for byte once serialised. */
export function buildOpenApiDocument(options: OpenApiOptions = {}): JsonObject {
  const responseEntries: [string, z.ZodType][] = [
    ['DataRecord', dataRecordSchema],
    ['ListResult', listResultSchema],
    ['SqlResult', sqlResultSchema],
    ['FailureEnvelope', failureEnvelope],
  ];
  const requestEntries: [string, z.ZodType][] = [];
  const failureStatuses = new Map<number, ErrorCodeValue[]>();
  for (const route of operationRoutes()) {
    const schemas = OPERATION_SCHEMAS[route.operation];
    const name = pascalCase(route.operation);
    if (route.method === 'POST') requestEntries.push([`${name}Request`, schemas.request]);
    responseEntries.push([`${name}Success`, successEnvelopeSchema(schemas.data)]);
    for (const [status, codes] of errorCodesByStatus(schemas.errorCodes)) {
      failureStatuses.set(status, [...new Set([...(failureStatuses.get(status) ?? []), ...codes])]);
    }
  }
  for (const [status, codes] of [...failureStatuses].sort(([a], [b]) => a - b)) {
    responseEntries.push([`Failure${status}`, failureEnvelopeSchema(codes.sort((a, b) => a - b))]);
  }
  const schemas = { ...componentSchemas(requestEntries, 'input'), ...componentSchemas(responseEntries, 'output') };

  const paths: Record<string, unknown> = {};
  for (const route of serviceRoutes()) {
    const client = route.mode === 'client';
    const operation = OPERATION_SCHEMAS[route.operation];
    const errorCodes = client
      ? operation.errorCodes.filter((code) => !SIGNED_ONLY_CODES.has(code))
      : operation.errorCodes;
    const name = pascalCase(route.operation);
    const responses: Record<string, unknown> = {
      200: {
        description: 'Success envelope',
        headers: headerRefs({
          ...(route.idempotent
            ? { [IDEMPOTENT_REPLAYED_HEADER]: { $ref: `#/components/headers/${IDEMPOTENT_REPLAYED_HEADER}` } }
            : {}),
          ...(route.answersRevision ? { [ETAG_HEADER]: { $ref: `#/components/headers/${ETAG_HEADER}` } } : {}),
        }),
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Success` } } },
      },
    };
    // The shared failure responses list every code of their status; the description says which this one answers.
    for (const status of errorCodesByStatus(errorCodes).keys()) {
      responses[status] = { $ref: `#/components/responses/Failure${status}` };
    }
    if (route.conditional) responses[PRECONDITION_FAILED] = { $ref: '#/components/responses/PreconditionFailed' };
    const signed = { timeStamp: [], appCode: [], token: [] };
    const parameters = [
      ...(client
        ? []
        : Object.keys(SIGNATURE_V2_PARAMETERS).map((key) => ({ $ref: `#/components/parameters/${key}` }))),
      ...(route.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      ...(route.conditional ? [{ $ref: '#/components/parameters/IfMatch' }] : []),
      ...pathParameters(route, operation.request),
    ];
    paths[route.path] = {
      [route.method.toLowerCase()]: {
        operationId: client ? clientOperationId(route) : camelCase(route.operation),
        summary: operation.summary,
        description:
          `Error codes: ${errorCodes
            .slice()
            .sort((a, b) => a - b)
            .map((code) => `${code} (HTTP ${httpStatusFor(code)})`)
            .join(', ')}.` +
          (client
            ? route.method === 'GET'
              ? ` Client-key mode only: a personal access key in ${USER_KEY_HEADER}; no body.`
              : ` Client-key mode: a personal access key in ${USER_KEY_HEADER}, no signed headers; the body as on the signed path.`
            : route.requiresDataset
              ? ''
              : ' X-Dataset-Code is optional; when sent it is signed like any other.'),
        tags: [client ? 'client key' : route.requiresDataset ? 'records' : 'custom SQL'],
        ...(parameters.length > 0 ? { parameters } : {}),
        security: client
          ? [{ userKey: [] }]
          : route.requiresDataset
            ? [{ ...signed, datasetCode: [] }]
            : [signed, { ...signed, datasetCode: [] }],
        ...(route.method === 'POST'
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Request` } } },
              },
            }
          : {}),
        responses,
      },
    };
  }

  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...failureStatuses].sort(([a], [b]) => a - b)) {
    responses[`Failure${status}`] = {
      description: `${STATUS_TEXT[status] ?? 'Failure'}: ${codes.map((code) => `${code} ${ERROR_MEANING[code]}`).join('; ')}`,
      headers: headerRefs(
        status === 429 || status === 504
          ? { [RETRY_AFTER_HEADER]: { $ref: `#/components/headers/${RETRY_AFTER_HEADER}` } }
          : {},
      ),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/Failure${status}` } } },
    };
  }

  responses.PreconditionFailed = {
    description:
      'Precondition Failed: 1001 with HTTP 412, the record is no longer at the revision If-Match names; nothing was ' +
      'written. Read it again (its ETag is its revision) and decide whether to send the update again.',
    headers: headerRefs(),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Failure400' } } },
  };

  const securitySchemes: Record<string, unknown> = {};
  for (const [key, scheme] of Object.entries(SECURITY_SCHEMES)) {
    securitySchemes[key] = { type: 'apiKey', in: 'header', name: scheme.name, description: scheme.description };
  }
  securitySchemes.userKey = {
    type: 'apiKey',
    in: 'header',
    name: USER_KEY_HEADER,
    description:
      'Client-key mode (/client/ paths): a personal access key made by `das user-key create`, for tools and ' +
      "scripts acting as a user with the user's grants. Not for browsers: they use pre-generated tokens.",
  };

  return {
    openapi: '3.1.1',
    info: {
      title: 'Data access service',
      version: options.version ?? '0.1.0',
      summary: 'Signed-header API to read and write dataset records and run registered SQL',
      description:
        'Every operation is a POST with a JSON body and four signed headers (X-Time-Stamp, X-App-Code, ' +
        'X-Dataset-Code for data operations, X-Token); an application configured with signature version 2 adds ' +
        'X-Sign-Version and X-Nonce and signs the body, method and path too. Answers are envelopes: success with `data`, or failure ' +
        'with `errorCode` and `errorMsg` and an HTTP status that matches the code. Tools and scripts acting as a ' +
        'person use the same operations under /client/ with a personal access key in X-User-AK instead.',
    },
    servers: [
      options.serverUrl
        ? { url: options.serverUrl }
        : { url: '{baseUrl}', variables: { baseUrl: { default: 'http://127.0.0.1:3000' } } },
    ],
    tags: [
      { name: 'records', description: 'Dataset records: list, fetch, create, batch create, update' },
      { name: 'custom SQL', description: 'Registered queries over the datasets the caller may read' },
      {
        name: 'client key',
        description: `The same operations for tools and scripts acting as a user: ${USER_KEY_HEADER} instead of signing`,
      },
    ],
    paths,
    components: {
      schemas,
      responses,
      headers: {
        ...RESPONSE_HEADERS,
        [RETRY_AFTER_HEADER]: { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
        [IDEMPOTENT_REPLAYED_HEADER]: {
          description: 'true when this is the kept answer of an earlier request with the same Idempotency-Key',
          schema: { type: 'string', enum: ['true'] },
        },
        [ETAG_HEADER]: {
          description:
            'The revision of the record answered, in quotes: 1 when created, one more on each update that changes ' +
            'it. Send it back as If-Match to update only that revision.',
          schema: { type: 'string', pattern: '^"[1-9][0-9]*"$', examples: ['"3"'] },
        },
      },
      parameters: {
        ...SIGNATURE_V2_PARAMETERS,
        IfMatch: {
          name: IF_MATCH_HEADER,
          in: 'header',
          required: false,
          description:
            'Optional: the revision the update was decided on, as an ETag gave it ("3"). When the record is at ' +
            'another revision nothing is written and the answer is 1001 with HTTP 412. Without it, the update ' +
            'applies to whatever revision the record is at.',
          schema: { type: 'string', examples: ['"3"'] },
        },
        IdempotencyKey: {
          name: IDEMPOTENCY_KEY_HEADER,
          in: 'header',
          required: false,
          description:
            'Optional, 1 to 255 printable ASCII characters, scoped to the application. For 24 hours a request with the ' +
            'same key, operation, dataset and body answers the first answer again (Idempotent-Replayed: true) and writes ' +
            'nothing; the same key with another request is 1001; while the first still runs, 4001 with Retry-After: 1. ' +
            'Refused requests (1001-1006, 2002, 4001) are not remembered; after a 3001, a 2001 or no answer, a retry ' +
            'completes the first request without writing any record twice.',
          schema: {
            type: 'string',
            minLength: 1,
            maxLength: 255,
            pattern: '^[\\x20-\\x7E]+$',
            examples: ['load-2024-05-01-part-1'],
          },
        },
      },
      securitySchemes,
    },
  };
}
