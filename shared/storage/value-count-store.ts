/**
 * The DynamoDB calls of per-value totals (value-counter.ts says what the items mean): per index slot a head,
 * count pages and the list of their entries (each page's lowest key and, once a fold gave it one, the page's sum
 * and the position it is true at), in parts by key range (or, for a slot folded before parts, the former single
 * item of lowest keys, until its next split moves it into parts); per dataset the position through which its
 * change items are checked. All in the dataset's meta partition, every call asking for its consumed capacity.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { compareCodePoints } from '../records/value-encoding';
import { getBatch, getInBatches } from './batch-items';
import { conditionalWrite } from './conditional-write';
import {
  claimsCheckedKey,
  datasetMetaPartition,
  valueCountHeadKey,
  valuePageKey,
  valuePageListKey,
  valuePageListPartPrefix,
  valuePagePrefix,
} from './item-keys';
import { RecordAttr } from './table-definitions';

/** What a total reads first: its slot's head, the dataset's checked position, when a fold beside the writes began. */
export interface SlotHeadRead {
  head?: ValueHead;
  checked?: string;
  foldSeen?: number;
}

/** An index slot's totals: folded through `through` ('' = nothing folded yet); a fold runs until `foldUntil`. */
export interface ValueHead {
  through: string;
  foldUntil?: number;
}

/**
 * One count page: the counts of the count keys from `lowest` up to the next page's lowest, through `through`,
 * ascending. `splitAt`: a split at these keys (ascending) has begun (value-counter.ts finishes it).
 */
export interface ValuePage {
  lowest: string;
  through: string;
  counts: [string, number][];
  splitAt?: string[];
}

/** What a page-list entry says of its page: the total of the page's counts, true at `through`. */
export interface PageSum {
  sum: number;
  through: string;
}

/**
 * One entry of a slot's page list: a page's lowest key and, when a fold gave it one, the page's sum (an entry
 * without a sum says only "read the page").
 */
export interface PageEntry {
  lowest: string;
  sum?: PageSum;
}

/** Changes to a slot's page list: new pages' lowest keys (no sum), and sums given (or taken away: undefined). */
export interface PageListChange {
  added?: readonly string[];
  sums?: ReadonlyMap<string, PageSum | undefined>;
}

