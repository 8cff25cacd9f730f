/**
 * The REST API: one POST route per operation in the shared route list, each a proxy integration to its own
 * Lambda, with CORS for browser callers, JSON access logs, a stage-wide throttle as a coarse shield in front of
 * the per-application quotas, the contract's envelope on API Gateway's own refusals, and an optional WAF.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { addGatewayRefusals, EXPOSED_HEADERS } from './gateway-responses';
import { acknowledge } from './nag-acknowledgements';
import type { OperationFunction } from './operation-function';

/** Headers a browser sends on a signed request (docs/interface.md §3, §16), besides Content-Type. */
export const SIGNED_REQUEST_HEADERS = [
  'X-Time-Stamp',
  'X-App-Code',
  'X-Dataset-Code',
  'X-Token',
  'Content-Type',
  'X-Sign-Version',
  'X-Nonce',
];

export interface ServiceApiProps {
  stage: string;
  operations: readonly OperationFunction[];
  corsAllowOrigin: string;
  throttleRateLimit: number;
  throttleBurstLimit: number;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
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
    });

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
      },
      defaultCorsPreflightOptions: {
        allowOrigins: [props.corsAllowOrigin],
        allowMethods: ['POST', 'OPTIONS'],
        allowHeaders: SIGNED_REQUEST_HEADERS,
        exposeHeaders: EXPOSED_HEADERS,
      },
    });

    for (const operation of props.operations) {
      const resource = this.api.root.resourceForPath(operation.route.path);
      resource.addMethod(
        operation.route.method,
        new LambdaIntegration(operation.function, { proxy: true, allowTestInvoke: false }),
      );
    }

    addGatewayRefusals(
      this.api,
      props.operations.map((operation) => operation.route),
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
          'in the function against Secrets Manager; CORS preflight (OPTIONS) must stay unauthenticated.',
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
                'WAF is optional (context wafAclArn) because web ACLs are usually shared and managed per account; ' +
                'the stage throttle and per-application quotas bound abuse without it.',
            },
          ]),
    ]);
  }
}
