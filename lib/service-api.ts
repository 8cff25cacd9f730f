/**
 * The REST API: one POST route per operation in the shared route list, and its `/client/` twin (client-key
 * mode), each pair a proxy integration to the operation's own Lambda, with CORS for browser callers, JSON access
 * logs, a stage-wide throttle as a coarse shield in front of the per-application quotas, the contract's envelope on API Gateway's own refusals, and an optional WAF.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  type CorsOptions,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import {
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IF_MATCH_HEADER,
  NONCE_HEADER,
  SIGN_VERSION_HEADER,
  TIME_STAMP_HEADER,
  TOKEN_HEADER,
} from '../packages/client/src/headers';
import { serviceRoutes } from '../shared/contract/client-routes';
import { addGatewayRefusals, EXPOSED_HEADERS } from './gateway-responses';
import { acknowledge } from './nag-acknowledgements';
import type { OperationFunction } from './operation-function';

/** Headers a browser sends on a signed request (docs/interface.md §3, §13, §16, §18), besides Content-Type. */
export const SIGNED_REQUEST_HEADERS = [
  TIME_STAMP_HEADER,
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  TOKEN_HEADER,
  'Content-Type',
  SIGN_VERSION_HEADER,
  NONCE_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IF_MATCH_HEADER,
];

/** A per-method throttle (requests per second, steady and burst). */
export interface MethodThrottle {
  rateLimit: number;
  burstLimit: number;
}

export interface ServiceApiProps {
  stage: string;
  operations: readonly OperationFunction[];
  /** Without it, no cross-origin request is allowed: no preflight route and no CORS header on refusals. */
  corsAllowOrigin?: string;
  throttleRateLimit: number;
  throttleBurstLimit: number;
  /** The throttle of each operation's method; operations not listed get the stage-wide one. */
  methodThrottles?: Partial<Record<OperationFunction['route']['operation'], MethodThrottle>>;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  logEncryptionKey?: IKey;
  /** The web ACL to associate with the stage (the service's own or the one named in context). */
  wafAclArn?: string;
}

/**
 * One access-log line per request, as JSON. Every value but the status is quoted because API Gateway writes `-`
 * for a missing number (no integration on a refusal), which would break the JSON. No header is logged: the
 * signed headers carry the token.
 */
const ACCESS_LOG_FIELDS: Record<string, string> = {
  requestId: '"$context.requestId"',
  extendedRequestId: '"$context.extendedRequestId"',
  requestTimeEpoch: '"$context.requestTimeEpoch"',
  sourceIp: '"$context.identity.sourceIp"',
  userAgent: '"$context.identity.userAgent"',
  httpMethod: '"$context.httpMethod"',
  resourcePath: '"$context.resourcePath"',
  status: '$context.status',
  responseLength: '"$context.responseLength"',
  responseLatency: '"$context.responseLatency"',
  integrationLatency: '"$context.integration.latency"',
  integrationStatus: '"$context.integration.status"',
  errorType: '"$context.error.responseType"',
  errorMessage: '$context.error.messageString',
  wafStatus: '"$context.waf.status"',
  xrayTraceId: '"$context.xrayTraceId"',
};

export function accessLogFormat(): string {
  return `{${Object.entries(ACCESS_LOG_FIELDS)
    .map(([name, value]) => `"${name}":${value}`)
    .join(',')}}`;
}

export class ServiceApi extends Construct {
  readonly api: RestApi;
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
      ...(props.logEncryptionKey ? { encryptionKey: props.logEncryptionKey } : {}),
    });

    const cors: CorsOptions | undefined = props.corsAllowOrigin
      ? {
          allowOrigins: [props.corsAllowOrigin],
          allowMethods: ['POST', 'OPTIONS'],
          allowHeaders: SIGNED_REQUEST_HEADERS,
          exposeHeaders: EXPOSED_HEADERS,
        }
      : undefined;
    // Every method gets an explicit throttle, so a flood of one operation (custom SQL above all) is refused
    // before it uses the stage's whole allowance.
    const methodOptions = Object.fromEntries(
      props.operations.map((operation) => {
        const throttle = props.methodThrottles?.[operation.route.operation] ?? {
          rateLimit: props.throttleRateLimit,
          burstLimit: props.throttleBurstLimit,
        };
        return [
          `${operation.route.path}/${operation.route.method}`,
          { throttlingRateLimit: throttle.rateLimit, throttlingBurstLimit: throttle.burstLimit },
        ];
      }),
    );

    this.api = new RestApi(this, 'Api', {
      restApiName: `data-access-service-${props.stage}`,
      description: `Data access service (${props.stage})`,
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // The stage and its account-wide CloudWatch role are not created: execution logs would need an account
      // setting a partner account may manage centrally; the JSON access log covers every request.
      cloudWatchRole: false,
      deployOptions: {
        stageName: props.stage,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(accessLogFormat()),
        tracingEnabled: true,
        metricsEnabled: true,
        throttlingRateLimit: props.throttleRateLimit,
        throttlingBurstLimit: props.throttleBurstLimit,
        methodOptions,
      },
      ...(cors ? { defaultCorsPreflightOptions: cors } : {}),
    });

    // Each operation's function serves its signed path and its /client/ path (client-key mode, docs/interface.md §14).
    const routes = serviceRoutes();
    for (const operation of props.operations) {
      const integration = new LambdaIntegration(operation.target, { proxy: true, allowTestInvoke: false });
      for (const route of routes.filter((r) => r.operation === operation.route.operation)) {
        this.api.root.resourceForPath(route.path).addMethod(route.method, integration);
      }
    }

    const served = new Set(props.operations.map((operation) => operation.route.operation));
    addGatewayRefusals(
      this.api,
      routes.filter((route) => served.has(route.operation)),
      props.corsAllowOrigin,
    );

    if (props.wafAclArn) {
      new CfnWebACLAssociation(this, 'WafAssociation', {
        resourceArn: this.api.deploymentStage.stageArn,
        webAclArn: props.wafAclArn,
      });
    }

    acknowledge(this.api, [
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Requests are validated in the function, which answers 1001 with a message naming the field as the ' +
          'contract requires; an API Gateway model would answer first with its own wording.',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          "Callers authenticate with the contract's signed headers (X-App-Code, X-Time-Stamp, X-Token), verified " +
          'in the function against Secrets Manager, or on /client/ paths with a personal access key (X-User-AK) ' +
          'verified in the function by its digest; CORS preflight (OPTIONS) must stay unauthenticated.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'Callers are partner applications signing requests with access keys, not Cognito users.',
      },
      {
        id: 'AwsSolutions-APIG6',
        reason:
          'Execution logging needs the account-wide API Gateway CloudWatch role, an account setting a partner may ' +
          'manage centrally; every request is in the JSON access log and every function logs one line per request.',
      },
      ...(props.wafAclArn
        ? []
        : [
            {
              id: 'AwsSolutions-APIG3',
              reason:
                'Outside production the web ACL is optional (context waf=true or wafAclArn): a development stage ' +
                'is bounded by the stage throttle and the per-application quotas. Production stages get one by default.',
            },
          ]),
    ]);
  }
}
