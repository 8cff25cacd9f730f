/**
 * The REST API: routes from the shared route list, CORS, access logging, stage throttling, optional WAF, and
 * API Gateway's own refusals answered in the contract's envelope and codes.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { Match } from 'aws-cdk-lib/assertions';
import { EXPOSED_HEADERS as RUNTIME_EXPOSED_HEADERS } from '../../../shared/composition/ports';
import { type BuiltService, buildService, logicalIdOf } from '../../support/service-fixture';

let service: BuiltService;
let template: Template;
/** A stage that allows browser callers from any origin (context corsAllowOrigin=*). */
let corsTemplate: Template;

beforeAll(() => {
  service = buildService();
  template = service.statelessTemplate;
  corsTemplate = buildService({ context: { corsAllowOrigin: '*' } }).statelessTemplate;
});

const ROUTE_PATHS = [
  ['get-list', '/openapi/data/get-list'],
  ['get-one', '/openapi/data/get-one'],
  ['create', '/openapi/data/create'],
  ['batch-create', '/openapi/data/batch-create'],
  ['update', '/openapi/data/update'],
  ['execute-sql', '/api/custom/executeSql'],
  ['aggregate', '/openapi/data/aggregate'],
  ['indexes', '/openapi/data/indexes'],
] as const;

function resourceIdForPath(path: string, from: Template = template): string {
  // Walk the resource tree from the root, one path part at a time.
  const resources = from.findResources('AWS::ApiGateway::Resource');
  let parent: unknown = {
    'Fn::GetAtt': [logicalIdOf(from, 'AWS::ApiGateway::RestApi', '/Api/Api/'), 'RootResourceId'],
  };
  let found = '';
  for (const part of path.split('/').filter(Boolean)) {
    const match = Object.entries(resources).find(
      ([, r]) => r.Properties.PathPart === part && JSON.stringify(r.Properties.ParentId) === JSON.stringify(parent),
    );
    if (!match) throw new Error(`no resource for '${part}' of ${path}`);
    found = match[0];
    parent = { Ref: found };
  }
  return found;
}

describe('routes', () => {
  it('has one POST method per operation and its /client/ twin, GET loginUserInfo and bff endpoint, and nothing else', () => {
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method'));
    expect(methods.filter((m) => m.Properties.HttpMethod === 'POST')).toHaveLength(18);
    expect(methods.filter((m) => m.Properties.HttpMethod === 'GET')).toHaveLength(2);
    expect(methods.filter((m) => !['POST', 'GET'].includes(m.Properties.HttpMethod))).toHaveLength(0);
  });

  it('adds a CORS preflight (OPTIONS) per resource when an origin is allowed', () => {
    const methods = Object.values(corsTemplate.findResources('AWS::ApiGateway::Method'));
    expect(methods.filter((m) => m.Properties.HttpMethod === 'POST')).toHaveLength(18);
    expect(methods.filter((m) => m.Properties.HttpMethod === 'OPTIONS').length).toBeGreaterThanOrEqual(18);
    expect(methods.filter((m) => !['POST', 'GET', 'OPTIONS'].includes(m.Properties.HttpMethod))).toHaveLength(0);
  });

  it.each([
    ...ROUTE_PATHS.map(([operation, path]) => ['POST', operation, path.replace(/^\/[a-z]+\//, '/client/')] as const),
    ['GET', 'login-user-info', '/client/user/loginUserInfo'] as const,
    ['GET', 'bff-endpoint', '/client/bff/endpoint/{appCode}/{functionName}'] as const,
  ])('sends %s %s at its /client/ path %s to the same function', (method, operation, path) => {
    const functionId = logicalIdOf(template, 'AWS::Lambda::Function', `/Op-${operation}/Function/`);
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: method,
      ResourceId: { Ref: resourceIdForPath(path) },
      AuthorizationType: 'NONE',
      Integration: {
        Type: 'AWS_PROXY',
        IntegrationHttpMethod: 'POST',
        Uri: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [functionId, 'Arn'] }])] }),
      },
    });
  });

  it.each(ROUTE_PATHS)('sends POST for %s at %s to its own function through a proxy integration', (operation, path) => {
    const functionId = logicalIdOf(template, 'AWS::Lambda::Function', `/Op-${operation}/Function/`);
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'POST',
      ResourceId: { Ref: resourceIdForPath(path) },
      AuthorizationType: 'NONE',
      Integration: {
        Type: 'AWS_PROXY',
        IntegrationHttpMethod: 'POST',
        Uri: Match.objectLike({
          'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [functionId, 'Arn'] }])],
        }),
      },
    });
  });

  it('lets API Gateway invoke each function on the deployed stage only (no console test-invoke)', () => {
    // One per method: eight signed, ten client-key.
    template.resourceCountIs('AWS::Lambda::Permission', 20);
  });
});

