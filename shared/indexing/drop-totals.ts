/**
 * The last work of a drop (docs/totals-and-changes.md, "How a dropped index's totals go"): the per-value totals its
 * index kept (batches' values in its slot, count pages, page list, head: storage/slot-totals-removal.ts) are removed,
 * once every segment has removed the index's keys from the records and before the registry forgets the index.
 *
 * Nothing reads or writes them by then: lists stopped using the index when it was dropped, writes stopped keeping its
 * totals at the same time (a dropped index is no longer `totalled`), and the job scans only a settle window after
 * writes stopped keeping its keys, so no function serving a configuration that still counted it is running. The
 * slot key names the build alone, so no other index, and no later build of the same field, reads these items.
 *
 * The deletes are paced by the job's write throttle (write-throttle.ts), a batch of 25 at a time, and stop once the
 * step's time is up (after at least one batch): the registry keeps the dropped index with its job until everything
 * is gone, so the next run of the step finds what is left and goes on, and a run that dies part-way leaves only
 * items the next one finds.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { BATCH_WRITE_SIZE } from '../storage/batch-items';
import { countSlotKey, indexSlot } from '../storage/index-attributes';
import type { SlotTotalsRemoval } from '../storage/slot-totals-removal';
import type { JobDefinition } from './job-definition';
import { isThrottling, type WriteThrottle } from './write-throttle';

/** Sort keys read at once (a few Query pages of keys only), then deleted a batch at a time. */
const KEYS_PER_READ = 4 * BATCH_WRITE_SIZE;

export interface DropTotalsContext {
  removal: SlotTotalsRemoval;
  throttle: WriteThrottle;
  meter: CapacityMeter;
  /** When to stop (ms of `now`), once at least one batch is deleted. */
  deadline: number;
  now: () => number;
}

/** What a turn removed, and whether every dropped index of the job has nothing left. */
export interface DropTotalsTurn {
  done: boolean;
  removed: number;
}

/** The count slots (`countSlotKey`) of every index the job drops, per dataset. */
export function droppedSlots(definition: JobDefinition): { datasetCode: string; slot: string }[] {
  return Object.entries(definition.datasets).flatMap(([datasetCode, job]) =>
    job.drops.map((drop) => ({ datasetCode, slot: countSlotKey(indexSlot(drop)) })),
  );
}

/** Remove the totals of the job's dropped indexes until they are gone or the turn's time is up. */
export async function removeDroppedTotals(
  definition: JobDefinition,
  context: DropTotalsContext,
): Promise<DropTotalsTurn> {
  let removed = 0;
  for (const { datasetCode, slot } of droppedSlots(definition)) {
    for (;;) {
      const keys = await context.removal.remaining(datasetCode, slot, KEYS_PER_READ, context.meter);
      if (keys.length === 0) break;
      for (let at = 0; at < keys.length; at += BATCH_WRITE_SIZE) {
        const batch = keys.slice(at, at + BATCH_WRITE_SIZE);
        await deleteBatch(datasetCode, batch, context);
        removed += batch.length;
        if (context.now() >= context.deadline) {
          const left = at + BATCH_WRITE_SIZE < keys.length || (await hasMore(definition, context));
          return { done: !left, removed };
        }
      }
    }
  }
  return { done: true, removed };
}

async function deleteBatch(datasetCode: string, batch: readonly string[], context: DropTotalsContext): Promise<void> {
  for (;;) {
    for (let i = 0; i < batch.length; i++) await context.throttle.take();
    try {
      await context.removal.remove(datasetCode, batch, context.meter);
      context.throttle.succeeded();
      return;
    } catch (error) {
      if (!isThrottling(error)) throw error;
      await context.throttle.backOff();
    }
  }
}

async function hasMore(definition: JobDefinition, context: DropTotalsContext): Promise<boolean> {
  for (const { datasetCode, slot } of droppedSlots(definition)) {
    if ((await context.removal.remaining(datasetCode, slot, 1, context.meter)).length > 0) return true;
  }
  return false;
}
