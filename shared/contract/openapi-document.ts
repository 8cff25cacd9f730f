/**
 * The OpenAPI 3.1 document of the API, derived rather than written: paths from `ROUTES`, bodies and envelopes
 * from the zod schemas in `operation-schemas.ts` (JSON Schema 2020-12, which OpenAPI 3.1 uses as is), error
 * codes and their HTTP statuses from `errors.ts`. `npm run openapi` writes it to docs/openapi.json and the local
 * server serves it at /openapi.json, so the document cannot drift from what the service checks.
 */
import * as z from 'zod';
import { type ErrorCodeValue, httpStatusFor } from './errors';
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
import { ROUTES } from './routes';
import { TIMESTAMP_WINDOW_MS } from './signed-headers';

type JsonObject = { [key: string]: unknown };

export interface OpenApiOptions {
  /** The server the document names (default: a `baseUrl` variable defaulting to the local server). */
  serverUrl?: string;
  /** The API's version (the generators pass package.json's). */
  version?: string;
}

const ERROR_MEANING: Record<ErrorCodeValue, string> = {
  1001: 'parameter error: missing or malformed parameter, wrong field type, body not JSON or over 1 MB',
  1002: 'signature verification failed',
  1003: 'timestamp more than 10 minutes away from the server clock',
  1004: 'application not found',
  1005: 'dataset not found',
  1006: 'no access: dataset not granted, or operation or field outside the grant',
  2001: 'query timeout',
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
  timeStamp: { name: 'X-Time-Stamp', description: 'Request time: milliseconds since the epoch, as text.' },
  appCode: { name: 'X-App-Code', description: 'The application code; equal to the body appCode.' },
  datasetCode: {
    name: 'X-Dataset-Code',
    description: 'The dataset code; equal to the body datasetCode. Required by data operations.',
  },
  token: {
    name: 'X-Token',
    description:
      'base64 of HMAC-SHA256 keyed with the signing secret over the sorted pairs accessKey, appCode, datasetCode ' +
      `(only when sent) and timeStamp, joined as name=value with "&". Valid for ${TIMESTAMP_WINDOW_MS / 60_000} minutes.`,
  },
} as const;

const RESPONSE_HEADERS = {
  'X-Request-Id': { description: 'The request id, also in the service log line', schema: { type: 'string' } },
  'RateLimit-Limit': {
    description: 'Requests allowed in the tightest quota window (once the caller is authenticated)',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left in that window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until that window resets', schema: { type: 'integer' } },
};

function headerRefs(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const refs: Record<string, unknown> = {};
  for (const name of Object.keys(RESPONSE_HEADERS)) refs[name] = { $ref: `#/components/headers/${name}` };
  return { ...refs, ...extra };
}

function pascalCase(operation: string): string {
  return operation.replace(/(^|-)([a-z])/g, (_match, _dash, letter: string) => letter.toUpperCase());
}

function camelCase(operation: string): string {
  const pascal = pascalCase(operation);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
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
    out[id] = rest;
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
  for (const route of ROUTES) {
    const schemas = OPERATION_SCHEMAS[route.operation];
    const name = pascalCase(route.operation);
    requestEntries.push([`${name}Request`, schemas.request]);
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
  for (const route of ROUTES) {
    const operation = OPERATION_SCHEMAS[route.operation];
    const name = pascalCase(route.operation);
    const responses: Record<string, unknown> = {
      200: {
        description: 'Success envelope',
        headers: headerRefs(),
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Success` } } },
      },
    };
    // The shared failure responses list every code of their status; the description says which this one answers.
    for (const status of errorCodesByStatus(operation.errorCodes).keys()) {
      responses[status] = { $ref: `#/components/responses/Failure${status}` };
    }
    const signed = { timeStamp: [], appCode: [], token: [] };
    paths[route.path] = {
      [route.method.toLowerCase()]: {
        operationId: camelCase(route.operation),
        summary: operation.summary,
        description:
          `Error codes: ${operation.errorCodes
            .slice()
            .sort((a, b) => a - b)
            .map((code) => `${code} (HTTP ${httpStatusFor(code)})`)
            .join(', ')}.` +
          (route.requiresDataset ? '' : ' X-Dataset-Code is optional; when sent it is signed like any other.'),
        tags: [route.requiresDataset ? 'records' : 'custom SQL'],
        security: route.requiresDataset ? [{ ...signed, datasetCode: [] }] : [signed, { ...signed, datasetCode: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Request` } } },
        },
        responses,
      },
    };
  }

  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...failureStatuses].sort(([a], [b]) => a - b)) {
    responses[`Failure${status}`] = {
      description: `${STATUS_TEXT[status] ?? 'Failure'}: ${codes.map((code) => `${code} ${ERROR_MEANING[code]}`).join('; ')}`,
      headers: headerRefs(status === 429 ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/Failure${status}` } } },
    };
  }

  const securitySchemes: Record<string, unknown> = {};
  for (const [key, scheme] of Object.entries(SECURITY_SCHEMES)) {
    securitySchemes[key] = { type: 'apiKey', in: 'header', name: scheme.name, description: scheme.description };
  }

  return {
    openapi: '3.1.1',
    info: {
      title: 'Data access service',
      version: options.version ?? '0.1.0',
      summary: 'Signed-header API to read and write dataset records and run registered SQL',
      description:
        'Every operation is a POST with a JSON body and four signed headers (X-Time-Stamp, X-App-Code, ' +
        'X-Dataset-Code for data operations, X-Token). Answers are envelopes: success with `data`, or failure ' +
        'with `errorCode` and `errorMsg` and an HTTP status that matches the code.',
    },
    servers: [
      options.serverUrl
        ? { url: options.serverUrl }
        : { url: '{baseUrl}', variables: { baseUrl: { default: 'http://127.0.0.1:3000' } } },
    ],
    tags: [
      { name: 'records', description: 'Dataset records: list, fetch, create, update' },
      { name: 'custom SQL', description: 'Registered queries over the datasets the caller may read' },
    ],
    paths,
    components: {
      schemas,
      responses,
      headers: {
        ...RESPONSE_HEADERS,
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
      },
      securitySchemes,
    },
  };
}
