/**
 * The deployed configuration lives in the catalog table: written on deploy (by a custom resource in AWS, by the
 * local bootstrap on start), read by the functions with an in-container cache. Secrets are never stored here.
 *
 * Beside the configuration the item keeps each backend function's version (shared/catalog/function-versions.ts):
 * a deploy reads the previous item's versions and moves on those whose source changed. The versions sit in their
 * own attribute, not in the compressed configuration, so a reader that predates them still reads the item.
 * The item itself and its reads and writes are storage's (storage/catalog-item.ts); this is what goes in and out.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeployedCatalog } from '../catalog/catalog-provider';
import { type FunctionVersions, nextFunctionVersions, parseFunctionVersions } from '../catalog/function-versions';
import type { CatalogConfig } from '../catalog/schema';
import { putCatalogItem, readCatalogItem, readStoredFunctionVersions } from '../storage/catalog-item';
import { parseConfig } from './load-config';

/** The configuration without key material (access keys, signing secrets, webhook secrets). */
export function withoutSecrets(config: CatalogConfig): CatalogConfig {
  const { defaultSigningSecret: _default, ...rest } = config;
  return {
    ...rest,
    applications: config.applications.map(({ accessKey: _key, signingSecret: _secret, ...app }) => app),
    ...(config.webhooks ? { webhooks: config.webhooks.map(({ secret: _secret, ...webhook }) => webhook) } : {}),
  };
}

/**
 * Store a validated configuration as the current catalog (gzip: a large catalog stays within one item), with
 * its functions' versions carried on from the catalog it replaces. Returns those versions. Beyond the functions'
 * sources, the new configuration is not compared with the stored one: it replaces it whole (docs/interface.md §17).
 */
export async function writeCatalog(
  client: DynamoDBDocumentClient,
  table: string,
  config: CatalogConfig,
  now: () => number = Date.now,
): Promise<FunctionVersions> {
  const previous = await readStoredFunctionVersions(client, table);
  const writtenAt = now();
  const functionVersions = nextFunctionVersions(parseFunctionVersions(previous), config.functions ?? [], writtenAt);
  await putCatalogItem(client, table, withoutSecrets(config), functionVersions, writtenAt);
  return functionVersions;
}

/** Read the current catalog and its functions' versions; `undefined` when none has been deployed. */
export async function readDeployedCatalog(
  client: DynamoDBDocumentClient,
  table: string,
): Promise<DeployedCatalog | undefined> {
  const item = await readCatalogItem(client, table);
  if (!item) return undefined;
  return {
    config: parseConfig(item.config, `table ${table}`),
    functionVersions: parseFunctionVersions(item.functionVersions),
    ...(item.writtenAt === undefined ? {} : { deployedAt: item.writtenAt }),
  };
}

/** Read the current configuration; `undefined` when none has been deployed. */
export async function readCatalog(client: DynamoDBDocumentClient, table: string): Promise<CatalogConfig | undefined> {
  return (await readDeployedCatalog(client, table))?.config;
}
