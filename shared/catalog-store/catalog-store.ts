/**
 * The deployed configuration lives in the catalog table: written on deploy (by a custom resource in AWS, by the
 * local bootstrap on start), read by the functions with an in-container cache. Secrets are never stored here.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CatalogConfig } from '../catalog/schema';
import { catalogKey } from '../records/item-keys';
import { parseConfig } from './load-config';

/** The configuration without key material (access keys, secrets). */
export function withoutSecrets(config: CatalogConfig): CatalogConfig {
  const { defaultSigningSecret: _default, ...rest } = config;
  return {
    ...rest,
    applications: config.applications.map(({ accessKey: _key, signingSecret: _secret, ...app }) => app),
  };
}

/** Store a validated configuration as the current catalog (gzip: a large catalog stays within one item). */
export async function writeCatalog(
  client: DynamoDBDocumentClient,
  table: string,
  config: CatalogConfig,
): Promise<void> {
  const body = gzipSync(JSON.stringify(withoutSecrets(config)));
  await client.send(
    new PutCommand({ TableName: table, Item: { ...catalogKey(), config: body, writtenAt: new Date().toISOString() } }),
  );
}

/** Read the current catalog; `undefined` when none has been deployed. */
export async function readCatalog(client: DynamoDBDocumentClient, table: string): Promise<CatalogConfig | undefined> {
  const result = await client.send(new GetCommand({ TableName: table, Key: catalogKey(), ConsistentRead: true }));
  const body = result.Item?.config as Uint8Array | undefined;
  if (!body) return undefined;
  return parseConfig(JSON.parse(gunzipSync(body).toString('utf8')), `table ${table}`);
}