export class ValueCountStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * A slot's head and the dataset's checked position, with when a fold beside the writes last began (`foldSeen`,
   * ms), in one read (eventually consistent).
   */
  async readHead(datasetCode: string, slot: string, meter: CapacityMeter): Promise<SlotHeadRead> {
    const headKey = valueCountHeadKey(datasetCode, slot);
    const checkedKey = claimsCheckedKey(datasetCode);
    let head: ValueHead | undefined;
    let checked: string | undefined;
    let foldSeen: number | undefined;
    await getBatch(this.client, this.table, [headKey, checkedKey], {}, meter, (items) => {
      for (const item of items) {
        if (item[RecordAttr.sortKey] === headKey[RecordAttr.sortKey]) head = readHead(item);
        else {
          if (typeof item.through === 'string') checked = item.through;
          if (typeof item.foldSeen === 'number') foldSeen = item.foldSeen;
        }
      }
    });
    return {
      ...(head ? { head } : {}),
      ...(checked === undefined ? {} : { checked }),
      ...(foldSeen === undefined ? {} : { foldSeen }),
    };
  }

  /**
   * Say that a fold beside the writes began at `now` (ms), on the dataset's checked item (a later time is kept): a
   * list leaves claims to folds that ran this recently (value-counter.ts).
   */
  async markFoldSeen(datasetCode: string, now: number, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: claimsCheckedKey(datasetCode),
          UpdateExpression: 'SET #seen = :now',
          ConditionExpression: 'attribute_not_exists(#seen) OR #seen < :now',
          ExpressionAttributeNames: { '#seen': 'foldSeen' },
          ExpressionAttributeValues: { ':now': now },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /** A slot's head, read consistently. */
  async readHeadConsistently(datasetCode: string, slot: string, meter: CapacityMeter): Promise<ValueHead | undefined> {
    const item = await this.get(valueCountHeadKey(datasetCode, slot), meter, true);
    return item ? readHead(item) : undefined;
  }

  /** The dataset's checked position, read consistently. */
  async readChecked(datasetCode: string, meter: CapacityMeter): Promise<string | undefined> {
    const item = await this.get(claimsCheckedKey(datasetCode), meter, true);
    return item?.through as string | undefined;
  }

  /** Start a slot's totals folded through `through`; false when they exist already. */
  async createHead(datasetCode: string, slot: string, through: string, meter: CapacityMeter): Promise<boolean> {
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...valueCountHeadKey(datasetCode, slot), through },
          ConditionExpression: 'attribute_not_exists(#sk)',
          ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result !== undefined;
  }

  /** Take the right to fold a slot until `until` (ms), if its head is still at `through` and nobody folds. */
  async takeFold(
    datasetCode: string,
    slot: string,
    through: string,
    now: number,
    until: number,
    meter: CapacityMeter,
  ): Promise<boolean> {
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: valueCountHeadKey(datasetCode, slot),
          UpdateExpression: 'SET #until = :until',
          ConditionExpression: '#through = :through AND (attribute_not_exists(#until) OR #until < :now)',
          ExpressionAttributeNames: { '#until': 'foldUntil', '#through': 'through' },
          ExpressionAttributeValues: { ':until': until, ':through': through, ':now': now },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result !== undefined;
  }

  /** Move a slot's head to `through` (every page its claims touched is folded) and end the fold. */
  async finishFold(
    datasetCode: string,
    slot: string,
    from: string,
    through: string,
    meter: CapacityMeter,
  ): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: valueCountHeadKey(datasetCode, slot),
          UpdateExpression: 'SET #through = :through REMOVE #until',
          ConditionExpression: '#through = :from',
          ExpressionAttributeNames: { '#until': 'foldUntil', '#through': 'through' },
          ExpressionAttributeValues: { ':through': through, ':from': from },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /** Move the dataset's checked position forward to `through` (a further one is kept). */
  async advanceChecked(datasetCode: string, through: string, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: claimsCheckedKey(datasetCode),
          // An update, not a put: the item also says when a fold beside the writes last began (`markFoldSeen`).
          UpdateExpression: 'SET #through = :through',
          ConditionExpression: 'attribute_not_exists(#through) OR #through < :through',
          ExpressionAttributeNames: { '#through': 'through' },
          ExpressionAttributeValues: { ':through': through },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /**
   * The pages whose counts may fall within [lower, upper] (count keys compared with index-key bounds, see
   * value-counter.ts): from the page at or below `upper` down to the first one starting below `lower`,
   * returned in ascending order. Read consistently: a total combines a page's position with the head's, which
   * is only right for the page as it is now (an older copy of a page next to a newer head would miss claims).
   */
  async pagesCovering(
    datasetCode: string,
    slot: string,
    lower: string,
    upper: string,
    meter: CapacityMeter,
  ): Promise<ValuePage[]> {
    const prefix = valuePagePrefix(slot);
    const { items } = await this.covering(datasetCode, prefix, lower, upper, meter);
    return items.map((item) => readPage(item, prefix));
  }

  /**
   * The highest few pages of `pagesCovering` (one call's worth, ascending), and whether they are all of them: a
   * total reads an interval of a few pages this way, and a wider one's upper edge.
   */
  async highestPagesCovering(
    datasetCode: string,
    slot: string,
    lower: string,
    upper: string,
    meter: CapacityMeter,
  ): Promise<{ pages: ValuePage[]; all: boolean }> {
    const prefix = valuePagePrefix(slot);
    const { items, reached, exhausted } = await this.covering(datasetCode, prefix, lower, upper, meter, true);
    return { pages: items.map((item) => readPage(item, prefix)), all: reached || exhausted };
  }

  /**
   * The lowest keys of the slot's pages that may hold count keys in [lower, upper], ascending, starting with the
   * greatest at or below `lower` ('' alone before any page split), read consistently (`readPageEntries`).
   */
  async readPageList(
    datasetCode: string,
    slot: string,
    lower: string,
    upper: string,
    meter: CapacityMeter,
  ): Promise<string[]> {
    return (await this.readPageEntries(datasetCode, slot, lower, upper, meter)).map((entry) => entry.lowest);
  }

  /**
   * The entries of the slot's pages that may hold count keys in [lower, upper], ascending, starting with the
   * greatest at or below `lower` ('' alone before any page split), and every entry after them in the last part
   * read (so that the entry after each is known), read consistently. The list is kept in parts
   * (`updatePageList`). A slot whose parts have not started yet (no part '') still has the former single list
   * (lowest keys, no sums); a start that stopped part-way left the parts above some key, written from the highest
   * down and each complete for its range, so below the lowest part the former list holds the keys, and the parts
   * above it.
   */
  async readPageEntries(
    datasetCode: string,
    slot: string,
    lower: string,
    upper: string,
    meter: CapacityMeter,
  ): Promise<PageEntry[]> {
    const prefix = valuePageListPartPrefix(slot);
    const { items, reached } = await this.covering(datasetCode, prefix, lower, upper, meter);
    const parts = items.map((item) => readListPart(item, prefix));
    const listed = parts.flatMap((part, i) => partRange(part, parts[i + 1]?.first));
    if (reached) return listed;
    const below = parts[0]?.first;
    const former = await this.get(valuePageListKey(datasetCode, slot), meter, true);
    const formerListed = ((former?.pages as string[] | undefined) ?? [''])
      .filter((lowest) => below === undefined || compareCodePoints(lowest, below) < 0)
      .map((lowest) => ({ lowest }));
    return [...formerListed, ...listed];
  }

  /**
   * Add the lowest keys of new pages (already written) to the slot's page list, without sums. Each part that takes
   * some is written again; one that would pass `partMaxBytes` is split, its upper parts written before it (a
   * reader takes a part's entries only below the next part's first, so every state in between lists each page
   * once). The first time, the former single list is moved into parts, part '' last, then deleted.
   */
  async addToPageList(
    datasetCode: string,
    slot: string,
    lowests: readonly string[],
    partMaxBytes: number,
    meter: CapacityMeter,
  ): Promise<void> {
    await this.updatePageList(datasetCode, slot, { added: lowests }, partMaxBytes, meter);
  }

  /**
   * Add new pages' keys (`addToPageList`) and give entries their sums or take them away, writing only the parts
   * that change. A sum is given only to an entry listed (or added) in the same call.
   */
  async updatePageList(
    datasetCode: string,
    slot: string,
    change: PageListChange,
    partMaxBytes: number,
    meter: CapacityMeter,
  ): Promise<void> {
    const added = [...new Set(change.added ?? [])].sort(compareCodePoints);
    const sums = change.sums ?? new Map<string, PageSum | undefined>();
    const keys = [...new Set([...added, ...sums.keys()])].sort(compareCodePoints);
    if (keys.length === 0) return;
    const prefix = valuePageListPartPrefix(slot);
    const { items, reached } = await this.covering(
      datasetCode,
      prefix,
      keys[0] as string,
      keys.at(-1) as string,
      meter,
    );
    if (!reached) {
      // The former single list has no sums: nothing to take away, and sums are worth moving it into parts.
      if (added.length > 0 || [...sums.values()].some((sum) => sum !== undefined)) {
        await this.startPageListParts(datasetCode, slot, added, sums, partMaxBytes, meter);
      }
      return;
    }
    const parts = items.map((item) => readListPart(item, prefix));
    for (const [i, part] of parts.entries()) {
      const next = parts[i + 1]?.first;
      const entries = partRange(part, next);
      const taken = added.filter((lowest) => listedIn(lowest, part.first, next));
      const merged = changedEntries(entries, taken, sums);
      if (merged) await this.writeListParts(datasetCode, slot, cutListParts(merged, [], partMaxBytes), meter);
    }
  }

  /**
   * Move the former single list (with `added`) into parts: every part already there (an earlier start that
   * stopped) is written again whole, so that none misses a key; part '' is written last, and from then on the
   * parts are the list.
   */
  private async startPageListParts(
    datasetCode: string,
    slot: string,
    added: readonly string[],
    sums: ReadonlyMap<string, PageSum | undefined>,
    partMaxBytes: number,
    meter: CapacityMeter,
  ): Promise<void> {
    const prefix = valuePageListPartPrefix(slot);
    const former = await this.get(valuePageListKey(datasetCode, slot), meter, true);
    const { items } = await this.covering(datasetCode, prefix, '', '\u{10ffff}', meter);
    const started = items.map((item) => readListPart(item, prefix));
    const all = new Map<string, PageEntry>();
    for (const lowest of ['', ...((former?.pages as string[] | undefined) ?? []), ...added])
      all.set(lowest, { lowest });
    for (const part of started) for (const entry of part.entries) all.set(entry.lowest, entry);
    const entries = [...all.values()].sort((a, b) => compareCodePoints(a.lowest, b.lowest));
    const cuts = started.map((part) => part.first);
    await this.writeListParts(
      datasetCode,
      slot,
      cutListParts(changedEntries(entries, [], sums) ?? entries, cuts, partMaxBytes),
      meter,
    );
    if (former) {
      const result = await this.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: valuePageListKey(datasetCode, slot),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addWrite(result.ConsumedCapacity);
    }
  }

  /** Write list parts (ascending, each listing its own first key first) from the highest down. */
  private async writeListParts(
    datasetCode: string,
    slot: string,
    parts: readonly (readonly PageEntry[])[],
    meter: CapacityMeter,
  ): Promise<void> {
    const prefix = valuePageListPartPrefix(slot);
    for (let i = parts.length - 1; i >= 0; i--) {
      const entries = parts[i] as readonly PageEntry[];
      const sums = encodeSums(entries);
      const result = await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            [RecordAttr.partitionKey]: datasetMetaPartition(datasetCode),
            [RecordAttr.sortKey]: `${prefix}${(entries[0] as PageEntry).lowest}`,
            lowests: JSON.stringify(entries.map((entry) => entry.lowest)),
            ...(sums === undefined ? {} : { sums }),
          },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addWrite(result.ConsumedCapacity);
    }
  }

  /**
   * The items under `prefix` whose keys may cover [lower, upper]: from the one at or below `upper` down to the
   * first at or below `lower`, ascending, read consistently; `reached` says whether that first one exists. With
   * `firstCallOnly`, only the highest few (one call); `exhausted` says there are no more below them.
   */
  private async covering(
    datasetCode: string,
    prefix: string,
    lower: string,
    upper: string,
    meter: CapacityMeter,
    firstCallOnly = false,
  ): Promise<{ items: Record<string, unknown>[]; reached: boolean; exhausted: boolean }> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    // Newest first from `upper`, a few items per call, until one starts at or below `lower`.
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
          ExpressionAttributeValues: {
            ':pk': datasetMetaPartition(datasetCode),
            ':from': prefix,
            ':to': prefix + upper,
          },
          ScanIndexForward: false,
          ConsistentRead: true,
          Limit: items.length === 0 ? 4 : 16,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) {
        items.push(item);
        const lowest = (item[RecordAttr.sortKey] as string).slice(prefix.length);
        if (compareCodePoints(lowest, lower) <= 0) return { items: items.reverse(), reached: true, exhausted: false };
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey && !firstCallOnly);
    return { items: items.reverse(), reached: false, exhausted: startKey === undefined };
  }

  /** Pages by their lowest keys, read consistently; a page never written is absent from the map. */
  async readPages(
    datasetCode: string,
    slot: string,
    lowests: readonly string[],
    meter: CapacityMeter,
  ): Promise<Map<string, ValuePage>> {
    const prefix = valuePagePrefix(slot);
    const found = new Map<string, ValuePage>();
    const keys = lowests.map((lowest) => valuePageKey(datasetCode, slot, lowest));
    await getInBatches(this.client, this.table, keys, { ConsistentRead: true }, meter, (items) => {
      for (const item of items) {
        const page = readPage(item, prefix);
        found.set(page.lowest, page);
      }
    });
    return found;
  }

  /**
   * Write a page if it is still as it was read (`readThrough`, or absent when undefined); false when another
   * writer changed it first.
   */
  async putPage(
    datasetCode: string,
    slot: string,
    page: ValuePage,
    readThrough: string | undefined,
    meter: CapacityMeter,
  ): Promise<boolean> {
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...valuePageKey(datasetCode, slot, page.lowest),
            through: page.through,
            counts: JSON.stringify(page.counts),
            ...(page.splitAt === undefined ? {} : { splitAt: JSON.stringify(page.splitAt) }),
          },
          ConditionExpression: readThrough === undefined ? 'attribute_not_exists(#sk)' : '#through = :through',
          ExpressionAttributeNames:
            readThrough === undefined ? { '#sk': RecordAttr.sortKey } : { '#through': 'through' },
          ...(readThrough === undefined ? {} : { ExpressionAttributeValues: { ':through': readThrough } }),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result !== undefined;
  }

  private async get(
    key: Record<string, string>,
    meter: CapacityMeter,
    consistent: boolean,
  ): Promise<Record<string, unknown> | undefined> {
    const result = await this.client.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: consistent, ReturnConsumedCapacity: 'TOTAL' }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Item;
  }
}

