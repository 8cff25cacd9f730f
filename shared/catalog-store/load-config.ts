/**
 * Reading and validating a configuration where an operator writes one (`das config`, the CDK app at synth, the
 * local server's start, the catalog's deployment resource): read-config.ts's checks and, beyond them, each
 * registered query read as MySQL 8 and checked against the datasets, so that what custom SQL cannot answer is
 * refused before it is applied. A wrong one is refused with every problem, by path.
 */

import type { CatalogConfig } from '../catalog/schema';
import { deploymentUrlProblem } from '../changes/webhook-targets';
import { queryProblems } from '../sql-dialect/dialect';
import { type ConfigCheck, ConfigError, type ConfigProblem, parseConfigWith, readConfigFile } from './read-config';

export { ConfigError, type ConfigProblem };

/** Each query read as MySQL 8 and checked against the datasets: what custom SQL cannot answer is refused here. */
const queryChecks: ConfigCheck = (config) =>
  queryProblems(config).map(({ index, message }) => ({ path: `queries[${index}].sql`, message }));

/** Validate a parsed configuration, its queries too; throws `ConfigError` listing every problem. */
export function parseConfig(value: unknown, source = 'configuration'): CatalogConfig {
  return parseConfigWith(value, source, [queryChecks]);
}

/**
 * What a deployment refuses beyond the schema (docs/interface.md §18): a webhook URL that is not https, or that
 * names a private, loopback or link-local address (the delivery checks the resolved address again at each
 * attempt), and a webhook `secret` in the file (a deployment generates each in the secret store). Throws
 * `ConfigError` listing every problem.
 */
export function checkDeploymentConfig(config: CatalogConfig, source = 'configuration'): CatalogConfig {
  const problems: ConfigProblem[] = [];
  (config.webhooks ?? []).forEach((webhook, i) => {
    const urlProblem = deploymentUrlProblem(webhook.url);
    if (urlProblem) problems.push({ path: `webhooks[${i}].url`, message: urlProblem });
    if (webhook.secret !== undefined) {
      problems.push({
        path: `webhooks[${i}].secret`,
        message: "is for local runs only: a deployment generates each subscription's secret in the secret store",
      });
    }
  });
  if (problems.length > 0) throw new ConfigError(source, problems);
  return config;
}

/** Read, parse and validate a configuration file, its queries too. */
export function loadConfigFile(file: string): CatalogConfig {
  return readConfigFile(file, parseConfig);
}
