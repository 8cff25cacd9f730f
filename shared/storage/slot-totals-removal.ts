/**
 * The removal of the per-value totals of an index that was dropped (docs/totals-and-changes.md, "What the store
 * keeps"): every item `value-count-store.ts` keeps under the index's count slot (`countSlotKey`) in the dataset's meta
 * partition, that is the batches' values in the slot (`change-slot#<slot>#…`, which only the slot's own totals read;
 * the claims themselves are every index's and go by change-compaction.ts), its count pages (`value-page#<slot>#…`),
 * the parts of its page list (`value-list#<slot>#…`), the former single list (`value-pages#<slot>`) and its head
 * (`value-head#<slot>`).
 *
 * A slot key names one build (the slot's attribute, the build's tag, the field), and a build's number is never used
 * again, so these items are read by no other index, and an index made later for the same field counts under a slot
 * of its own, from a clean start.
 *
 * Removal is found again from the store each time (a Query of the slot's prefixes), so a removal cut short is
 * finished by the next, and one run twice deletes nothing the second time. The head goes last: a slot that still has
 * a head still has something to remove.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import { deleteMetaItems, metaSortKeys } from './batch-items';
import {
  CHANGE_SLOT_PREFIX,
  valueCountHeadKey,
  valuePageListKey,
  valuePageListPartPrefix,
  valuePagePrefix,
} from './item-keys';
import { RecordAttr } from './table-definitions';

export class SlotTotalsRemoval {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Up to `limit` sort keys of the slot's items still stored, in the order they are removed: batches' values,
   * count pages, list parts, then the former list and the head. Empty once the slot has none left.
   */
  async remaining(datasetCode: string, slot: string, limit: number, meter: CapacityMeter): Promise<string[]> {
    const found: string[] = [];
    for (const prefix of [`${CHANGE_SLOT_PREFIX}${slot}#`, valuePagePrefix(slot), valuePageListPartPrefix(slot)]) {
      if (found.length >= limit) return found;
      found.push(...(await this.withPrefix(datasetCode, prefix, limit - found.length, meter)));
    }
    for (const key of [valuePageListKey(datasetCode, slot), valueCountHeadKey(datasetCode, slot)]) {
      if (found.length >= limit) return found;
      const result = await this.client.send(
        new GetCommand({
          TableName: this.table,
          Key: key,
          ConsistentRead: true,
          ProjectionExpression: '#sk',
          ExpressionAttributeNames: { '#sk': RecordAttr.sortKey },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      meter.addRead(result.ConsumedCapacity);
      if (result.Item) found.push(key[RecordAttr.sortKey] as string);
    }
    return found;
  }

  /** Delete the items of these sort keys (found by `remaining`); deleting one already gone is harmless. */
  async remove(datasetCode: string, sortKeys: readonly string[], meter: CapacityMeter): Promise<void> {
    await deleteMetaItems(this.client, this.table, datasetCode, sortKeys, meter);
  }

  private withPrefix(datasetCode: string, prefix: string, limit: number, meter: CapacityMeter) {
    return metaSortKeys(this.client, this.table, datasetCode, { prefix }, limit, meter, true);
  }
}