/** The bytes a page's counts take in its item, which decides when it splits. */
export function pageBytes(counts: readonly [string, number][]): number {
  return Buffer.byteLength(JSON.stringify(counts));
}

function readHead(item: Record<string, unknown>): ValueHead {
  return {
    through: item.through as string,
    ...(typeof item.foldUntil === 'number' ? { foldUntil: item.foldUntil } : {}),
  };
}

function readPage(item: Record<string, unknown>, prefix: string): ValuePage {
  return {
    lowest: (item[RecordAttr.sortKey] as string).slice(prefix.length),
    through: item.through as string,
    counts: JSON.parse(item.counts as string) as [string, number][],
    ...(typeof item.splitAt === 'string' ? { splitAt: JSON.parse(item.splitAt) as string[] } : {}),
  };
}

/** One part of a page list: the entries it lists, its own first key first. */
interface ListPart {
  first: string;
  entries: PageEntry[];
}

/**
 * A part's sums, beside its `lowests` (one JSON array of keys, as parts without sums have): the positions they are
 * true at, each once (`t`), and per entry its sum and the index of its position, or 0 for none (`s`).
 */
interface EncodedSums {
  t: string[];
  s: ([number, number] | 0)[];
}

function encodeSums(entries: readonly PageEntry[]): string | undefined {
  if (entries.every((entry) => entry.sum === undefined)) return undefined;
  const positions = new Map<string, number>();
  const s = entries.map((entry): [number, number] | 0 => {
    if (!entry.sum) return 0;
    let index = positions.get(entry.sum.through);
    if (index === undefined) {
      index = positions.size;
      positions.set(entry.sum.through, index);
    }
    return [entry.sum.sum, index];
  });
  return JSON.stringify({ t: [...positions.keys()], s } satisfies EncodedSums);
}

