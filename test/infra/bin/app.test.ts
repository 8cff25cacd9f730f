/** The CDK app's inputs: context keys (stage, configuration, options) and the configuration check at synth. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { readDeploymentSettings } from '../../../lib/deployment-settings';
import { PROJECT_ROOT } from '../../support/service-fixture';

const settingsFrom = (context: Record<string, string>) => readDeploymentSettings(new App({ context }).node);

describe('deployment settings from context', () => {
  it('defaults to the dev stage and the demo configuration', () => {
    expect(settingsFrom({})).toEqual({
      stage: 'dev',
      configPath: 'config/demo.json',
      production: false,
      logRetentionDays: 14,
      waf: false,
      wafRateLimitPer5Minutes: 6000,
      metricNamespace: 'DataAccessService/dev',
      throttleRateLimit: 200,
      throttleBurstLimit: 400,
      sqlThrottleRateLimit: 20,
      sqlThrottleBurstLimit: 40,
      customerManagedKey: false,
      latencyAlarmP99Ms: 3000,
      authFailureAlarmThreshold: 100,
      indexBuildWritesPerSecond: 250,
      indexBuildConcurrency: 8,
      indexBuildMaxSegments: 64,
      webhookConcurrency: 5,
      sqlEngine: 'embedded',
      sqlMinCapacity: 0,
      sqlMaxCapacity: 16,
    });
  });

  it('selects production settings with production=true, whatever the stage is called', () => {
    expect(settingsFrom({ stage: 'live-eu', production: 'true', alarmEmail: 'oncall@example.com' })).toMatchObject({
      stage: 'live-eu',
      production: true,
      logRetentionDays: 180,
      waf: true,
      sqlReservedConcurrency: 50,
      alarmEmail: 'oncall@example.com',
      sqlEngine: 'aurora',
      sqlMinCapacity: 0.5,
    });
    // A stage named prod is not production by its name.
    expect(settingsFrom({ stage: 'prod' })).toMatchObject({ production: false, logRetentionDays: 14, waf: false });
  });

  it('refuses a production stage without an alarm target, naming the settings', () => {
    expect(() => settingsFrom({ stage: 'production', production: 'true' })).toThrow(
      [
        'invalid CDK context:',
        '  alarmEmail or alarmTopicArn: a production stage needs an alarm target, so that every alarm reaches ' +
          'someone (-c alarmEmail=oncall@example.com, or -c alarmTopicArn=<an existing SNS topic ARN>)',
      ].join('\n'),
    );
  });

  it('lets production use a web ACL of its own instead of the service one, or none, and no reserved concurrency', () => {
    const arn = 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/acl/abc';
    const base = { production: 'true', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' };
    expect(settingsFrom({ ...base, wafAclArn: arn })).toMatchObject({ waf: false, wafAclArn: arn });
    expect(settingsFrom({ ...base, waf: 'false', sqlReservedConcurrency: 'none' })).toMatchObject({ waf: false });
    expect(settingsFrom({ ...base, sqlReservedConcurrency: 'none' }).sqlReservedConcurrency).toBeUndefined();
  });

  it('reads every key', () => {
    expect(
      settingsFrom({
        stage: 'prod',
        config: 'config/partner.json',
        wafAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/acl/abc',
        alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
        alarmEmail: 'oncall@example.com',
        metricNamespace: 'Partner/DataAccess',
        corsAllowOrigin: 'https://app.example.com',
        throttleRateLimit: '50',
        throttleBurstLimit: '80',
        latencyAlarmP99Ms: '1200',
        production: 'true',
        logRetentionDays: '365',
        waf: 'false',
        wafRateLimitPer5Minutes: '2000',
        sqlThrottleRateLimit: '5',
        sqlThrottleBurstLimit: '10',
        sqlReservedConcurrency: '30',
        provisionedConcurrency: 'get-one=2, create=1',
        customerManagedKey: 'true',
        authFailureAlarmThreshold: '40',
        indexBuildWritesPerSecond: '500',
        indexBuildConcurrency: '4',
        indexBuildMaxSegments: '16',
        webhookConcurrency: '20',
        sqlEngine: 'embedded',
        sqlMinCapacity: '2',
        sqlMaxCapacity: '64',
      }),
    ).toEqual({
      stage: 'prod',
      configPath: 'config/partner.json',
      production: true,
      logRetentionDays: 365,
      waf: false,
      wafRateLimitPer5Minutes: 2000,
      sqlThrottleRateLimit: 5,
      sqlThrottleBurstLimit: 10,
      sqlReservedConcurrency: 30,
      provisionedConcurrency: { 'get-one': 2, create: 1 },
      customerManagedKey: true,
      authFailureAlarmThreshold: 40,
      wafAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/acl/abc',
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
      alarmEmail: 'oncall@example.com',
      metricNamespace: 'Partner/DataAccess',
      corsAllowOrigin: 'https://app.example.com',
      throttleRateLimit: 50,
      throttleBurstLimit: 80,
      latencyAlarmP99Ms: 1200,
      indexBuildWritesPerSecond: 500,
      indexBuildConcurrency: 4,
      indexBuildMaxSegments: 16,
      webhookConcurrency: 20,
      sqlEngine: 'embedded',
      sqlMinCapacity: 2,
      sqlMaxCapacity: 64,
    });
  });

  it('runs custom SQL on Aurora in production and embedded elsewhere unless sqlEngine says otherwise', () => {
    const production = { production: 'true', alarmEmail: 'oncall@example.com' };
    expect(settingsFrom({ ...production, sqlEngine: 'embedded' })).toMatchObject({ sqlEngine: 'embedded' });
    expect(settingsFrom({ sqlEngine: 'aurora' })).toMatchObject({ sqlEngine: 'aurora', sqlMinCapacity: 0 });
    expect(settingsFrom({ ...production, sqlMinCapacity: '0' })).toMatchObject({
      sqlEngine: 'aurora',
      sqlMinCapacity: 0,
    });
    expect(() => settingsFrom({ sqlEngine: 'mysql', sqlMinCapacity: '0.3', sqlMaxCapacity: '0.5' })).toThrow(
      [
        'invalid CDK context:',
        "  sqlEngine: must be aurora or embedded, not 'mysql'",
        "  sqlMinCapacity: must be a number of ACUs from 0 to 256 in steps of 0.5, not '0.3'",
        "  sqlMaxCapacity: must be a number of ACUs from 1 to 256 in steps of 0.5, not '0.5'",
      ].join('\n'),
    );
    expect(() => settingsFrom({ sqlMinCapacity: '8', sqlMaxCapacity: '4' })).toThrow(
      'sqlMinCapacity: 8 ACUs is more than sqlMaxCapacity (4)',
    );
  });

  it('refuses wrong values, listing every problem at once', () => {
    expect(() =>
      settingsFrom({
        stage: 'Prod_1',
        wafAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/acl/abc',
        throttleRateLimit: 'fast',
        corsAllowOrigin: 'https://a.example.com,https://b.example.com',
        production: 'yes',
        logRetentionDays: '100',
        sqlReservedConcurrency: '-1',
        provisionedConcurrency: 'get-one=0,get-lists=1,create=2,create=3,update',
      }),
    ).toThrow(
      [
        'invalid CDK context:',
        "  stage: 'Prod_1' must be 1 to 20 lower-case letters, digits or '-', starting with a letter",
        "  wafAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/acl/abc' is not the ARN of a REGIONAL WAFv2 web ACL",
        "  corsAllowOrigin: 'https://a.example.com,https://b.example.com' must be '*' or one origin such as https://app.example.com",
        "  production: must be true or false, not 'yes'",
        '  logRetentionDays: CloudWatch Logs keeps logs 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, ' +
          '731, 1096, 1827, 2192, 2557, 2922, 3288, 3653 days, not 100',
        "  sqlReservedConcurrency: must be a positive integer, or none, not '-1'",
        "  provisionedConcurrency: get-one needs a positive integer, as in get-one=2, not '0'",
        "  provisionedConcurrency: 'get-lists' is not an operation (get-list, get-one, create, batch-create, update, " +
          'execute-sql, aggregate, changes, indexes, login-user-info, bff-endpoint)',
        '  provisionedConcurrency: create is given twice',
        "  provisionedConcurrency: update needs a positive integer, as in update=2, not ''",
        "  throttleRateLimit: must be a positive integer, not 'fast'",
      ].join('\n'),
    );
  });

  it('refuses a webhook concurrency Lambda does not take for an event source mapping', () => {
    expect(() => settingsFrom({ webhookConcurrency: '1' })).toThrow(
      "webhookConcurrency: an event source mapping's maximum concurrency is 2 to 1000, not 1",
    );
    expect(() => settingsFrom({ webhookConcurrency: '1001' })).toThrow('not 1001');
    expect(settingsFrom({ webhookConcurrency: '2' }).webhookConcurrency).toBe(2);
  });

  it('reads provisioned concurrency from an object in cdk.json too, and none as none', () => {
    const fromObject = readDeploymentSettings(
      new App({ context: { provisionedConcurrency: { 'get-list': 3, 'batch-create': 1 } } }).node,
    );
    expect(fromObject.provisionedConcurrency).toEqual({ 'get-list': 3, 'batch-create': 1 });
    expect(settingsFrom({ provisionedConcurrency: 'none' })).not.toHaveProperty('provisionedConcurrency');
  });

  it('refuses more provisioned than reserved concurrency for custom SQL', () => {
    expect(() => settingsFrom({ sqlReservedConcurrency: '10', provisionedConcurrency: 'execute-sql=12' })).toThrow(
      [
        'invalid CDK context:',
        '  provisionedConcurrency: execute-sql=12 is more than its reserved concurrency (sqlReservedConcurrency 10); ' +
          'Lambda provisions at most what a function reserves',
      ].join('\n'),
    );
    expect(
      settingsFrom({ sqlReservedConcurrency: '10', provisionedConcurrency: 'execute-sql=10' }).provisionedConcurrency,
    ).toEqual({ 'execute-sql': 10 });
  });
});

describe('bin/app.ts', () => {
  it('fails synth on a wrong configuration file, listing every problem by path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cdk-app-'));
    const file = join(dir, 'wrong.json');
    writeFileSync(
      file,
      JSON.stringify({
        applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'missing', operations: ['read'] }] }],
        datasets: [{ appCode: 'app-a', datasetCode: 'd', fields: [{ name: 'status', type: 'enum' }] }],
      }),
    );
    const result = spawnSync(process.execPath, [join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bin/app.ts'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ config: file }), CDK_OUTDIR: join(dir, 'out') },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${file}: 2 problem(s)`);
    expect(result.stderr).toContain('datasets[0].fields[0].options: an enum field needs options');
    expect(result.stderr).toContain("applications[0].grants[0].datasetCode: unknown dataset 'missing'");
  });
});

describe('bin/app.ts in production', () => {
  it('fails synth without an alarm target, with a message that names the setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cdk-app-'));
    const result = spawnSync(process.execPath, [join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bin/app.ts'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ stage: 'live', production: 'true' }),
        CDK_OUTDIR: join(dir, 'out'),
      },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('alarmEmail or alarmTopicArn: a production stage needs an alarm target');
  });
});
