/**
 * BatchWriteItem and BatchGetItem over any number of items, for every store that writes or reads in batches: the
 * items go in requests of the most DynamoDB takes per call (25 writes, 100 keys), and what a call leaves
 * unprocessed is sent again after a backoff with jitter, at most `MAX_BATCH_ATTEMPTS` calls per request; then
 * `BatchIncomplete`, naming how many were left.
 *
 * Why a bound, and why this one. A batch call can succeed in part: DynamoDB answers 200 and hands back the items
 * (or keys) it did not get to, typically because a partition is throttled. The SDK's own retries (`maxAttempts` of
 * the client) cover only a whole request that fails; partial success is ours to retry. Unbounded, a function under
 * sustained throttling spends its whole timeout in this loop and its caller sees a timeout instead of an answer it
 * can act on. Six calls with waits of 12.5–25, 25–50, 50–100, 100–200 and 200–400 ms between them wait at most
 * 775 ms per request: a batch create of 1000 records (40 requests, 4 in flight: 10 rounds) that meets throttling on
 * every request still gives up within about 8 s of waiting, well inside its 25 s timeout, with time left to settle
 * its bookkeeping and answer. A partition that still refuses after five resends within 0.8 s is saturated: the
 * caller's own retry a little later (an Idempotency-Key retry of a batch create, a stream batch handed out again,
 * a job step retried) does more good than waiting longer here.
 *
 * What a call processed stays processed: only the unprocessed part is sent again, so no item is written twice by
 * this loop, and when it gives up, the items it did not write are exactly the ones `BatchIncomplete` counts (and,
 * for a request of the caller's that writes new records, the ones a range read finds missing).
 */
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailableError } from '../contract/errors';
import type { CapacityMeter } from '../observability/capacity-meter';
import { datasetMetaPartition } from './item-keys';
import { RecordAttr } from './table-definitions';

/** BatchWriteItem takes at most 25 requests per call. */
export const BATCH_WRITE_SIZE = 25;
/** BatchGetItem takes at most 100 keys per call. */
export const BATCH_GET_SIZE = 100;
/** Calls per request: the first and up to five resends of what is left unprocessed. */
export const MAX_BATCH_ATTEMPTS = 6;
/** The first wait's ceiling; each further wait doubles it. */
const BASE_BACKOFF_MS = 25;

/** One request of a BatchWriteItem: put an item, or delete one by its key. */
export type BatchWriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: Record<string, unknown> } };

/** What a BatchGetItem asks for besides its keys. */
export interface BatchGetRead {
  ConsistentRead?: boolean;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}

/** How the loop waits between calls: real time in the service, a controllable clock in tests. */
export interface BatchPacing {
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1), for the jitter. */
  random(): number;
}

export const realPacing: BatchPacing = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/**
 * DynamoDB still left part of a batch unprocessed after `MAX_BATCH_ATTEMPTS` calls: the table cannot keep up
 * right now. A 3001 whose words say to retry; callers with a better answer (a batch create: retry with the
 * Idempotency-Key) put it in their own words.
 */
export class BatchIncomplete extends ServiceUnavailableError {
  constructor(
    readonly kind: 'write' | 'read',
    /** Items (writes) or keys (reads) of the last call that were left unprocessed. */
    readonly unprocessed: number,
  ) {
    super('the data store is busy and could not keep up with this request; retry in a few seconds');
    this.name = 'BatchIncomplete';
  }
}

/** The wait before resend `attempt` (1 for the first): half of a doubling ceiling, plus up to the other half. */
export function backoffMs(attempt: number, random: () => number): number {
  const ceiling = BASE_BACKOFF_MS * 2 ** (attempt - 1);
  return ceiling / 2 + (random() * ceiling) / 2;
}

/** Send `pending` until `send` answers nothing left, waiting between calls; `BatchIncomplete` after the bound. */
async function untilProcessed<T>(
  kind: 'write' | 'read',
  first: readonly T[],
  send: (pending: readonly T[]) => Promise<readonly T[]>,
  pacing: BatchPacing,
): Promise<void> {
  let pending = first;
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > 1) await pacing.sleep(backoffMs(attempt - 1, pacing.random));
    pending = await send(pending);
    if (pending.length > 0 && attempt === MAX_BATCH_ATTEMPTS) throw new BatchIncomplete(kind, pending.length);
  }
}

