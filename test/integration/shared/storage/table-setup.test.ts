/**
 * The service's tables in a store it creates itself (storage/table-setup.ts): created once, found again by name
 * whatever else the endpoint holds, their items left as they are.
 */
import { CreateTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../../../bin/local/embedded-dynamo';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { ensureTables, localTableNames } from '../../../../shared/storage/table-setup';

let dynamo: EmbeddedDynamo;

beforeEach(async () => {
  dynamo = await startEmbeddedDynamo();
});

afterEach(async () => {
  await dynamo.close();
});

async function tableNames(): Promise<string[]> {
  const names: string[] = [];
  let after: string | undefined;
  do {
    const page = await dynamo.client.send(new ListTablesCommand(after ? { ExclusiveStartTableName: after } : {}));
    names.push(...(page.TableNames ?? []));
    after = page.LastEvaluatedTableName;
  } while (after);
  return names;
}

describe('ensureTables', () => {
  it("creates the service's tables, and asked again keeps them and their items", async () => {
    const names = localTableNames('svc');
    await ensureTables(dynamo.client, names);
    expect(await tableNames()).toEqual(['svc-catalog', 'svc-events', 'svc-quota', 'svc-records']);

    const documents = createDocumentClient(dynamo.client);
    await documents.send(new PutCommand({ TableName: 'svc-records', Item: { '@pk': 'd#notes', '@sk': 'r1', n: 1 } }));
    await ensureTables(dynamo.client, names);

    expect(await tableNames()).toEqual(['svc-catalog', 'svc-events', 'svc-quota', 'svc-records']);
    const kept = await documents.send(
      new GetCommand({ TableName: 'svc-records', Key: { '@pk': 'd#notes', '@sk': 'r1' } }),
    );
    expect(kept.Item).toEqual({ '@pk': 'd#notes', '@sk': 'r1', n: 1 });
  });

  it('finds its tables on an endpoint whose first page of table names holds only others', async () => {
    // 100 tables named before the service's: ListTables answers them alone on its first page.
    for (let i = 0; i < 100; i++) {
      await dynamo.client.send(
        new CreateTableCommand({
          TableName: `aaa-other-${String(i).padStart(3, '0')}`,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        }),
      );
    }
    const names = localTableNames('svc');
    await ensureTables(dynamo.client, names);

    await expect(ensureTables(dynamo.client, names)).resolves.toBeUndefined();
    const all = await tableNames();
    expect(all).toHaveLength(104);
    expect(all.slice(100)).toEqual(['svc-catalog', 'svc-events', 'svc-quota', 'svc-records']);
  });
});
