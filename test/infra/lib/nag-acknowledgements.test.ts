/**
 * cdk-nag's AwsSolutions pack over the whole app: no unacknowledged finding, and every acknowledgement says why.
 * Checked for the default stage and for one with every optional resource (WAF, alarm topic).
 */
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { type BuiltService, buildService } from '../../support/service-fixture';

let plain: BuiltService;
let everything: BuiltService;
let production: BuiltService;

beforeAll(() => {
  plain = buildService();
  everything = buildService({
    context: {
      stage: 'prod',
      wafAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/partner-acl/0123abcd',
      alarmEmail: 'oncall@example.com',
    },
  });
  production = buildService({
    context: { stage: 'live', production: 'true', alarmEmail: 'oncall@example.com', customerManagedKey: 'true' },
  });
});

function violationsOf(service: BuiltService): string[] {
  const report = new AwsSolutionsChecks(service.app).validateScope(service.app);
  return report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
}

function acknowledgementsOf(scope: IConstruct): Array<{ path: string; id: string; reason: string }> {
  const found: Array<{ path: string; id: string; reason: string }> = [];
  const visit = (node: IConstruct): void => {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        // CDK stores the id with an 'Annotation::' prefix.
        found.push({ path: node.node.path, id: id.replace(/^annotation::/i, ''), reason });
      }
    }
    for (const child of node.node.children) visit(child);
  };
  visit(scope);
  return found;
}

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding for the default stage', () => {
    expect(violationsOf(plain)).toEqual([]);
  });

  it('reports no unacknowledged finding with WAF and an alarm topic', () => {
    expect(violationsOf(everything)).toEqual([]);
  });

  it('reports no unacknowledged finding for a production stage with its own web ACL and key', () => {
    expect(violationsOf(production)).toEqual([]);
  });

  it('acknowledges the WAF rule only when no web ACL is associated', () => {
    const ids = (service: BuiltService) => acknowledgementsOf(service.app).map((a) => a.id);
    expect(ids(plain)).toContain('AwsSolutions-APIG3');
    expect(ids(everything)).not.toContain('AwsSolutions-APIG3');
    expect(ids(production)).not.toContain('AwsSolutions-APIG3');
  });

  it('acknowledges the unencrypted alarm topic only when there is no customer-managed key', () => {
    const ids = (service: BuiltService) => acknowledgementsOf(service.app).map((a) => a.id);
    expect(ids(everything)).toContain('AwsSolutions-SNS2');
    expect(ids(production)).not.toContain('AwsSolutions-SNS2');
  });

  it('gives every acknowledgement a written reason', () => {
    const acknowledgements = [...acknowledgementsOf(everything.app), ...acknowledgementsOf(production.app)];
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const { reason } of acknowledgements) expect(reason.length).toBeGreaterThan(40);
  });

  it('acknowledges exactly these rules', () => {
    const ids = [...new Set(acknowledgementsOf(plain.app).map((a) => a.id))].sort();
    expect(ids).toEqual([
      'AwsSolutions-APIG2',
      'AwsSolutions-APIG3',
      'AwsSolutions-APIG4',
      'AwsSolutions-APIG6',
      'AwsSolutions-COG4',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      // The change log's queue grants (a customer-managed key's kms:GenerateDataKey*, kms:ReEncrypt*).
      'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
      'AwsSolutions-IAM5[Action::kms:ReEncrypt*]',
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-IAM5[Resource::<CatalogDeploymentHandler8C2712E1.Arn>:*]',
      // The index builds' state machine: invoking its function's versions, reading its own executions, and the
      // Distributed Map's child executions.
      'AwsSolutions-IAM5[Resource::<IndexBuildsFunction57D53FF8.Arn>:*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:data-access-service-dev-index-builds:*]',
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"IndexBuildsStateMachine4407C2D2"}]}]}/*:*]`,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"IndexBuildsStateMachine4407C2D2"}]}]}:*]`,
      'AwsSolutions-L1',
      'AwsSolutions-SMG4',
      // The parked queue and the stream's on-failure queue are the end of the line (lib/change-log-functions.ts).
      'AwsSolutions-SQS3',
    ]);
  });
});