/** One BatchWriteItem of at most 25 requests, sent again for what it leaves unprocessed. */
export async function writeBatch(
  client: DynamoDBDocumentClient,
  table: string,
  requests: readonly BatchWriteRequest[],
  meter: CapacityMeter | undefined,
  pacing: BatchPacing = realPacing,
): Promise<void> {
  await untilProcessed(
    'write',
    requests,
    async (pending) => {
      const result = await client.send(
        new BatchWriteCommand({
          RequestItems: { [table]: pending as BatchWriteRequest[] },
          ...(meter ? { ReturnConsumedCapacity: 'TOTAL' } : {}),
        }),
      );
      meter?.addWrite(result.ConsumedCapacity);
      return (result.UnprocessedItems?.[table] as BatchWriteRequest[] | undefined) ?? [];
    },
    pacing,
  );
}

/** Any number of write requests, in batches of 25 written one after the other. */
export async function writeInBatches(
  client: DynamoDBDocumentClient,
  table: string,
  requests: readonly BatchWriteRequest[],
  meter: CapacityMeter | undefined,
  pacing: BatchPacing = realPacing,
): Promise<void> {
  await oneChunkAfterAnother(requests, BATCH_WRITE_SIZE, (chunk) => writeBatch(client, table, chunk, meter, pacing));
}

/**
 * One BatchGetItem of at most 100 keys, sent again for the keys it leaves unprocessed; `found` sees each call's
 * items as they arrive (the items of keys that do not exist are absent).
 */
export async function getBatch(
  client: DynamoDBDocumentClient,
  table: string,
  keys: readonly Record<string, unknown>[],
  read: BatchGetRead,
  meter: CapacityMeter,
  found: (items: Record<string, unknown>[]) => void,
  pacing: BatchPacing = realPacing,
): Promise<void> {
  await untilProcessed(
    'read',
    keys,
    async (pending) => {
      const result = await client.send(
        new BatchGetCommand({
          RequestItems: { [table]: { ...read, Keys: pending as Record<string, unknown>[] } },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      found(result.Responses?.[table] ?? []);
      return result.UnprocessedKeys?.[table]?.Keys ?? [];
    },
    pacing,
  );
}

/** Any number of keys, in batches of 100 read one after the other. */
export async function getInBatches(
  client: DynamoDBDocumentClient,
  table: string,
  keys: readonly Record<string, unknown>[],
  read: BatchGetRead,
  meter: CapacityMeter,
  found: (items: Record<string, unknown>[]) => void,
  pacing: BatchPacing = realPacing,
): Promise<void> {
  await oneChunkAfterAnother(keys, BATCH_GET_SIZE, (chunk) =>
    getBatch(client, table, chunk, read, meter, found, pacing),
  );
}

async function oneChunkAfterAnother<T>(
  items: readonly T[],
  size: number,
  each: (chunk: readonly T[]) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await each(items.slice(i, i + size));
}

/** Deletes items of a dataset's meta partition by sort key, in batches; deleting one already gone is harmless. */
export async function deleteMetaItems(
  client: DynamoDBDocumentClient,
  table: string,
  datasetCode: string,
  sortKeys: readonly string[],
  meter: CapacityMeter,
): Promise<void> {
  const partition = datasetMetaPartition(datasetCode);
  await writeInBatches(
    client,
    table,
    sortKeys.map((sortKey) => ({
      DeleteRequest: { Key: { [RecordAttr.partitionKey]: partition, [RecordAttr.sortKey]: sortKey } },
    })),
    meter,
  );
}

/** Which sort keys of a meta partition `metaSortKeys` reads: those from `from` to `to` (inclusive), or by prefix. */
export type MetaKeyRange = { from: string; to: string } | { prefix: string };

/**
 * The sort keys of a dataset's meta partition in a range, ascending, at most `limit` (keys only: a deletion needs
 * no more). `consistent` for a caller that must see every item written before it asks.
 */
export async function metaSortKeys(
  client: DynamoDBDocumentClient,
  table: string,
  datasetCode: string,
  range: MetaKeyRange,
  limit: number,
  meter: CapacityMeter,
  consistent: boolean,
): Promise<string[]> {
  const byPrefix = 'prefix' in range;
  const found: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const result = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: byPrefix
          ? '#pk = :pk AND begins_with(#sk, :prefix)'
          : '#pk = :pk AND #sk BETWEEN :from AND :to',
        ProjectionExpression: '#sk',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
        ExpressionAttributeValues: {
          ':pk': datasetMetaPartition(datasetCode),
          ...(byPrefix ? { ':prefix': range.prefix } : { ':from': range.from, ':to': range.to }),
        },
        ...(consistent ? { ConsistentRead: true } : {}),
        Limit: limit - found.length,
        ExclusiveStartKey: start,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    for (const item of result.Items ?? []) found.push(item[RecordAttr.sortKey] as string);
    start = result.LastEvaluatedKey;
  } while (start && found.length < limit);
  return found;
}