describe('CORS', () => {
  it('allows no cross-origin request unless context names an origin', () => {
    expect(
      Object.keys(template.findResources('AWS::ApiGateway::Method', { Properties: { HttpMethod: 'OPTIONS' } })),
    ).toEqual([]);
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.Environment?.Variables?.CORS_ALLOW_ORIGIN).toBeUndefined();
    }
    for (const response of Object.values(template.findResources('AWS::ApiGateway::GatewayResponse'))) {
      expect(JSON.stringify(response.Properties.ResponseParameters ?? {})).not.toContain('Access-Control');
    }
  });

  it('does not let a browser send a personal access key: X-User-AK is not an allowed header on /client/ paths', () => {
    corsTemplate.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'OPTIONS',
      ResourceId: { Ref: resourceIdForPath('/client/data/get-list', corsTemplate) },
      Integration: Match.objectLike({
        IntegrationResponses: [
          Match.objectLike({
            ResponseParameters: Match.objectLike({
              'method.response.header.Access-Control-Allow-Headers':
                "'X-Time-Stamp,X-App-Code,X-Dataset-Code,X-Token,Content-Type,X-Sign-Version,X-Nonce,Idempotency-Key,If-Match'",
            }),
          }),
        ],
      }),
    });
  });

  it('answers the preflight with the signed-request headers and POST', () => {
    corsTemplate.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'OPTIONS',
      Integration: {
        Type: 'MOCK',
        IntegrationResponses: [
          Match.objectLike({
            StatusCode: '204',
            ResponseParameters: {
              'method.response.header.Access-Control-Allow-Headers':
                "'X-Time-Stamp,X-App-Code,X-Dataset-Code,X-Token,Content-Type,X-Sign-Version,X-Nonce,Idempotency-Key,If-Match'",
              'method.response.header.Access-Control-Allow-Origin': "'*'",
              'method.response.header.Access-Control-Allow-Methods': "'POST,OPTIONS'",
              'method.response.header.Access-Control-Expose-Headers':
                "'X-Request-Id,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,Retry-After,Idempotent-Replayed,ETag'",
            },
          }),
        ],
      },
    });
  });

  it('exposes the same headers as the functions do', () => {
    const runtime = RUNTIME_EXPOSED_HEADERS.split(',').map((h) => h.trim());
    expect(runtime).toEqual([
      'X-Request-Id',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'Idempotent-Replayed',
      'ETag',
    ]);
  });

  it('tells the functions which origin to allow', () => {
    corsTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CORS_ALLOW_ORIGIN: '*' }) },
    });
  });
});

describe('stage', () => {
  it('is named after the stage, traced, throttled as a coarse shield and access-logged as JSON', () => {
    const accessLogsId = logicalIdOf(template, 'AWS::Logs::LogGroup', '/Api/AccessLogs/');
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      TracingEnabled: true,
      MethodSettings: Match.arrayWith([
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          DataTraceEnabled: false,
          MetricsEnabled: true,
          ThrottlingRateLimit: 200,
          ThrottlingBurstLimit: 400,
        },
      ]),
      AccessLogSetting: {
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp('^\\{"requestId":"\\$context.requestId",.*"status":\\$context.status,.*\\}$'),
      },
    });
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0];
    expect(JSON.stringify(stage?.Properties.AccessLogSetting.DestinationArn)).toContain(`"${accessLogsId}"`);
  });

  it('writes access-log lines that are JSON once API Gateway fills in the variables', () => {
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0];
    const format: string = stage?.Properties.AccessLogSetting.Format;
    const line = format
      .replace('$context.status', '429')
      .replace('$context.error.messageString', '"Too Many Requests"')
      .replace(/\$context\.[\w.]+/g, '-');
    expect(JSON.parse(line)).toMatchObject({ requestId: '-', status: 429, errorMessage: 'Too Many Requests' });
    expect(format).not.toMatch(/X-Token|header/i);
  });

  it('throttles each method: the data operations at the stage rate, custom SQL and aggregate at their own lower one', () => {
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0];
    const perMethod = (stage?.Properties.MethodSettings as Array<Record<string, unknown>>)
      .filter((setting) => setting.HttpMethod === 'POST')
      .map(({ ResourcePath, ThrottlingRateLimit, ThrottlingBurstLimit }) => ({
        ResourcePath,
        ThrottlingRateLimit,
        ThrottlingBurstLimit,
      }));
    // API Gateway's method paths escape '/' as '~1'.
    expect(perMethod).toEqual([
      { ResourcePath: '/~1openapi~1data~1get-list', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      { ResourcePath: '/~1openapi~1data~1get-one', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      { ResourcePath: '/~1openapi~1data~1create', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      { ResourcePath: '/~1openapi~1data~1batch-create', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      { ResourcePath: '/~1openapi~1data~1update', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      { ResourcePath: '/~1api~1custom~1executeSql', ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
      { ResourcePath: '/~1openapi~1data~1aggregate', ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
      { ResourcePath: '/~1openapi~1data~1changes', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      { ResourcePath: '/~1openapi~1data~1indexes', ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
    ]);
  });

  it('takes the throttles from context', () => {
    const custom = buildService({
      context: {
        throttleRateLimit: '50',
        throttleBurstLimit: '100',
        sqlThrottleRateLimit: '5',
        sqlThrottleBurstLimit: '8',
      },
    });
    custom.statelessTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({ HttpMethod: '*', ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 }),
        Match.objectLike({
          ResourcePath: '/~1openapi~1data~1get-one',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
        }),
        Match.objectLike({
          ResourcePath: '/~1api~1custom~1executeSql',
          ThrottlingRateLimit: 5,
          ThrottlingBurstLimit: 8,
        }),
      ]),
    });
  });
});

describe('WAF', () => {
  const wafAclArn = 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/partner-acl/0123abcd';

  it('is neither created nor associated outside production unless context asks', () => {
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
  });

  it('associates the web ACL from context with the stage', () => {
    const withWaf = buildService({ context: { wafAclArn } });
    withWaf.statelessTemplate.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: wafAclArn,
      ResourceArn: Match.anyValue(),
    });
  });
});

