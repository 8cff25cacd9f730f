/** The OpenAPI document lists every route with its request, success and failure shapes, auth and rate-limit headers. */
import { buildOpenApiDocument } from '../../../../shared/contract/openapi-document';
import { executeSqlRequestSchema, getListRequestSchema } from '../../../../shared/contract/operation-schemas';
import { ROUTES } from '../../../../shared/contract/routes';

// biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON document
const doc = buildOpenApiDocument() as any;

function resolve(ref: string) {
  const parts = ref.replace(/^#\//, '').split('/');
  // biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON document
  return parts.reduce((node: any, part) => node?.[part], doc);
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and lists exactly the routes of ROUTES, as POST, and their /client/ twins', () => {
    expect(doc.openapi).toBe('3.1.1');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/custom/executeSql',
      '/client/bff/endpoint/{appCode}/{functionName}',
      '/client/custom/executeSql',
      '/client/data/aggregate',
      '/client/data/batch-create',
      '/client/data/changes',
      '/client/data/create',
      '/client/data/get-list',
      '/client/data/get-one',
      '/client/data/indexes',
      '/client/data/update',
      '/client/user/loginUserInfo',
      '/openapi/data/aggregate',
      '/openapi/data/batch-create',
      '/openapi/data/changes',
      '/openapi/data/create',
      '/openapi/data/get-list',
      '/openapi/data/get-one',
      '/openapi/data/indexes',
      '/openapi/data/update',
    ]);
    for (const route of ROUTES) expect(Object.keys(doc.paths[route.path])).toEqual(['post']);
    expect(Object.keys(doc.paths['/client/user/loginUserInfo'])).toEqual(['get']);
  });

  it('a /client/ path takes the signed path’s body, answers the same data, and needs only X-User-AK', () => {
    const signed = doc.paths['/openapi/data/get-one'].post;
    const client = doc.paths['/client/data/get-one'].post;
    expect(client.requestBody).toEqual(signed.requestBody);
    expect(client.responses[200]).toEqual(signed.responses[200]);
    expect(client.security).toEqual([{ userKey: [] }]);
    expect(client.operationId).toBe('clientGetOne');
    // No timestamp, and the key finds the application: 1003 and 1004 cannot happen.
    expect(client.description).toMatch(/^Error codes: 1001 \(HTTP 400\), 1002 \(HTTP 401\), 1005 \(HTTP 404\), 1006/);
    const info = doc.paths['/client/user/loginUserInfo'].get;
    expect(info.requestBody).toBeUndefined();
    expect(info.security).toEqual([{ userKey: [] }]);
    const data = resolve(info.responses[200].content['application/json'].schema.$ref).properties.data;
    expect(Object.keys(data.properties)).toEqual(['id', 'userName', 'loginName', 'appCode', 'role']);
  });

  it('the bff endpoint is a GET whose application and function are path parameters, answering three fields', () => {
    const bff = doc.paths['/client/bff/endpoint/{appCode}/{functionName}'].get;
    expect(bff.operationId).toBe('clientBffEndpoint');
    expect(bff.requestBody).toBeUndefined();
    expect(bff.security).toEqual([{ userKey: [] }]);
    expect(bff.description).toBe(
      'Error codes: 1001 (HTTP 400), 1002 (HTTP 401), 1006 (HTTP 403), 2002 (HTTP 404), 3001 (HTTP 500), ' +
        '4001 (HTTP 429). Client-key mode only: a personal access key in X-User-AK; no body.',
    );
    expect(
      bff.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    ).toEqual([
      ['appCode', 'path', true],
      ['functionName', 'path', true],
    ]);
    expect(bff.parameters[1].schema).toMatchObject({ type: 'string', examples: ['mask-email'] });
    const data = resolve(bff.responses[200].content['application/json'].schema.$ref).properties.data;
    expect(Object.keys(data.properties)).toEqual(['description', 'version', 'gmt_modified']);
    expect(data.additionalProperties).toBe(false);
  });

  it.each(ROUTES.map((r) => [r.operation, r.path]))('%s has a request body and a success envelope', (_op, path) => {
    const operation = doc.paths[path].post;
    const request = resolve(operation.requestBody.content['application/json'].schema.$ref);
    expect(request).toBeDefined();
    const success = resolve(operation.responses[200].content['application/json'].schema.$ref);
    expect(success.required).toEqual(['success', 'msg', 'data']);
    expect(success.properties.success).toEqual({ type: 'boolean', const: true });
  });

  it('answers each error code with its contract HTTP status and the failure envelope', () => {
    const getOne = doc.paths['/openapi/data/get-one'].post.responses;
    expect(Object.keys(getOne).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500', '504']);
    const codesOf = (status: number) => resolve(`#/components/schemas/Failure${status}`).properties.errorCode;
    expect(codesOf(400)).toMatchObject({ const: 1001 });
    expect(codesOf(401)).toMatchObject({ enum: [1002, 1003] });
    expect(codesOf(403)).toMatchObject({ const: 1006 });
    expect(codesOf(404)).toMatchObject({ enum: [1004, 1005, 2002] });
    expect(codesOf(429)).toMatchObject({ const: 4001 });
    expect(codesOf(500)).toMatchObject({ const: 3001 });
    expect(codesOf(504)).toMatchObject({ const: 2001 });
    const failure = resolve('#/components/schemas/FailureEnvelope');
    expect(failure.required).toEqual(['success', 'msg', 'data', 'errorCode', 'errorMsg']);
    expect(failure.properties.errorCode.enum).toEqual([1001, 1002, 1003, 1004, 1005, 1006, 2001, 2002, 3001, 4001]);
  });

  it('execute-sql has no dataset-only failures; get-list has no 2002', () => {
    expect(Object.keys(doc.paths['/api/custom/executeSql'].post.responses)).not.toContain('403');
    expect(doc.paths['/openapi/data/get-list'].post.description).not.toContain('2002');
  });

  it('declares the four signed headers and the personal access key; data operations need all four signed ones, execute-sql the dataset optionally', () => {
    const schemes = doc.components.securitySchemes;
    expect(Object.values(schemes).map((s) => (s as { name: string }).name)).toEqual([
      'X-Time-Stamp',
      'X-App-Code',
      'X-Dataset-Code',
      'X-Token',
      'X-User-AK',
    ]);
    expect(schemes.userKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-User-AK' });
    expect(doc.paths['/openapi/data/create'].post.security).toEqual([
      { timeStamp: [], appCode: [], token: [], datasetCode: [] },
    ]);
    expect(doc.paths['/api/custom/executeSql'].post.security).toEqual([
      { timeStamp: [], appCode: [], token: [] },
      { timeStamp: [], appCode: [], token: [], datasetCode: [] },
    ]);
  });

  it('declares the signature-version-2 headers on every signed operation, and on no /client/ one', () => {
    const signedPaths = Object.keys(doc.paths).filter((path) => !path.startsWith('/client/'));
    expect(signedPaths.sort()).toEqual([
      '/api/custom/executeSql',
      '/openapi/data/aggregate',
      '/openapi/data/batch-create',
      '/openapi/data/changes',
      '/openapi/data/create',
      '/openapi/data/get-list',
      '/openapi/data/get-one',
      '/openapi/data/indexes',
      '/openapi/data/update',
    ]);
    const headersOf = (path: string) => {
      const [operation] = Object.values(doc.paths[path]) as { parameters?: { $ref?: string; in?: string }[] }[];
      // Shared headers are references; a route's own path parameters are written inline.
      return (operation?.parameters ?? []).map((p) => (p.$ref ? resolve(p.$ref) : p)).filter((p) => p.in === 'header');
    };
    for (const path of signedPaths) {
      expect(headersOf(path).map((p) => p.name)).toEqual(expect.arrayContaining(['X-Sign-Version', 'X-Nonce']));
    }
    for (const path of Object.keys(doc.paths).filter((p) => p.startsWith('/client/'))) {
      expect(headersOf(path).map((p) => p.name)).not.toContain('X-Nonce');
    }
    const version = doc.components.parameters.SignVersion;
    expect(version).toMatchObject({ name: 'X-Sign-Version', in: 'header', required: false, schema: { enum: ['2'] } });
    expect(version.description).toContain('signatureVersion 2');
    const nonce = doc.components.parameters.Nonce;
    expect(nonce).toMatchObject({
      name: 'X-Nonce',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 16, maxLength: 64, pattern: '^[A-Za-z0-9_-]{16,64}$' },
    });
    expect(nonce.description).toContain('already used within the timestamp window (10 minutes) is 1002');
    expect(new RegExp(nonce.schema.pattern).test(nonce.schema.examples[0])).toBe(true);
  });

  it('says how a version-2 token is computed and that a reused nonce is 1002', () => {
    expect(doc.components.securitySchemes.token.description).toContain(
      'the same secret over those pairs plus bodySha256 (lower-case hex SHA-256 of the raw body bytes), method (POST ' +
        'or GET), nonce (the X-Nonce value), path (the request path, no query) and signVersion=2',
    );
    expect(doc.components.responses.Failure401.description).toContain(
      '1002 signature verification failed: a wrong token, a version-1 token where version 2 is required, or a reused X-Nonce',
    );
  });

  it('names the request id and rate-limit headers on every response, and Retry-After on 429', () => {
    for (const name of ['Failure400', 'Failure429']) {
      expect(Object.keys(doc.components.responses[name].headers)).toEqual(
        expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      );
    }
    expect(doc.components.responses.Failure429.headers['Retry-After']).toBeDefined();
    expect(doc.components.responses.Failure400.headers['Retry-After']).toBeUndefined();
    expect(Object.keys(doc.paths['/openapi/data/get-list'].post.responses[200].headers)).toContain('RateLimit-Limit');
  });

  it('every $ref resolves', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect(resolve(ref.slice(8, -1))).toBeDefined();
  });
});

