/**
 * A dataset's bookkeeping items, kept in the records table beside (never among) its records: the record
 * counter's checkpoint and the count entries of bulk groups (the `CountStore` methods, `record-counter.ts`), the
 * change items writes claim (`changes`, `change-items.ts`), and per-value totals (`values`, `value-counter.ts`),
 * the removal of change items no reader needs (`compaction`, `change-compaction.ts`) and of a dropped index's
 * totals (`droppedTotals`, `slot-totals-removal.ts`), with the reads of records
 * their checks need. The first call any read makes is a method of the port itself
 * (`readValueHead`, the counter's), so that wrappers of the port's methods (reads beside the quota admission)
 * see it before anything else is read.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { getInBatches } from './batch-items';
import { ChangeCompaction } from './change-compaction';
import { ChangeItems } from './change-items';
import { CountStore } from './count-store';
import { datasetPartitionKey, recordKey } from './item-keys';
import { revisionOf } from './record-revisions';
import { SlotTotalsRemoval } from './slot-totals-removal';
import { RecordAttr } from './table-definitions';
import { type SlotHeadRead, ValueCountStore } from './value-count-store';

/** Where a record's latest write stands: the position of the change item it claimed, and its revision. */
export interface RecordPosition {
  position?: string;
  revision: number;
}

export class DatasetBookkeeping extends CountStore {
  /** The change items of writes. */
  readonly changes: ChangeItems;
  /** Per-value totals of index slots. */
  readonly values: ValueCountStore;
  /** The removal of change items no reader needs any more. */
  readonly compaction: ChangeCompaction;
  /** The removal of a dropped index's per-value totals. */
  readonly droppedTotals: SlotTotalsRemoval;

  constructor(client: DynamoDBDocumentClient, table: string) {
    super(client, table);
    this.changes = new ChangeItems(client, table);
    this.values = new ValueCountStore(client, table);
    this.compaction = new ChangeCompaction(client, table);
    this.droppedTotals = new SlotTotalsRemoval(client, table);
  }

  /** A slot's head, the dataset's checked position, when a fold last began (`ValueCountStore.readHead`). */
  readValueHead(datasetCode: string, slot: string, meter: CapacityMeter): Promise<SlotHeadRead> {
    return this.values.readHead(datasetCode, slot, meter);
  }

  /** Where records' latest writes stand, read consistently; absent ids are not in the map. */
  async recordPositions(
    datasetCode: string,
    ids: readonly string[],
    meter: CapacityMeter,
  ): Promise<Map<string, RecordPosition>> {
    const found = new Map<string, RecordPosition>();
    const read = {
      ConsistentRead: true,
      ProjectionExpression: '#sk, #cpos, #rev',
      ExpressionAttributeNames: {
        '#sk': RecordAttr.sortKey,
        '#cpos': RecordAttr.changePosition,
        '#rev': RecordAttr.revision,
      },
    };
    const keys = ids.map((id) => recordKey(datasetCode, id));
    await getInBatches(this.client, this.table, keys, read, meter, (items) => {
      for (const item of items) {
        const position = item[RecordAttr.changePosition];
        found.set(item[RecordAttr.sortKey] as string, {
          ...(typeof position === 'string' ? { position } : {}),
          revision: revisionOf(item),
        });
      }
    });
    return found;
  }

  /** The dataset's oldest record (by id): its id, bulk group and change position; read consistently. */
  async oldestRecord(
    datasetCode: string,
    meter: CapacityMeter,
  ): Promise<{ id: string; bulkGroup?: string; position?: string } | undefined> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk',
        ProjectionExpression: '#sk, #bk, #cpos',
        ExpressionAttributeNames: {
          '#pk': RecordAttr.partitionKey,
          '#sk': RecordAttr.sortKey,
          '#bk': RecordAttr.bulkGroup,
          '#cpos': RecordAttr.changePosition,
        },
        ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode) },
        ConsistentRead: true,
        Limit: 1,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    const item = result.Items?.[0];
    if (!item) return undefined;
    const bulkGroup = item[RecordAttr.bulkGroup];
    const position = item[RecordAttr.changePosition];
    return {
      id: item[RecordAttr.sortKey] as string,
      ...(typeof bulkGroup === 'string' ? { bulkGroup } : {}),
      ...(typeof position === 'string' ? { position } : {}),
    };
  }
}
