/**
 * The one paging loop over DynamoDB's Query: every multi-page read of the records table (index keys, a
 * dataset's partition, the ids behind the record count) goes through it, so each page's consumed capacity
 * reaches the request's meter, and read budgets and unit caps apply the same way everywhere.
 */
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordItem } from '../records/record-codec';

/** A position to continue a read from (DynamoDB's LastEvaluatedKey). */
export type ReadPosition = Record<string, unknown>;

/**
 * Called after every page of a multi-page read with the items kept so far; may throw to stop it (the list's read
 * budget, a load's deadline).
 */
export type ReadGuard = (kept: number) => void;

/** A read given `maxUnits` stopped before the end: the caller takes another way. */
export class ReadCapExceeded extends Error {
  constructor() {
    super('read stopped at its unit cap');
    this.name = 'ReadCapExceeded';
  }
}

export interface PagedQuery {
  /** The Query, without what the loop sets: `Limit`, `ExclusiveStartKey`, `ReturnConsumedCapacity`. */
  input: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey' | 'ReturnConsumedCapacity'>;
  startAfter?: ReadPosition;
  /**
   * Each call's `Limit`, given how many items were kept and read so far and the units spent on them; none when
   * absent or `undefined`. May throw to stop the read (`ReadCapExceeded`, when finishing would cost too much).
   */
  limit?: (kept: number, read: number, spent: number) => number | undefined;
  /** Whether enough was read, given how many items were kept so far (checked after each page). */
  enough?: (kept: number) => boolean;
  /** Which items of each page to return (all by default); what is read is paid for either way. */
  keep?: (item: Record<string, unknown>) => boolean;
  /** Called after each page; may throw to stop the read. */
  guard?: ReadGuard;
  /** Before each further call: more units spent than this throws `ReadCapExceeded`. */
  maxUnits?: number;
  /**
   * Whether an item (or a position) lies past the far end of the read: the read stops there, without it. For a
   * key range read from one end only (`keyRange` in `list-reader.ts`).
   */
  past?: (item: Record<string, unknown>) => boolean;
}

/** Read page after page until DynamoDB has no more or `enough` says so; `next` is where it stopped, if early. */
export async function queryPages(
  client: DynamoDBDocumentClient,
  query: PagedQuery,
  meter: CapacityMeter,
): Promise<{ items: RecordItem[]; next?: ReadPosition }> {
  const items: RecordItem[] = [];
  let startKey = query.startAfter;
  let spent = 0;
  let read = 0;
  do {
    if (query.maxUnits !== undefined && spent > query.maxUnits) throw new ReadCapExceeded();
    const result = await client.send(
      new QueryCommand({
        ...query.input,
        Limit: query.limit?.(items.length, read, spent),
        ExclusiveStartKey: startKey,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    spent += result.ConsumedCapacity?.CapacityUnits ?? 0;
    const page = result.Items ?? [];
    const end = query.past ? page.findIndex(query.past) : -1;
    const within = end < 0 ? page : page.slice(0, end);
    read += within.length;
    items.push(...(query.keep ? within.filter(query.keep) : within));
    startKey = result.LastEvaluatedKey;
    // Past the far end: by an item, or by where the page stopped (a filter may have dropped the items there).
    if (end >= 0 || (startKey && query.past?.(startKey))) startKey = undefined;
    query.guard?.(items.length);
  } while (startKey && !query.enough?.(items.length));
  return startKey ? { items, next: startKey } : { items };
}
