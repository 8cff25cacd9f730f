/**
 * Builds one stage of the service for the infra tests, from a configuration written out here, with the feature
 * flags of cdk.json (so tests synthesize what `cdk synth` synthesizes). Each test file builds once, in beforeAll.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readDeploymentSettings } from '../../lib/deployment-settings';
import { createServiceStacks, type ServiceStacks } from '../../lib/service-stacks';
import type { CatalogConfig } from '../../shared/catalog/schema';
import { parseConfig } from '../../shared/catalog-store/load-config';

export const PROJECT_ROOT = join(__dirname, '..', '..');

/** Local keys are present on purpose: the tests prove they never reach a template. */
export const LOCAL_ACCESS_KEY = 'ak-local-only-0123456789';
export const LOCAL_SIGNING_SECRET = 'sk-local-only-abcdefghij';
export const LOCAL_DEFAULT_SECRET = 'sk-default-local-zyxwvut';

export const TEST_CONFIG: CatalogConfig = parseConfig({
  defaultSigningSecret: LOCAL_DEFAULT_SECRET,
  applications: [
    {
      appCode: 'app-demo',
      name: 'Demo CRM',
      accessKey: LOCAL_ACCESS_KEY,
      signingSecret: LOCAL_SIGNING_SECRET,
      grants: [{ datasetCode: 'orders', operations: ['read', 'create', 'update'] }],
    },
    { appCode: 'app-reports', grants: [{ datasetCode: 'orders', operations: ['read'] }] },
  ],
  datasets: [
    {
      appCode: 'app-demo',
      datasetCode: 'orders',
      fields: [
        { name: 'customer', type: 'string', indexed: true },
        { name: 'amount', type: 'number' },
      ],
    },
  ],
  queries: [
    {
      appCode: 'app-reports',
      sqlCode: 'revenue',
      id: 1,
      sql: 'SELECT SUM(amount) AS total FROM orders',
      datasets: ['orders'],
    },
  ],
  // One hooked operation, so that the bundles show where the hook sandbox's files go (docs/hooks.md).
  functions: [
    { appCode: 'app-demo', name: 'pass', source: 'export default async function pass(order) { return order; }' },
  ],
  hooks: [{ datasetCode: 'orders', operation: 'get-one', node: 'after', function: 'pass' }],
});

export interface BuiltService extends ServiceStacks {
  app: App;
  stateful: ServiceStacks['stateful'];
  stateless: ServiceStacks['stateless'];
  statefulTemplate: Template;
  statelessTemplate: Template;
}

export interface BuildOptions {
  /** Extra CDK context (`-c key=value`), e.g. `{ stage: 'prod', wafAclArn: '...' }`. */
  context?: Record<string, string>;
  /** Run esbuild for the functions; off by default because most tests only read the templates. */
  bundle?: boolean;
  /** Where the cloud assembly goes (default: a temporary directory). */
  outdir?: string;
  /** The deployed configuration (default: TEST_CONFIG). */
  config?: CatalogConfig;
}

function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context;
}

export function buildService(options: BuildOptions = {}): BuiltService {
  const app = new App({
    ...(options.outdir ? { outdir: options.outdir } : {}),
    context: {
      ...cdkJsonContext(),
      // The CLI turns this on; the tests find resources by construct path.
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:enable-asset-metadata': true,
      ...options.context,
      // An empty list skips bundling (assets become placeholders); the entry files must still exist.
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const settings = readDeploymentSettings(app.node);
  const stacks = createServiceStacks(app, {
    settings,
    config: options.config ?? TEST_CONFIG,
    projectRoot: PROJECT_ROOT,
  });
  return {
    app,
    ...stacks,
    statefulTemplate: Template.fromStack(stacks.stateful),
    statelessTemplate: Template.fromStack(stacks.stateless),
  };
}

/** `arn:${Partition}:<service>:${Region}:${AccountId}:<resource>` as the template writes it. */
export function arnOf(service: string, resource: string): unknown {
  return {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        `:${service}:`,
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        `:${resource}`,
      ],
    ],
  };
}

/** The logical id of the only resource of a type whose path contains `pathPart`. */
export function logicalIdOf(template: Template, type: string, pathPart: string): string {
  const ids = Object.entries(template.findResources(type))
    .filter(([, resource]) => String(resource.Metadata?.['aws:cdk:path'] ?? '').includes(pathPart))
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`expected one ${type} under '${pathPart}', found ${ids.length}`);
  return ids[0] as string;
}