function readListPart(item: Record<string, unknown>, prefix: string): ListPart {
  const lowests = JSON.parse(item.lowests as string) as string[];
  const sums = typeof item.sums === 'string' ? (JSON.parse(item.sums) as EncodedSums) : undefined;
  return {
    first: (item[RecordAttr.sortKey] as string).slice(prefix.length),
    entries: lowests.map((lowest, i) => {
      const sum = sums?.s[i];
      return sum ? { lowest, sum: { sum: sum[0], through: sums?.t[sum[1]] as string } } : { lowest };
    }),
  };
}

/** The entries a part lists from its first up to the next part's first (a part split leaves more until trimmed). */
function partRange(part: ListPart, next: string | undefined): PageEntry[] {
  return part.entries.filter((entry) => listedIn(entry.lowest, part.first, next));
}

/** Whether a key belongs in the part from `first` up to `next` (the last part when undefined). */
function listedIn(lowest: string, first: string, next: string | undefined): boolean {
  return compareCodePoints(lowest, first) >= 0 && (next === undefined || compareCodePoints(lowest, next) < 0);
}

/**
 * Entries (ascending) with `added` keys (without sums) and `sums` given or taken away, ascending; undefined when
 * nothing changes.
 */
function changedEntries(
  entries: readonly PageEntry[],
  added: readonly string[],
  sums: ReadonlyMap<string, PageSum | undefined>,
): PageEntry[] | undefined {
  const byLowest = new Map(entries.map((entry) => [entry.lowest, entry]));
  let changed = false;
  for (const lowest of added) {
    if (byLowest.has(lowest)) continue;
    byLowest.set(lowest, { lowest });
    changed = true;
  }
  for (const [lowest, sum] of sums) {
    const entry = byLowest.get(lowest);
    if (!entry || (entry.sum?.sum === sum?.sum && entry.sum?.through === sum?.through)) continue;
    byLowest.set(lowest, sum ? { lowest, sum } : { lowest });
    changed = true;
  }
  return changed ? [...byLowest.values()].sort((a, b) => compareCodePoints(a.lowest, b.lowest)) : undefined;
}

/**
 * The bytes an entry adds to its part's item (`lowests` and `sums`), its sum's position counted as if no other
 * entry shared it, so that a part never passes what it is cut at.
 */
function entryBytes(entry: PageEntry): number {
  const key = Buffer.byteLength(JSON.stringify(entry.lowest)) + 1;
  return entry.sum ? key + String(entry.sum.sum).length + 6 + entry.sum.through.length + 3 : key + 2;
}

/**
 * Entries (ascending) cut into list parts: at every key of `cuts` that is listed, and wherever a part would pass
 * `partMaxBytes`, into parts of about half that.
 */
function cutListParts(entries: readonly PageEntry[], cuts: readonly string[], partMaxBytes: number): PageEntry[][] {
  const forced = new Set(cuts);
  const whole = entries.reduce((bytes, entry) => bytes + entryBytes(entry), 2) > partMaxBytes;
  const parts: PageEntry[][] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entryBytes(entry);
    const current = parts.at(-1);
    if (!current || forced.has(entry.lowest) || (whole && bytes + size > partMaxBytes / 2)) {
      parts.push([entry]);
      bytes = size + 1;
    } else {
      current.push(entry);
      bytes += size;
    }
  }
  return parts;
}
