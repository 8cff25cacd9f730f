/**
 * Removing items whose time is over: what DynamoDB's TTL does in a deployment (the tables' `timeToLiveAttribute`,
 * epoch seconds), as a port, so that a store without TTL (dynalite under `npm start` and the tests) is tidied the
 * same way. Readers never depend on it: every item that carries an expiry is ignored by its readers once past it
 * (idempotency items, nonces, quota windows, events past the retention, webhook retries and parked events), so
 * removing it sooner or later changes no answer; it only bounds what the store holds.
 *
 * The twin scans each table with an expiry attribute page by page and deletes, conditionally on the expiry still
 * being past (an item written again meanwhile is kept), the items whose expiry is before the clock. It reads every
 * item of the table once per pass: `npm start` runs a pass an hour, a page at a time, beside its requests.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { TableDefinition } from './table-definitions';

/** The port: remove what has expired by `now` (ms). */
export interface ExpiredItems {
  /** One step of a pass (a page of one table); `done` once the pass has seen every table whole. */
  step(now: number): Promise<{ deleted: number; done: boolean }>;
}

export interface ExpiringTable {
  name: string;
  definition: TableDefinition;
}

/** Items a scan page reads at most. */
const PAGE_ITEMS = 1_000;

/** The twin of DynamoDB's TTL for a store that has none. */
export class ScannedExpiry implements ExpiredItems {
  private readonly tables: ExpiringTable[];
  private table = 0;
  private start: Record<string, unknown> | undefined;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    tables: readonly ExpiringTable[],
  ) {
    this.tables = tables.filter((table) => table.definition.timeToLiveAttribute !== undefined);
  }

  async step(now: number): Promise<{ deleted: number; done: boolean }> {
    const current = this.tables[this.table];
    if (!current) return { deleted: 0, done: true };
    const { name, definition } = current;
    const attribute = definition.timeToLiveAttribute as string;
    const keyNames = [definition.partitionKey.name, ...(definition.sortKey ? [definition.sortKey.name] : [])];
    const names: Record<string, string> = { '#ttl': attribute };
    keyNames.forEach((key, i) => {
      names[`#k${i}`] = key;
    });
    const seconds = Math.floor(now / 1000);
    const page = await this.client.send(
      new ScanCommand({
        TableName: name,
        FilterExpression: '#ttl < :now',
        ProjectionExpression: keyNames.map((_, i) => `#k${i}`).join(', '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':now': seconds },
        Limit: PAGE_ITEMS,
        ExclusiveStartKey: this.start,
      }),
    );
    let deleted = 0;
    for (const key of page.Items ?? []) {
      try {
        await this.client.send(
          new DeleteCommand({
            TableName: name,
            Key: key,
            ConditionExpression: '#ttl < :now',
            ExpressionAttributeNames: { '#ttl': attribute },
            ExpressionAttributeValues: { ':now': seconds },
          }),
        );
        deleted += 1;
      } catch (error) {
        // Written again since the scan read it: no longer expired.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    this.start = page.LastEvaluatedKey;
    if (this.start === undefined) this.table += 1;
    const done = this.table >= this.tables.length;
    if (done) this.table = 0;
    return { deleted, done };
  }
}

/** A whole pass, every table, one page after another (tests, and `npm start`'s hourly sweep). */
export async function removeExpired(expiry: ExpiredItems, now: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const step = await expiry.step(now);
    deleted += step.deleted;
    if (step.done) return deleted;
  }
}
