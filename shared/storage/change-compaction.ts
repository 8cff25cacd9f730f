/**
 * Change items are removed once no reader can need them (docs/totals-and-changes.md, "What the store keeps"), so
 * that a dataset's meta partition follows its records and indexes, not its history.
 *
 * Who reads a claim, and until when:
 * - totals, folds and checks (value-counter.ts): the claims after the oldest slot head and after the checked
 *   position; a slot's start from the first position reads the oldest record's creating claim;
 * - an index build's job (indexing/build-totals.ts): the claims after its start position, while it runs;
 * - custom SQL's loaded copies (sql/dataset-cache.ts): the claims after a copy's position, which is never older
 *   than 5 minutes (a copy is loaded afresh past that age).
 *
 * So a pass of the fold beside the writes (changes/value-folds.ts) proposes a horizon: the oldest head and the
 * checked position as that fold read them (only heads of slots whose totals are kept; none while an index of the
 * dataset is being built: then nothing is proposed), and never later than `COMPACTION_LAG_MS` ago (the copies, and
 * a catalog a function may still hold from before a new index was made). A proposal is taken, and the claims at or
 * before it deleted, only by a pass at least `COMPACTION_WAIT_MS` later: a list lasts at most `MAX_INVOCATION_MS`,
 * so any list still reading claims then started after the heads the proposal was made from were in place, and
 * reads only claims after them. The item `changes-compacted` says through which position claims may be gone (written
 * before any is deleted) and the proposal waiting: a slot is never started from the first position when its
 * dataset's oldest record's claim is at or before either (value-counter.ts, `startSlotTotals`).
 *
 * The deletes are idempotent: a pass that dies part-way leaves claims the next one deletes. A batch's values
 * (`change-slot#<slot>#<position>`) go with their claim's position, slot by slot, withdrawn batches' included.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { recordIdTime } from '../records/record-ids';
import { deleteMetaItems, metaSortKeys } from './batch-items';
import { conditionalWrite } from './conditional-write';
import { CHANGE_PREFIX, CHANGE_SLOT_PREFIX, changesCompactedKey } from './item-keys';
import { lastIdAt, MAX_INVOCATION_MS } from './record-counter';

/** Claims younger than this are kept whatever the heads say (custom SQL's copies, a function's cached catalog). */
export const COMPACTION_LAG_MS = 10 * 60_000;
/** A proposal is taken this long after it was made: longer than any list that may have read the heads before it. */
export const COMPACTION_WAIT_MS = MAX_INVOCATION_MS + 1_000;
/** Items one pass deletes at most; what is left goes in the next pass, asked for at once. */
export const COMPACTION_PASS_ITEMS = 5_000;

/** Through which position claims may be gone, and the proposal waiting its turn. */
export interface CompactionMark {
  through: string;
  next?: string;
  nextAt?: number;
}

export interface CompactionRequest {
  datasetCode: string;
  /**
   * The position after which the dataset's totals still read claims (the oldest head and the checked position);
   * `undefined` when it keeps no totals; `null` when nothing may go (an index of the dataset is being built).
   */
  totalsFrom: string | null | undefined;
  now: number;
  meter: CapacityMeter;
  /** `COMPACTION_LAG_MS` unless said. */
  lagMs?: number;
}

export interface CompactionOutcome {
  /** Change items (claims and batches' values) deleted by this pass. */
  deleted: number;
  /** When a pass should run again to delete what is due (ms), or undefined when nothing will be without new work. */
  againAt?: number;
}

