/**
 * A production stage (`-c production=true`, here under a stage name that is not `prod`): alarms that reach
 * someone, retained and protected data, retained logs, the service's web ACL, reserved concurrency for custom
 * SQL, and the optional customer-managed key on every table, secret, log group and the alarm topic.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { type BuiltService, buildService, logicalIdOf } from '../../support/service-fixture';

let production: BuiltService;
let stateful: Template;
let stateless: Template;
let withKey: BuiltService;
let development: BuiltService;

beforeAll(() => {
  production = buildService({
    context: { stage: 'live', production: 'true', alarmEmail: 'oncall@example.com' },
  });
  stateful = production.statefulTemplate;
  stateless = production.statelessTemplate;
  withKey = buildService({
    context: {
      stage: 'live',
      production: 'true',
      alarmEmail: 'oncall@example.com',
      customerManagedKey: 'true',
      logRetentionDays: '365',
    },
  });
  development = buildService();
});

describe('production data survives mistakes', () => {
  it('retains every table and protects it from deletion', () => {
    const tables = Object.values(stateful.findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(4);
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
      expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    }
  });

  it('leaves development tables unprotected, retaining only the records table', () => {
    const tables = Object.values(development.statefulTemplate.findResources('AWS::DynamoDB::Table'));
    expect(
      tables.map((t) => [t.Properties.TableName, t.DeletionPolicy, t.Properties.DeletionProtectionEnabled]),
    ).toEqual([
      ['data-access-service-dev-records', 'Retain', false],
      ['data-access-service-dev-catalog', 'Delete', false],
      ['data-access-service-dev-quota', 'Delete', false],
      // The change log is the datasets' audit trail for its retention window: kept like the records.
      ['data-access-service-dev-events', 'Retain', false],
    ]);
  });

  it('retains every secret', () => {
    // Two applications' keys, the default signing secret, and custom SQL's writer and query users (Aurora in production).
    const secrets = Object.values(stateful.findResources('AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(5);
    for (const secret of secrets) expect(secret.DeletionPolicy).toBe('Retain');
    const devSecrets = Object.values(development.statefulTemplate.findResources('AWS::SecretsManager::Secret'));
    for (const secret of devSecrets) expect(secret.DeletionPolicy).toBe('Delete');
  });

  it('turns on termination protection for both stacks, in production only', () => {
    expect([production.stateful.terminationProtection, production.stateless.terminationProtection]).toEqual([
      true,
      true,
    ]);
    expect([development.stateful.terminationProtection, development.stateless.terminationProtection]).toEqual([
      false,
      false,
    ]);
  });

  it('keeps logs 180 days by default, and retains them when the stack goes', () => {
    const groups = Object.values(stateless.findResources('AWS::Logs::LogGroup'));
    // Eleven operation functions, the API's access log, the catalog deployment's function and provider, the change
    // log's stream, delivery and fold functions, the index builds' function and state machine, and custom SQL's
    // mirror function, query-user function and its provider.
    expect(groups.length).toBe(22);
    for (const group of groups) {
      expect(group.Properties.RetentionInDays).toBe(180);
      expect(group.DeletionPolicy).toBe('Retain');
    }
  });

  it('keeps logs as long as logRetentionDays says', () => {
    for (const group of Object.values(withKey.statelessTemplate.findResources('AWS::Logs::LogGroup'))) {
      expect(group.Properties.RetentionInDays).toBe(365);
    }
  });
});

describe('production alarms reach someone', () => {
  it('gives every alarm the e-mail topic as its alarm and OK action', () => {
    const topicId = logicalIdOf(stateless, 'AWS::SNS::Topic', '/AlarmTopic/');
    const alarms = Object.values(stateless.findResources('AWS::CloudWatch::Alarm'));
    // With the custom SQL mirror's two (failed runs, lag).
    expect(alarms).toHaveLength(16);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
    stateless.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  });
});

describe('edge protection in production', () => {
  it('creates the service web ACL and associates it with the stage', () => {
    const aclId = logicalIdOf(stateless, 'AWS::WAFv2::WebACL', '/Firewall/');
    stateless.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [aclId, 'Arn'] },
      ResourceArn: Match.anyValue(),
    });
    const acl = stateless.findResources('AWS::WAFv2::WebACL')[aclId];
    expect(acl?.Properties.Scope).toBe('REGIONAL');
    expect(acl?.Properties.DefaultAction).toEqual({ Allow: {} });
    expect(acl?.Properties.Rules.map((rule: { Name: string }) => rule.Name)).toEqual([
      'body-over-1mb',
      'rate-per-ip',
      'aws-common-rules',
    ]);
  });

  it('refuses a declared body over 1 MB with status 400 and the 1001 envelope', () => {
    const acl = Object.values(stateless.findResources('AWS::WAFv2::WebACL'))[0];
    const rule = acl?.Properties.Rules[0];
    expect(rule.Statement.RegexMatchStatement.FieldToMatch).toEqual({ SingleHeader: { Name: 'content-length' } });
    const pattern = new RegExp(rule.Statement.RegexMatchStatement.RegexString);
    expect(['1048576', '1048577', '6291456', '10485760'].map((length) => pattern.test(length))).toEqual([
      false,
      true,
      true,
      true,
    ]);
    expect(rule.Action).toEqual({
      Block: { CustomResponse: { ResponseCode: 400, CustomResponseBodyKey: 'body-too-large' } },
    });
    const body = acl?.Properties.CustomResponseBodies['body-too-large'];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({
      success: false,
      msg: null,
      data: null,
      errorCode: 1001,
      errorMsg: 'request body is too large: at most 1 MB is accepted',
    });
  });

  it('limits each IP address per 5 minutes, answering 429 and the 4001 envelope', () => {
    const acl = Object.values(stateless.findResources('AWS::WAFv2::WebACL'))[0];
    const rule = acl?.Properties.Rules[1];
    expect(rule.Statement).toEqual({
      RateBasedStatement: { Limit: 6000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 },
    });
    expect(rule.Action.Block.CustomResponse).toEqual({ ResponseCode: 429, CustomResponseBodyKey: 'rate-limited' });
    expect(JSON.parse(acl?.Properties.CustomResponseBodies['rate-limited'].Content)).toMatchObject({
      success: false,
      errorCode: 4001,
    });
  });

  it('runs the AWS managed common rules, counting (not blocking) their 8 KB body rule', () => {
    const acl = Object.values(stateless.findResources('AWS::WAFv2::WebACL'))[0];
    const rule = acl?.Properties.Rules[2];
    expect(rule.Statement.ManagedRuleGroupStatement).toEqual({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesCommonRuleSet',
      RuleActionOverrides: [{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }],
    });
    expect(rule.OverrideAction).toEqual({ None: {} });
  });

  it('reserves (and so caps) 50 concurrent executions for each of custom SQL and aggregate, none for the others', () => {
    const functions = Object.values(stateless.findResources('AWS::Lambda::Function'));
    const sql = (fn: (typeof functions)[number]) =>
      /\((execute-sql|aggregate)\)/.test(String(fn.Properties.Description));
    expect(functions.filter(sql).map((fn) => fn.Properties.ReservedConcurrentExecutions)).toEqual([50, 50]);
    const others = functions.filter((fn) => !sql(fn));
    // The nine other operation functions, the catalog deployment's two, the change log's three (stream, delivery,
    // fold), the index builds' one, and custom SQL's mirror, query-user function and its provider.
    expect(others.length).toBe(18);
    for (const fn of others) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('allows no cross-origin request unless an origin is configured', () => {
    // Nine signed POSTs, their nine /client/ twins, GET loginUserInfo and GET bff endpoint: no OPTIONS preflight.
    stateless.resourceCountIs('AWS::ApiGateway::Method', 20);
    for (const fn of Object.values(stateless.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.Environment?.Variables?.CORS_ALLOW_ORIGIN).toBeUndefined();
    }
  });
});

describe('customer-managed key', () => {
  const keyRef = () => ({
    'Fn::GetAtt': [logicalIdOf(withKey.statefulTemplate, 'AWS::KMS::Key', '/ServiceKey/'), 'Arn'],
  });

  it('is a retained key with yearly rotation, and is not created unless asked', () => {
    withKey.statefulTemplate.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ EnableKeyRotation: true }),
    });
    withKey.statefulTemplate.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/data-access-service-live' });
    stateful.resourceCountIs('AWS::KMS::Key', 0);
  });

  it('lets CloudWatch Logs use it for this account’s log groups and CloudWatch alarms publish with it', () => {
    const key = Object.values(withKey.statefulTemplate.findResources('AWS::KMS::Key'))[0];
    // biome-ignore lint/suspicious/noExplicitAny: template JSON is untyped; the assertions read it
    const statements = key?.Properties.KeyPolicy.Statement as Array<Record<string, any>>;
    const logs = statements.find((s) => s.Sid === 'CloudWatchLogsEncryptsThisAccountsLogGroups');
    expect(logs?.Principal).toEqual({
      Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
    });
    expect([...(logs?.Action as string[])].sort()).toEqual([
      'kms:Decrypt*',
      'kms:Describe*',
      'kms:Encrypt*',
      'kms:GenerateDataKey*',
      'kms:ReEncrypt*',
    ]);
    expect(JSON.stringify(logs?.Condition)).toContain('kms:EncryptionContext:aws:logs:arn');
    const alarms = statements.find((s) => s.Sid === 'CloudWatchAlarmsPublishToTheEncryptedTopic');
    expect(alarms?.Principal).toEqual({ Service: 'cloudwatch.amazonaws.com' });
    expect(alarms?.Action).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
  });

  it('encrypts every table and every secret', () => {
    for (const table of Object.values(withKey.statefulTemplate.findResources('AWS::DynamoDB::Table'))) {
      expect(table.Properties.SSESpecification).toEqual({
        SSEEnabled: true,
        SSEType: 'KMS',
        KMSMasterKeyId: keyRef(),
      });
    }
    const secrets = Object.values(withKey.statefulTemplate.findResources('AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(5);
    for (const secret of secrets) expect(secret.Properties.KmsKeyId).toEqual(keyRef());
  });

  it('encrypts every log group and the alarm topic, and lets the functions decrypt secrets through Secrets Manager only', () => {
    const text = JSON.stringify(withKey.statelessTemplate.toJSON());
    const imported = /"Fn::ImportValue":"(DataAccessService-live-Stateful:[^"]+)"/.exec(text)?.[1];
    expect(imported).toBeDefined();
    const keyImport = { 'Fn::ImportValue': imported };
    const groups = Object.values(withKey.statelessTemplate.findResources('AWS::Logs::LogGroup'));
    expect(groups).toHaveLength(22);
    for (const group of groups) expect(group.Properties.KmsKeyId).toEqual(keyImport);
    withKey.statelessTemplate.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: keyImport });
    withKey.statelessTemplate.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: 'kms:Decrypt',
            Resource: keyImport,
            Condition: {
              StringEquals: {
                'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
              },
            },
          },
        ]),
      },
    });
  });
});
