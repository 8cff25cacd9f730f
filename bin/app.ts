/**
 * The CDK app: one stage of the service. Stage and configuration file come from CDK context
 * (`-c stage=prod -c config=path/to/config.json`; defaults `dev` and `config/demo.json`). The configuration is
 * validated here, so a wrong file fails synth with every problem listed instead of failing in AWS.
 */
import { resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { DeploymentSettingsError, readDeploymentSettings } from '../lib/deployment-settings';
import { createServiceStacks } from '../lib/service-stacks';
import { MissingHandlerError } from '../lib/stateless-stack';
import { ConfigError, checkDeploymentConfig, loadConfigFile } from '../shared/catalog-store/load-config';

const projectRoot = resolve(__dirname, '..');
const app = new App();

try {
  const settings = readDeploymentSettings(app.node);
  const configFile = resolve(projectRoot, settings.configPath);
  const config = checkDeploymentConfig(loadConfigFile(configFile), configFile);
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  createServiceStacks(app, {
    settings,
    config,
    projectRoot,
    // Without credentials (offline synth) the stacks stay environment-agnostic.
    ...(account && region ? { env: { account, region } } : {}),
  });
} catch (error) {
  if (
    error instanceof ConfigError ||
    error instanceof DeploymentSettingsError ||
    error instanceof MissingHandlerError
  ) {
    // The message already lists every problem by path; a stack trace would only bury it.
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
