/**
 * The reads behind lists: keys of a generic index, records by id in batches, a dataset's partition in id order.
 * Eventually consistent where the index reads are, each
 * asking for its consumed capacity, which goes to the request's meter. Multi-page reads share one paging loop
 * (`query-pages.ts`).
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordItem } from '../records/record-codec';
import type { KeyInterval } from '../records/value-encoding';
import { datasetPartitionKey, recordKey } from './item-keys';
import { queryPages, type ReadGuard, type ReadPosition } from './query-pages';
import { RecordAttr } from './table-definitions';

export { ReadCapExceeded, type ReadGuard, type ReadPosition } from './query-pages';

export interface IndexKey {
  id: string;
  /** The index sort key: the encoded value and the id. */
  key: string;
}

export interface PartitionRead {
  direction: 'asc' | 'desc';
  /** Inclusive id bounds. */
  idRange?: { lower?: string; upper?: string };
  /** A FilterExpression with its names and values (placeholders must not start with `#k` or `:k`). */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
  /** Stop after this many items (the page read of an unfiltered list). */
  limit?: number;
  startAfter?: ReadPosition;
  /** Read consistently (custom SQL's catch-up of a batch's records). */
  consistent?: boolean;
  /**
   * With a filter and `limit`: the items each call reads (matching or not), so that a read that needs a few
   * matches does not read a megabyte first. Without it, a filtered read takes whole pages.
   */
  itemsPerCall?: number;
}

/** BatchGetItem takes at most 100 keys per call. */
const BATCH_GET_SIZE = 100;
const MAX_BATCH_ATTEMPTS = 8;

export interface ListReaderOptions {
  /**
   * Read units one get-list may spend before it is answered with 2001 (a read no index narrows).
   * @default DEFAULT_LIST_READ_BUDGET
   */
  readonly listReadBudget?: number;
}

/** About 8 MB of records read eventually consistent: a few seconds of DynamoDB paging at most. */
export const DEFAULT_LIST_READ_BUDGET = 1000;

export class ListReader {
  readonly listReadBudget: number;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    options: ListReaderOptions = {},
  ) {
    this.listReadBudget = options.listReadBudget ?? DEFAULT_LIST_READ_BUDGET;
  }

  /**
   * Keys of a generic index within one interval, in key order (`desc`: reversed). Keys-only, so a read
   * costs about 0.5 units per 4 KB of keys however large the records are.
   */
  async queryIndexKeys(
    datasetCode: string,
    index: { indexName: string; attribute: string },
    interval: KeyInterval,
    direction: 'asc' | 'desc',
    options: { limit?: number; guard?: ReadGuard; maxUnits?: number },
    meter: CapacityMeter,
  ): Promise<IndexKey[]> {
    const { limit } = options;
    const { items } = await queryPages(
      this.client,
      {
        input: {
          TableName: this.table,
          IndexName: index.indexName,
          KeyConditionExpression: '#pk = :pk AND #ix BETWEEN :lower AND :upper',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#ix': index.attribute },
          ExpressionAttributeValues: {
            ':pk': datasetPartitionKey(datasetCode),
            ':lower': interval.lower,
            ':upper': interval.upper,
          },
          ScanIndexForward: direction === 'asc',
        },
        limit: (read) => (limit === undefined ? undefined : Math.max(1, limit - read)),
        enough: (read) => limit !== undefined && read >= limit,
        ...(options.guard ? { guard: options.guard } : {}),
        ...(options.maxUnits === undefined ? {} : { maxUnits: options.maxUnits }),
      },
      meter,
    );
    return items.map((item) => ({ id: item[RecordAttr.sortKey] as string, key: item[index.attribute] as string }));
  }

  /**
   * Records by id (eventually consistent, like the index reads that found the ids), in parallel batches of
   * 100, retrying what DynamoDB leaves unprocessed. Ids that do not exist are absent from the map.
   */
  async batchGet(
    datasetCode: string,
    ids: readonly string[],
    meter: CapacityMeter,
    guard?: ReadGuard,
    /** Read consistently (custom SQL's catch-up, after change items read consistently). */
    consistent = false,
  ): Promise<Map<string, RecordItem>> {
    const found = new Map<string, RecordItem>();
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += BATCH_GET_SIZE) batches.push(ids.slice(i, i + BATCH_GET_SIZE));
    await Promise.all(
      batches.map(async (batch) => {
        let keys: Record<string, unknown>[] = batch.map((id) => recordKey(datasetCode, id));
        for (let attempt = 0; keys.length > 0; attempt++) {
          if (attempt === MAX_BATCH_ATTEMPTS) throw new Error('BatchGetItem left keys unprocessed after retries');
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 10));
          const result = await this.client.send(
            new BatchGetCommand({
              RequestItems: { [this.table]: { Keys: keys, ...(consistent ? { ConsistentRead: true } : {}) } },
              ReturnConsumedCapacity: 'TOTAL',
            }),
          );
          meter.addRead(result.ConsumedCapacity);
          for (const item of result.Responses?.[this.table] ?? []) found.set(item[RecordAttr.sortKey] as string, item);
          keys = result.UnprocessedKeys?.[this.table]?.Keys ?? [];
          guard?.();
        }
      }),
    );
    return found;
  }

  /**
   * Records of a dataset's partition in id order, optionally within an id range and through a
   * FilterExpression. Returns the items and, when `limit` stopped the read, where to continue.
   */
  async queryPartition(
    datasetCode: string,
    read: PartitionRead,
    meter: CapacityMeter,
    guard?: ReadGuard,
  ): Promise<{ items: RecordItem[]; next?: ReadPosition }> {
    const names: Record<string, string> = { '#kpk': RecordAttr.partitionKey };
    const values: Record<string, unknown> = { ':kpk': datasetPartitionKey(datasetCode) };
    let keyCondition = '#kpk = :kpk';
    const { lower, upper } = read.idRange ?? {};
    if (lower !== undefined || upper !== undefined) names['#ksk'] = RecordAttr.sortKey;
    if (lower !== undefined && upper !== undefined) {
      keyCondition += ' AND #ksk BETWEEN :klower AND :kupper';
      Object.assign(values, { ':klower': lower, ':kupper': upper });
    } else if (lower !== undefined) {
      keyCondition += ' AND #ksk >= :klower';
      values[':klower'] = lower;
    } else if (upper !== undefined) {
      keyCondition += ' AND #ksk <= :kupper';
      values[':kupper'] = upper;
    }
    if (lower !== undefined && upper !== undefined && lower > upper) return { items: [] };
    const { limit } = read;
    const result = await queryPages(
      this.client,
      {
        input: {
          TableName: this.table,
          KeyConditionExpression: keyCondition,
          FilterExpression: read.filter?.expression,
          ExpressionAttributeNames: { ...names, ...read.filter?.names },
          ExpressionAttributeValues: { ...values, ...read.filter?.values },
          ScanIndexForward: read.direction === 'asc',
          ...(read.consistent ? { ConsistentRead: true } : {}),
        },
        ...(read.startAfter ? { startAfter: read.startAfter } : {}),
        // With a filter, Limit counts items read, not matches: only limit unfiltered reads, or by `itemsPerCall`.
        limit: (done) => (limit === undefined ? undefined : !read.filter ? limit - done : read.itemsPerCall),
        enough: (done) => limit !== undefined && done >= limit,
        ...(guard ? { guard } : {}),
      },
      meter,
    );
    if (limit !== undefined && result.items.length > limit) result.items.length = limit;
    return result;
  }
}
