/**
 * The service's own WAFv2 web ACL (REGIONAL, for the API stage), on by default in production:
 *
 * 1. Bodies over 1 MB are refused at the edge with the contract's 1001 envelope. API Gateway accepts bodies up to
 *    10 MB but Lambda's invocation payload stops at 6 MB, so without this rule a 6–10 MB body would come back as
 *    the gateway's 5xx (3001). WAF inspects only the first kilobytes of a body, so the rule reads the declared
 *    `Content-Length` instead (docs/deploying.md says what that leaves out).
 * 2. A rate-based rule per client IP address, answering 4001.
 * 3. AWS managed common rules (Core rule set), with its 8 KB body-size rule only counted: the contract accepts
 *    bodies up to 1 MB, and rule 1 enforces that.
 */
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { ErrorCode, httpStatusFor } from '../shared/contract/errors';

export interface ServiceFirewallProps {
  stage: string;
  /** Largest body accepted, in bytes (the body middleware's limit). */
  maxBodyBytes: number;
  /** Requests one IP address may send in 5 minutes. */
  rateLimitPer5Minutes: number;
}

/**
 * A regular expression matching exactly the decimal numbers (as text, leading zeros allowed) greater than `limit`:
 * longer numbers, and for each digit position, the same prefix followed by a greater digit.
 */
export function greaterThanPattern(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`limit must be a non-negative integer: ${limit}`);
  const digits = String(limit);
  const length = digits.length;
  const alternatives = [`[1-9][0-9]{${length},}`];
  for (let i = 0; i < length; i += 1) {
    const digit = Number(digits[i]);
    if (digit === 9) continue;
    const next = digit + 1;
    const range = next === 9 ? '9' : `[${next}-9]`;
    const rest = length - i - 1;
    alternatives.push(`${digits.slice(0, i)}${range}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  return `^0*(?:${alternatives.join('|')})$`;
}

/** The failure envelope of docs/interface.md §2 as WAF's custom response body. */
function envelope(errorCode: number, errorMsg: string): string {
  return JSON.stringify({ success: false, msg: null, data: null, errorCode, errorMsg });
}

export const BODY_TOO_LARGE_MESSAGE = 'request body is too large: at most 1 MB is accepted';
export const RATE_LIMITED_MESSAGE =
  'too many requests from this address; slow down and retry after a few minutes (the limit counts 5-minute windows)';

const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  metricName,
  sampledRequestsEnabled: true,
});

export class ServiceFirewall extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: ServiceFirewallProps) {
    super(scope, id);
    const prefix = `data-access-service-${props.stage}`;
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: prefix,
      description: `Data access service ${props.stage} - body size, per-IP rate, AWS managed common rules`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(prefix),
      customResponseBodies: {
        'body-too-large': {
          contentType: 'APPLICATION_JSON',
          content: envelope(ErrorCode.InvalidParameter, BODY_TOO_LARGE_MESSAGE),
        },
        'rate-limited': {
          contentType: 'APPLICATION_JSON',
          content: envelope(ErrorCode.RateLimited, RATE_LIMITED_MESSAGE),
        },
      },
      rules: [
        {
          name: 'body-over-1mb',
          priority: 0,
          statement: {
            regexMatchStatement: {
              regexString: greaterThanPattern(props.maxBodyBytes),
              fieldToMatch: { singleHeader: { Name: 'content-length' } },
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: httpStatusFor(ErrorCode.InvalidParameter),
                customResponseBodyKey: 'body-too-large',
              },
            },
          },
          visibilityConfig: visibility(`${prefix}-body-over-1mb`),
        },
        {
          name: 'rate-per-ip',
          priority: 1,
          statement: {
            rateBasedStatement: {
              limit: props.rateLimitPer5Minutes,
              aggregateKeyType: 'IP',
              evaluationWindowSec: 300,
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: httpStatusFor(ErrorCode.RateLimited),
                customResponseBodyKey: 'rate-limited',
              },
            },
          },
          visibilityConfig: visibility(`${prefix}-rate-per-ip`),
        },
        {
          name: 'aws-common-rules',
          priority: 2,
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              // Its body rule refuses bodies over 8 KB; the contract accepts 1 MB (rule body-over-1mb).
              ruleActionOverrides: [{ name: 'SizeRestrictions_BODY', actionToUse: { count: {} } }],
            },
          },
          overrideAction: { none: {} },
          visibilityConfig: visibility(`${prefix}-aws-common-rules`),
        },
      ],
    });
  }
}
