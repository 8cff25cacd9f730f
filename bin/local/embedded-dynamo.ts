/**
 * The embedded DynamoDB-compatible store of local runs and tests: dynalite, in this process, with the tables
 * created from the shared definitions (the same ones the CDK stack deploys).
 */
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { endpointClientConfig } from '../../shared/aws/dynamodb';
import { TABLES, type TableDefinition } from '../../shared/storage/table-definitions';

export interface EmbeddedDynamo {
  endpoint: string;
  client: DynamoDBClient;
  close(): Promise<void>;
}

/** Start dynalite on a loopback port; `dataDir` persists the store, without it the store lives in memory. */
export async function startEmbeddedDynamo(dataDir?: string): Promise<EmbeddedDynamo> {
  const server = dynalite({ path: dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    endpoint,
    client,
    close: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Where a DynamoDB endpoint other than the embedded store is (`npm start -- --dynamodb-endpoint`). */
export interface ExternalDynamoOptions {
  endpoint: string;
  /** The region to sign requests for (AWS_REGION; `local` without it). */
  region: string;
  /** Whether AWS credentials are configured; placeholder ones are used otherwise (emulators accept them). */
  credentialsConfigured: boolean;
}

/** A client of another DynamoDB endpoint (moto, DynamoDB Local, AWS): nothing to start, nothing to stop but the client. */
export function connectDynamo(options: ExternalDynamoOptions): EmbeddedDynamo {
  const client = new DynamoDBClient(
    endpointClientConfig(options.endpoint, options.region, options.credentialsConfigured),
  );
  return {
    endpoint: options.endpoint,
    client,
    close: async () => client.destroy(),
  };
}

export function toCreateTableInput(definition: TableDefinition, tableName: string): CreateTableCommandInput {
  const attributes = new Map<string, string>();
  const keyAttributes = [
    definition.partitionKey,
    definition.sortKey,
    ...definition.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  for (const attribute of keyAttributes) if (attribute) attributes.set(attribute.name, attribute.type);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType: AttributeType as 'S' | 'N' | 'B',
    })),
    KeySchema: [
      { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
      ...(definition.sortKey ? [{ AttributeName: definition.sortKey.name, KeyType: 'RANGE' as const }] : []),
    ],
    GlobalSecondaryIndexes: definition.globalSecondaryIndexes.length
      ? definition.globalSecondaryIndexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: {
            ProjectionType: index.projection,
            ...(index.nonKeyAttributes ? { NonKeyAttributes: [...index.nonKeyAttributes] } : {}),
          },
        }))
      : undefined,
  };
}

/** Local table names: `<prefix>-<logical name in lower case>`. */
export function localTableNames(prefix: string): Record<string, string> {
  return Object.fromEntries(TABLES.map((t) => [t.logicalName, `${prefix}-${t.logicalName.toLowerCase()}`]));
}

/** Delete the service's tables of these names (a test's own tables on a shared endpoint). */
export async function deleteTables(client: DynamoDBClient, names: Record<string, string>): Promise<void> {
  for (const definition of TABLES) {
    const name = names[definition.logicalName] as string;
    await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
  }
}

/** Create whichever of the service's tables do not exist yet. */
export async function ensureTables(client: DynamoDBClient, names: Record<string, string>): Promise<void> {
  const existing = new Set((await client.send(new ListTablesCommand({}))).TableNames ?? []);
  for (const definition of TABLES) {
    const name = names[definition.logicalName] as string;
    if (!existing.has(name)) await client.send(new CreateTableCommand(toCreateTableInput(definition, name)));
  }
}
