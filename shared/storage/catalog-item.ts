/**
 * The catalog table's one item (catalog-store/catalog-store.ts says what goes in it): the deployed
 * configuration, gzipped JSON, and beside it each backend function's version in an attribute of its own, so a
 * reader that predates the versions still reads the item. Read consistently: a function serves exactly what the
 * last deploy wrote.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { catalogKey } from './item-keys';

/** The item as stored, before its configuration is validated. */
export interface StoredCatalog {
  /** The configuration's JSON, as written. */
  config: unknown;
  /** The functions' versions as written (absent before any deploy wrote them). */
  functionVersions: unknown;
  /** When the item was written (epoch ms); absent on an item older than this attribute. */
  writtenAt?: number;
}

/** The function versions the current item holds (that attribute alone); `undefined` when there is no item. */
export async function readStoredFunctionVersions(client: DynamoDBDocumentClient, table: string): Promise<unknown> {
  const previous = await client.send(
    new GetCommand({
      TableName: table,
      Key: catalogKey(),
      ConsistentRead: true,
      ProjectionExpression: 'functionVersions',
    }),
  );
  return previous.Item?.functionVersions;
}

/** Replace the item: the configuration (without secrets), the functions' versions and when it was written. */
export async function putCatalogItem(
  client: DynamoDBDocumentClient,
  table: string,
  config: unknown,
  functionVersions: unknown,
  writtenAt: number,
): Promise<void> {
  const body = gzipSync(JSON.stringify(config));
  await client.send(
    new PutCommand({
      TableName: table,
      Item: { ...catalogKey(), config: body, functionVersions, writtenAt: new Date(writtenAt).toISOString() },
    }),
  );
}

/** The current item; `undefined` when none has been deployed. */
export async function readCatalogItem(
  client: DynamoDBDocumentClient,
  table: string,
): Promise<StoredCatalog | undefined> {
  const result = await client.send(new GetCommand({ TableName: table, Key: catalogKey(), ConsistentRead: true }));
  const body = result.Item?.config as Uint8Array | undefined;
  if (!body) return undefined;
  const writtenAt = Date.parse(String(result.Item?.writtenAt));
  return {
    config: JSON.parse(gunzipSync(body).toString('utf8')),
    functionVersions: result.Item?.functionVersions,
    ...(Number.isNaN(writtenAt) ? {} : { writtenAt }),
  };
}