describe('operation schemas', () => {
  it('accept the contract example bodies', () => {
    expect(
      getListRequestSchema.safeParse({
        appCode: 'app-demo',
        datasetCode: 'orders',
        paramMap: { currentPage: 1, pageSize: 10, ytSortList: [{ amount: 'desc' }], status_in: ['new'] },
      }).success,
    ).toBe(true);
    expect(
      executeSqlRequestSchema.safeParse({ appCode: 'app-demo', sqlCode: 'q-1', params: { since: 'x' } }).success,
    ).toBe(true);
    expect(executeSqlRequestSchema.safeParse({ appCode: 'app-demo', id: 1001 }).success).toBe(true);
  });

  it('refuse a sort direction other than asc/desc, and a query without sqlCode or id', () => {
    expect(
      getListRequestSchema.safeParse({ appCode: 'a', datasetCode: 'd', paramMap: { ytSortList: [{ x: 'up' }] } })
        .success,
    ).toBe(false);
    expect(executeSqlRequestSchema.safeParse({ appCode: 'app-demo', params: {} }).success).toBe(false);
  });

  it('gives fixed, realistic examples: no safe-integer bounds, and an example for every patterned string', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
    const unexampled: string[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON document
    const walk = (node: any, at: string) => {
      if (node === null || typeof node !== 'object') return;
      // Swagger UI invents a random string for a pattern without an example, a new one on every load.
      if (typeof node.pattern === 'string' && !Array.isArray(node.examples)) unexampled.push(at);
      for (const [key, child] of Object.entries(node)) walk(child, `${at}/${key}`);
    };
    walk(doc, '#');
    expect(unexampled).toEqual([]);
    expect(resolve('#/components/schemas/ListResult').properties.paging.properties).toEqual({
      pageSize: { type: 'integer', description: 'Records per page as served (at most 100)', examples: [10] },
      totalCount: { type: 'integer', description: 'Exact number of records matching the filters', examples: [42] },
      currentPage: { type: 'integer', description: 'From 1', examples: [1] },
    });
    expect(resolve('#/components/schemas/ExecuteSqlRequest').anyOf[0].examples).toEqual([
      { appCode: 'app-demo', sqlCode: 'revenue-by-status', params: { since: '2024-01-01 00:00:00' } },
    ]);
  });
});