export class ChangeCompaction {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The dataset's mark, read consistently (`through: ''` before any pass). */
  async readMark(datasetCode: string, meter: CapacityMeter): Promise<CompactionMark> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.table,
        Key: changesCompactedKey(datasetCode),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Item;
    return {
      through: typeof item?.through === 'string' ? item.through : '',
      ...(typeof item?.next === 'string' ? { next: item.next } : {}),
      ...(typeof item?.nextAt === 'number' ? { nextAt: item.nextAt } : {}),
    };
  }

  /** Say that claims through `through` may be gone (never back). */
  async moveThrough(datasetCode: string, through: string, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: changesCompactedKey(datasetCode),
          UpdateExpression: 'SET #through = :through',
          ConditionExpression: 'attribute_not_exists(#through) OR #through < :through',
          ExpressionAttributeNames: { '#through': 'through' },
          ExpressionAttributeValues: { ':through': through },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /** Propose `next`, made at `at` (ms), unless a later proposal is there already. */
  async propose(datasetCode: string, next: string, at: number, meter: CapacityMeter): Promise<void> {
    await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: changesCompactedKey(datasetCode),
          UpdateExpression: 'SET #next = :next, #nextAt = :at',
          ConditionExpression: 'attribute_not_exists(#next) OR #next < :next',
          ExpressionAttributeNames: { '#next': 'next', '#nextAt': 'nextAt' },
          ExpressionAttributeValues: { ':next': next, ':at': at },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
  }

  /** The position of the dataset's first claim after `after` (or its first), if any. */
  async firstAfter(datasetCode: string, after: string, meter: CapacityMeter): Promise<string | undefined> {
    const keys = await this.sortKeys(datasetCode, `${CHANGE_PREFIX}${after}`, pastPrefix(CHANGE_PREFIX), 2, meter);
    return keys.map((key) => key.slice(CHANGE_PREFIX.length)).find((position) => position > after);
  }

  /**
   * Delete the claims at or before `through`, and every slot's batch values at or before it, at most `limit` items;
   * `more` when some were left.
   */
  async deleteThrough(
    datasetCode: string,
    through: string,
    limit: number,
    meter: CapacityMeter,
  ): Promise<{ deleted: number; more: boolean }> {
    let deleted = 0;
    const claims = await this.sortKeys(datasetCode, CHANGE_PREFIX, `${CHANGE_PREFIX}${through}`, limit, meter);
    await this.delete(datasetCode, claims, meter);
    deleted += claims.length;
    if (deleted >= limit) return { deleted, more: true };
    // Batches' values, one slot after another: the first key after the last slot names the next slot.
    let after = CHANGE_SLOT_PREFIX;
    for (;;) {
      const [first] = await this.sortKeys(datasetCode, after, pastPrefix(CHANGE_SLOT_PREFIX), 1, meter);
      if (first === undefined) return { deleted, more: false };
      const slotPrefix = first.slice(0, first.lastIndexOf('#') + 1);
      const values = await this.sortKeys(datasetCode, slotPrefix, `${slotPrefix}${through}`, limit - deleted, meter);
      await this.delete(datasetCode, values, meter);
      deleted += values.length;
      if (deleted >= limit) return { deleted, more: true };
      after = pastPrefix(slotPrefix);
    }
  }

  private async delete(datasetCode: string, sortKeys: readonly string[], meter: CapacityMeter): Promise<void> {
    await deleteMetaItems(this.client, this.table, datasetCode, sortKeys, meter);
  }

  /** The sort keys of the meta partition's items from `from` to `to` (inclusive), ascending, at most `limit`. */
  private sortKeys(datasetCode: string, from: string, to: string, limit: number, meter: CapacityMeter) {
    return metaSortKeys(this.client, this.table, datasetCode, { from, to }, limit, meter, false);
  }
}

/** A key above every key that starts with `prefix` (which ends in '#'), below any other: '#' raised to '$'. */
function pastPrefix(prefix: string): string {
  return `${prefix.slice(0, -1)}$`;
}

/**
 * One pass: take the proposal waiting when its time has come (the mark first, then the deletes), delete what is due,
 * and propose the next horizon when none waits. Says when a pass should run again: at once when the deletes were
 * cut, when the wait of the proposal it made ends, or when the oldest claim kept is past the lag; a pass that finds a
 * proposal not due yet asks for nothing (the one that made it did), so folds under steady writes add about two a
 * minute.
 */
export async function compactChanges(store: ChangeCompaction, request: CompactionRequest): Promise<CompactionOutcome> {
  const { datasetCode, now, meter } = request;
  const lag = request.lagMs ?? COMPACTION_LAG_MS;
  const mark = await store.readMark(datasetCode, meter);
  let through = mark.through;
  let waiting = mark.next !== undefined && mark.next > through ? mark : undefined;
  if (waiting?.next !== undefined && (waiting.nextAt ?? now) + COMPACTION_WAIT_MS <= now) {
    await store.moveThrough(datasetCode, waiting.next, meter);
    through = waiting.next;
    waiting = undefined;
  }
  const { deleted, more } = through
    ? await store.deleteThrough(datasetCode, through, COMPACTION_PASS_ITEMS, meter)
    : { deleted: 0, more: false };
  if (more) return { deleted, againAt: now + 1_000 };
  // The pass that made the proposal waiting asked for the pass that takes it.
  if (waiting) return { deleted };

  const oldest = await store.firstAfter(datasetCode, through, meter);
  if (oldest === undefined || request.totalsFrom === null) return { deleted };
  const byTime = lastIdAt(now - lag);
  const horizon = request.totalsFrom !== undefined && request.totalsFrom < byTime ? request.totalsFrom : byTime;
  if (oldest <= horizon) {
    await store.propose(datasetCode, horizon, now, meter);
    return { deleted, againAt: now + COMPACTION_WAIT_MS };
  }
  // The oldest claim kept is younger than the lag (a pass then proposes it), or the totals still read it (the
  // folds that move their heads run the next pass).
  const due = recordIdTime(oldest) + lag + 1_000;
  return due > now ? { deleted, againAt: due } : { deleted };
}
