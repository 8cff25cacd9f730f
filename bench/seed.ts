/**
 * Writes prepared items straight into a table, as the benchmarks seed their datasets: batches of 25 (BatchWriteItem's
 * limit), a few in flight at once, each resent with whatever the store left unprocessed until nothing is left.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export async function putAll(
  doc: DynamoDBDocumentClient,
  table: string,
  items: Record<string, unknown>[],
  inFlight = 4,
): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  let cursor = 0;
  const writer = async () => {
    while (cursor < batches.length) {
      let pending = (batches[cursor++] as Record<string, unknown>[]).map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const result = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
        pending = (result.UnprocessedItems?.[table] ?? []) as typeof pending;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, writer));
}
