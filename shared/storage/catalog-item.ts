/**
 * The catalog table's one item (catalog-store/catalog-store.ts says what goes in it): the applied configuration,
 * gzipped JSON, and beside it in attributes of their own each backend function's version, the datasets' index
 * registry, the definitions of removed fields and datasets (gzipped too), the index jobs' runner lease, and a
 * revision that every write moves on. Read consistently: a function serves exactly what the last write wrote.
 *
 * Writers never overwrite each other's work: a configuration change (a deploy, `npm start`) and an index job's
 * step both read the item, decide, and write on the condition that the revision is still the one they read.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { catalogKey } from './item-keys';

/** The item as stored, before what it holds is validated. */
export interface StoredCatalog {
  /** The configuration's JSON, as written. */
  config: unknown;
  /** The functions' versions as written (absent before any deploy wrote them). */
  functionVersions: unknown;
  /** The index registry as written (absent before indexes were versioned). */
  indexes: unknown;
  /** Definitions of removed fields and datasets, as written. */
  retired: unknown;
  /** Who runs the index jobs now, as written. */
  runner: unknown;
  /** 0 for an item written before revisions. */
  revision: number;
  /** When the item was written (epoch ms); absent on an item older than this attribute. */
  writtenAt?: number;
}

/** A stored revision to write over: `undefined` when there is no item yet. */
export type ExpectedRevision = number | undefined;

/** The write lost a race: another writer moved the revision on since it was read. */
export class CatalogRevisionConflict extends Error {
  constructor() {
    super('the catalog item changed since it was read');
    this.name = 'CatalogRevisionConflict';
  }
}

const gzipJson = (value: unknown) => gzipSync(JSON.stringify(value));
const gunzipJson = (body: unknown) =>
  body instanceof Uint8Array ? JSON.parse(gunzipSync(body).toString('utf8')) : undefined;

function revisionCondition(expected: ExpectedRevision): {
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  if (expected === undefined) {
    return { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } };
  }
  if (expected === 0) {
    return {
      ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(#revision)',
      ExpressionAttributeNames: { '#pk': 'pk', '#revision': 'revision' },
    };
  }
  return {
    ConditionExpression: '#revision = :expected',
    ExpressionAttributeNames: { '#revision': 'revision' },
    ExpressionAttributeValues: { ':expected': expected },
  };
}

async function conditional<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') throw new CatalogRevisionConflict();
    throw error;
  }
}

export interface CatalogItemContent {
  /** The configuration without secrets. */
  config: unknown;
  functionVersions: unknown;
  indexes: unknown;
  retired: unknown;
  runner?: unknown;
}

/**
 * Replace the item, on the condition that its revision is still `expected`; the new revision is one more.
 * Throws `CatalogRevisionConflict` when it is not.
 */
export async function putCatalogItem(
  client: DynamoDBDocumentClient,
  table: string,
  content: CatalogItemContent,
  writtenAt: number,
  expected: ExpectedRevision,
): Promise<number> {
  const revision = (expected ?? 0) + 1;
  await conditional(() =>
    client.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...catalogKey(),
          config: gzipJson(content.config),
          functionVersions: content.functionVersions,
          indexes: content.indexes,
          retired: gzipJson(content.retired),
          ...(content.runner === undefined ? {} : { runner: content.runner }),
          writtenAt: new Date(writtenAt).toISOString(),
          revision,
        },
        ...revisionCondition(expected),
      }),
    ),
  );
  return revision;
}

/**
 * Replace the index registry and the runner lease alone (an index job's step), on the condition that the revision
 * is still `expected`; returns the new revision. Throws `CatalogRevisionConflict` when it is not.
 */
export async function updateCatalogIndexes(
  client: DynamoDBDocumentClient,
  table: string,
  content: { indexes: unknown; runner: unknown },
  expected: number,
): Promise<number> {
  const condition = revisionCondition(expected);
  const revision = expected + 1;
  await conditional(() =>
    client.send(
      new UpdateCommand({
        TableName: table,
        Key: catalogKey(),
        UpdateExpression: 'SET #indexes = :indexes, #runner = :runner, #revision = :revision',
        ...condition,
        ExpressionAttributeNames: {
          ...condition.ExpressionAttributeNames,
          '#indexes': 'indexes',
          '#runner': 'runner',
          '#revision': 'revision',
        },
        ExpressionAttributeValues: {
          ...condition.ExpressionAttributeValues,
          ':indexes': content.indexes,
          ':runner': content.runner ?? null,
          ':revision': revision,
        },
      }),
    ),
  );
  return revision;
}

/** The current item; `undefined` when none has been written. */
export async function readCatalogItem(
  client: DynamoDBDocumentClient,
  table: string,
): Promise<StoredCatalog | undefined> {
  const result = await client.send(new GetCommand({ TableName: table, Key: catalogKey(), ConsistentRead: true }));
  const item = result.Item;
  if (!item?.config) return undefined;
  const writtenAt = Date.parse(String(item.writtenAt));
  return {
    config: gunzipJson(item.config),
    functionVersions: item.functionVersions,
    indexes: item.indexes,
    retired: gunzipJson(item.retired),
    runner: item.runner,
    revision: typeof item.revision === 'number' ? item.revision : 0,
    ...(Number.isNaN(writtenAt) ? {} : { writtenAt }),
  };
}
