/**
 * The reads behind lists: keys of a generic index, records by id in batches, a dataset's partition in id order.
 * Eventually consistent where the index reads are, each
 * asking for its consumed capacity, which goes to the request's meter. Multi-page reads share one paging loop
 * (`query-pages.ts`). Key ranges are in DynamoDB's order, by code point, whatever order the store validates them
 * in (`keyRange`).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordItem } from '../records/record-codec';
import { compareCodePoints, type KeyInterval } from '../records/value-encoding';
import { BATCH_GET_SIZE, getBatch } from './batch-items';
import { datasetPartitionKey, recordKey } from './item-keys';
import { queryPages, ReadCapExceeded, type ReadGuard, type ReadPosition } from './query-pages';
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

/**
 * A sort key range as a Query's key condition. DynamoDB orders string keys by code point (UTF-8 bytes). Bounds in
 * order by code point but not by UTF-16 code unit (one holds a character above U+FFFF where the other holds one of
 * U+E000–U+FFFF) make a BETWEEN that a store comparing code units refuses (the embedded store of local runs does):
 * such a range is read from its near end alone, and the read stops past its far end (`past`), in pages of at most
 * `ONE_SIDED_PAGE` so that it reads little beyond it. Bounds out of order by code point select nothing.
 */
function keyRange(
  placeholder: string,
  attribute: string,
  range: { lower?: string; upper?: string },
  direction: 'asc' | 'desc',
): { condition: string; values: Record<string, string>; past?: (item: Record<string, unknown>) => boolean } | 'empty' {
  const { lower, upper } = range;
  const low = `:${placeholder.slice(1)}lower`;
  const high = `:${placeholder.slice(1)}upper`;
  if (lower !== undefined && upper !== undefined) {
    if (compareCodePoints(lower, upper) > 0) return 'empty';
    if (lower <= upper) {
      return { condition: `${placeholder} BETWEEN ${low} AND ${high}`, values: { [low]: lower, [high]: upper } };
    }
    const keyOf = (item: Record<string, unknown>) => String(item[attribute]);
    return direction === 'asc'
      ? {
          condition: `${placeholder} >= ${low}`,
          values: { [low]: lower },
          past: (item) => compareCodePoints(keyOf(item), upper) > 0,
        }
      : {
          condition: `${placeholder} <= ${high}`,
          values: { [high]: upper },
          past: (item) => compareCodePoints(keyOf(item), lower) < 0,
        };
  }
  if (lower !== undefined) return { condition: `${placeholder} >= ${low}`, values: { [low]: lower } };
  if (upper !== undefined) return { condition: `${placeholder} <= ${high}`, values: { [high]: upper } };
  return { condition: '', values: {} };
}

/** Items per call of a range read from one end (see `keyRange`): about 13 read units of keys at most past its end. */
const ONE_SIDED_PAGE = 1000;

/** A read keeping the keys of some ids: its first call (at most `MIN_FILTERED_PAGE` keys) guesses one in four. */
const KEPT_SHARE_GUESS = 0.25;
const MIN_FILTERED_PAGE = 100;
/** About 13 read units of keys. */
const MAX_FILTERED_PAGE = 1000;

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
   * Keys of a generic index within one interval of one build's keys (`index.tag` followed by the interval), in
   * key order (`desc`: reversed). Keys-only, so a read costs about 0.5 units per 4 KB of keys however large the
   * records are.
   */
  async queryIndexKeys(
    datasetCode: string,
    index: { indexName: string; attribute: string; tag: string },
    interval: KeyInterval,
    direction: 'asc' | 'desc',
    options: {
      /** Stop once this many keys are kept. */
      limit?: number;
      /** Keep only the keys of these ids (the others are read, and paid for, but not returned). */
      keep?: (id: string) => boolean;
      guard?: ReadGuard;
      maxUnits?: number;
    },
    meter: CapacityMeter,
  ): Promise<IndexKey[]> {
    const { limit, keep } = options;
    // Keys of this build only: every key it wrote starts with its tag, and no tag is a prefix of another's.
    const tagged = { lower: index.tag + interval.lower, upper: index.tag + interval.upper };
    const range = keyRange('#ix', index.attribute, tagged, direction);
    if (range === 'empty') return [];
    const page = range.past ? ONE_SIDED_PAGE : undefined;
    // Filtering by id, a call reads more keys than it keeps: its Limit follows the share kept so far, and under a
    // unit cap the read stops as soon as what it has seen says that finishing would cost more than the cap.
    const keptLimit = (kept: number, read: number, spent: number): number | undefined => {
      if (limit === undefined) return page;
      if (read === 0) return Math.min(MIN_FILTERED_PAGE, Math.ceil(limit / KEPT_SHARE_GUESS));
      // At least one kept key is assumed: a probe that kept none says the share is small, not zero.
      const share = Math.max(kept, 1) / read;
      const needed = Math.ceil((limit - kept) / share);
      if (options.maxUnits !== undefined && spent + (needed * spent) / read > options.maxUnits) {
        throw new ReadCapExceeded();
      }
      return Math.min(MAX_FILTERED_PAGE, Math.max(MIN_FILTERED_PAGE, needed));
    };
    const { items } = await queryPages(
      this.client,
      {
        input: {
          TableName: this.table,
          IndexName: index.indexName,
          KeyConditionExpression: `#pk = :pk AND ${range.condition}`,
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#ix': index.attribute },
          ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode), ...range.values },
          ScanIndexForward: direction === 'asc',
        },
        limit: keep
          ? keptLimit
          : (read) => (limit === undefined ? page : Math.max(1, Math.min(limit - read, page ?? limit))),
        ...(keep ? { keep: (item: Record<string, unknown>) => keep(item[RecordAttr.sortKey] as string) } : {}),
        ...(range.past ? { past: range.past } : {}),
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
      batches.map((batch) =>
        getBatch(
          this.client,
          this.table,
          batch.map((id) => recordKey(datasetCode, id)),
          consistent ? { ConsistentRead: true } : {},
          meter,
          (items) => {
            for (const item of items) found.set(item[RecordAttr.sortKey] as string, item);
            guard?.(found.size);
          },
        ),
      ),
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
    const range = keyRange('#ksk', RecordAttr.sortKey, read.idRange ?? {}, read.direction);
    if (range === 'empty') return { items: [] };
    if (range.condition) names['#ksk'] = RecordAttr.sortKey;
    const values: Record<string, unknown> = { ':kpk': datasetPartitionKey(datasetCode), ...range.values };
    const keyCondition = range.condition ? `#kpk = :kpk AND ${range.condition}` : '#kpk = :kpk';
    const { limit } = read;
    const page = range.past ? ONE_SIDED_PAGE : undefined;
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
        limit: (done) => {
          if (limit !== undefined && !read.filter) return Math.min(limit - done, page ?? limit);
          if (limit !== undefined && read.itemsPerCall !== undefined)
            return Math.min(read.itemsPerCall, page ?? Infinity);
          return page;
        },
        ...(range.past ? { past: range.past } : {}),
        enough: (done) => limit !== undefined && done >= limit,
        ...(guard ? { guard } : {}),
      },
      meter,
    );
    if (limit !== undefined && result.items.length > limit) result.items.length = limit;
    return result;
  }
}
