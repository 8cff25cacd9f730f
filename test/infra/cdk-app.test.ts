/** The CDK app's inputs: context keys (stage, configuration, options) and the configuration check at synth. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { readDeploymentSettings } from '../../lib/deployment-settings';
import { PROJECT_ROOT } from './service-fixture';

const settingsFrom = (context: Record<string, string>) => readDeploymentSettings(new App({ context }).node);

describe('deployment settings from context', () => {
  it('defaults to the dev stage and the demo configuration', () => {
    expect(settingsFrom({})).toEqual({
      stage: 'dev',
      configPath: 'config/demo.json',
      metricNamespace: 'DataAccessService/dev',
      corsAllowOrigin: '*',
      throttleRateLimit: 200,
      throttleBurstLimit: 400,
      latencyAlarmP99Ms: 3000,
    });
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
      }),
    ).toEqual({
      stage: 'prod',
      configPath: 'config/partner.json',
      wafAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/acl/abc',
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
      alarmEmail: 'oncall@example.com',
      metricNamespace: 'Partner/DataAccess',
      corsAllowOrigin: 'https://app.example.com',
      throttleRateLimit: 50,
      throttleBurstLimit: 80,
      latencyAlarmP99Ms: 1200,
    });
  });

  it('refuses wrong values, listing every problem at once', () => {
    expect(() =>
      settingsFrom({
        stage: 'Prod_1',
        wafAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/acl/abc',
        throttleRateLimit: 'fast',
        corsAllowOrigin: 'https://a.example.com,https://b.example.com',
      }),
    ).toThrow(
      [
        'invalid CDK context:',
        "  stage: 'Prod_1' must be 1 to 20 lower-case letters, digits or '-', starting with a letter",
        "  wafAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/acl/abc' is not the ARN of a REGIONAL WAFv2 web ACL",
        "  corsAllowOrigin: 'https://a.example.com,https://b.example.com' must be '*' or one origin such as https://app.example.com",
        "  throttleRateLimit: must be a positive integer, not 'fast'",
      ].join('\n'),
    );
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