describe('gateway responses', () => {
  const envelope = (code: number, errorMsg: string) =>
    `{"success":false,"msg":null,"data":null,"errorCode":${code},"errorMsg":${errorMsg}}`;
  const CORS_HEADERS = {
    'gatewayresponse.header.Access-Control-Allow-Origin': "'*'",
    'gatewayresponse.header.Access-Control-Expose-Headers':
      "'X-Request-Id,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,Retry-After,Idempotent-Replayed,ETag'",
  };

  it('adds the CORS headers to every refusal when an origin is allowed', () => {
    const responses = Object.values(corsTemplate.findResources('AWS::ApiGateway::GatewayResponse'));
    expect(responses).toHaveLength(7);
    for (const response of responses) expect(response.Properties.ResponseParameters).toMatchObject(CORS_HEADERS);
  });

  it.each([
    ['REQUEST_TOO_LARGE', '400', envelope(1001, '"request body is too large: at most 1 MB is accepted"')],
    [
      'MISSING_AUTHENTICATION_TOKEN',
      '400',
      envelope(
        1001,
        '"no operation at this path and method; the operations are POST /openapi/data/get-list, POST /openapi/data/get-one, ' +
          'POST /openapi/data/create, POST /openapi/data/batch-create, POST /openapi/data/update, POST /api/custom/executeSql, ' +
          'POST /openapi/data/aggregate, POST /openapi/data/changes, POST /openapi/data/indexes, POST /client/data/get-list, ' +
          'POST /client/data/get-one, POST /client/data/create, POST /client/data/batch-create, POST /client/data/update, POST /client/custom/executeSql, ' +
          'POST /client/data/aggregate, POST /client/data/changes, POST /client/data/indexes, ' +
          'GET /client/user/loginUserInfo, GET /client/bff/endpoint/{appCode}/{functionName}"',
      ),
    ],
    ['WAF_FILTERED', '403', envelope(1006, '"request refused by the web application firewall"')],
    [
      'INTEGRATION_TIMEOUT',
      '504',
      envelope(
        2001,
        '"the request took longer than the service allows; ask for fewer records or fields, or narrow the filter"',
      ),
    ],
    ['DEFAULT_4XX', '400', envelope(1001, '$context.error.messageString')],
    ['DEFAULT_5XX', '500', envelope(3001, '"internal error; request id $context.requestId"')],
  ])('answers %s with status %s and the contract envelope', (type, status, body) => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: type,
      StatusCode: status,
      ResponseTemplates: { 'application/json': body },
    });
  });

  it('answers THROTTLED with 429, 4001 and a Retry-After header', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'THROTTLED',
      StatusCode: '429',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
      ResponseTemplates: {
        'application/json': envelope(4001, '"the service is receiving too many requests; retry after 1 second(s)"'),
      },
    });
  });

  it('has exactly these seven gateway responses', () => {
    template.resourceCountIs('AWS::ApiGateway::GatewayResponse', 7);
  });

  it('produces valid JSON envelopes once API Gateway fills in the variables', () => {
    for (const response of Object.values(template.findResources('AWS::ApiGateway::GatewayResponse'))) {
      const body: string = response.Properties.ResponseTemplates['application/json'];
      const filled = body
        .replace('$context.error.messageString', '"Unsupported Media Type"')
        .replace(/\$context\.\w+/g, 'x');
      expect(JSON.parse(filled)).toMatchObject({ success: false, msg: null, data: null });
    }
  });
});
