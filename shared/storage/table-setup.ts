/**
 * The service's tables in a store the service creates itself (the embedded store of local runs and tests, an
 * emulator, a test's own tables on a shared endpoint): made from the same definitions the CDK stack deploys
 * (`table-definitions.ts`), so local and deployed tables cannot drift.
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { TABLES, type TableDefinition } from './table-definitions';

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
    // An emulator with streams (moto, DynamoDB Local) keeps one; the embedded store ignores it and has its own twin.
    ...(definition.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: definition.stream } } : {}),
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

/**
 * Create whichever of the service's tables do not exist yet. Each table is asked for by name (DescribeTable), not
 * found in a list of tables: the embedded store answers ListTables by reading every key it holds (dynalite keeps
 * its tables' definitions and their items in one LevelDB key space and filters the keys by prefix), so a start
 * over a store of 1,000,000 records spent most of its time listing; a describe is one read whatever the store
 * holds, and on a shared endpoint it is not cut at a page of 100 names either.
 */
export async function ensureTables(client: DynamoDBClient, names: Record<string, string>): Promise<void> {
  for (const definition of TABLES) {
    const name = names[definition.logicalName] as string;
    if (!(await tableExists(client, name))) {
      await client.send(new CreateTableCommand(toCreateTableInput(definition, name)));
    }
  }
}

async function tableExists(client: DynamoDBClient, name: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return true;
  } catch (error) {
    if (error instanceof ResourceNotFoundException || (error as Error).name === 'ResourceNotFoundException') {
      return false;
    }
    throw error;
  }
}
