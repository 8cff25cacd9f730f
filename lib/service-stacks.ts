/**
 * Assembles one stage of the service (stateful + stateless stacks) from settings and a validated configuration.
 * bin/app.ts calls it with CDK context; the infra tests call it with a test configuration.
 */
import { type App, type Environment, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { CatalogConfig } from '../shared/catalog/schema';
import type { OperationName } from '../shared/contract/routes';
import { SANDBOX_WASM_FILE, SANDBOX_WORKER_ENTRY, SANDBOX_WORKER_FILE } from '../shared/sandbox/bundle-assets';
import { sqlBundleAssetSources } from '../shared/sql/bundle-assets';
import { SQL_DIALECT_ENTRY, SQL_DIALECT_FILE } from '../shared/sql-dialect/dialect-loader';
import type { DeploymentSettings } from './deployment-settings';
import type { BundleAsset } from './operation-function';
import { StatefulStack } from './stateful-stack';
import { StatelessStack, type StatelessStackProps } from './stateless-stack';

export interface ServiceStacks {
  stateful: StatefulStack;
  stateless: StatelessStack;
}

export interface ServiceStacksOptions {
  settings: DeploymentSettings;
  config: CatalogConfig;
  projectRoot: string;
  env?: Environment;
  entryFor?: StatelessStackProps['entryFor'];
}

/**
 * The SQL engine's worker and sql.js's loader and WebAssembly, which the engine loads from next to its bundle, and
 * custom SQL's dialect, bundled on its own: the code that runs custom SQL loads it at its first query, and no
 * other bundle carries it.
 */
export function sqlEngineAssets(): BundleAsset[] {
  return [
    ...sqlBundleAssetSources().map(({ fileName, sourcePath }) => ({ from: sourcePath, to: fileName })),
    { from: SQL_DIALECT_ENTRY, to: SQL_DIALECT_FILE, bundle: true },
  ];
}

/**
 * The hook sandbox's worker (bundled from its entry with the engine's glue) and its WebAssembly, beside the bundle
 * of each operation a configured hook runs in (docs/hooks.md); other operations get neither.
 */
export function sandboxAssets(config: CatalogConfig): Partial<Record<OperationName, BundleAsset[]>> {
  const assets: Partial<Record<OperationName, BundleAsset[]>> = {};
  const wasm = require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
  const sandbox: BundleAsset[] = [
    { from: SANDBOX_WORKER_ENTRY, to: SANDBOX_WORKER_FILE, bundle: true },
    { from: wasm, to: SANDBOX_WASM_FILE },
  ];
  // A hook's context.client.sql.execute runs custom SQL in that function, so the SQL engine goes along.
  for (const hook of config.hooks ?? []) {
    assets[hook.operation] = [...sandbox, ...sqlEngineAssets()];
  }
  return assets;
}

export function createServiceStacks(app: App, options: ServiceStacksOptions): ServiceStacks {
  const { settings, config, projectRoot } = options;
  const base = `DataAccessService-${settings.stage}`;
  const env = options.env ? { env: options.env } : {};
  const stateful = new StatefulStack(app, `${base}-Stateful`, {
    ...env,
    description: `Data access service (${settings.stage}): tables and secrets`,
    stage: settings.stage,
    production: settings.production,
    customerManagedKey: settings.customerManagedKey,
    terminationProtection: settings.production,
    config,
    ...(settings.sqlEngine === 'aurora'
      ? { sql: { minCapacity: settings.sqlMinCapacity, maxCapacity: settings.sqlMaxCapacity } }
      : {}),
  });
  const stateless = new StatelessStack(app, `${base}-Stateless`, {
    ...env,
    description: `Data access service (${settings.stage}): functions, API, dashboard and alarms`,
    terminationProtection: settings.production,
    settings,
    resources: stateful.resources,
    config,
    projectRoot,
    extraAssets: { ...sandboxAssets(config), 'execute-sql': sqlEngineAssets(), aggregate: sqlEngineAssets() },
    ...(options.entryFor ? { entryFor: options.entryFor } : {}),
  });
  // No CloudFormation export links the stacks (the stateless one names the tables and secrets), so the order
  // of deployment is declared: tables and secrets exist before any function uses them.
  stateless.addStackDependency(stateful, 'functions use the tables and secrets');
  for (const stack of [stateful, stateless]) {
    Tags.of(stack).add('service', 'data-access-service');
    Tags.of(stack).add('stage', settings.stage);
  }
  // Checked on every synth, not only in tests: what deploys is what was checked.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { stateful, stateless };
}
