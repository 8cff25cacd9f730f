/**
 * Which ids a create or a batch create writes with. Without an `Idempotency-Key`, a fresh block. With one, the
 * blocks its request remembers (see idempotent-operation.ts): when an earlier attempt failed or stopped, the
 * positions it already wrote are found by one key-range read per block and keep their ids; the others are
 * written with the latest block while the record count's settle window allows it, else with a new block that is
 * remembered before anything is written with it (id-blocks.ts).
 */
import type { DataOperationContext } from '../operation/operation';
import { blockStillWritable, type IdBlock, idInBlock, newIdBlock } from '../storage/id-blocks';

/** How long a write may take when the function's deadline is unknown. */
const DEFAULT_WRITE_MS = 30_000;

export interface IdPlan {
  /** The block the positions not yet written get their ids from. */
  block: IdBlock;
  /** Positions an earlier attempt already wrote, with their ids. */
  written: ReadonlyMap<number, string>;
}

/** The block a request starts with, before anything is read (validation uses it). */
export function initialBlock(context: DataOperationContext): IdBlock {
  return context.attempt?.blocks.at(-1) ?? newIdBlock(context.now());
}

/** The ids of `count` positions, taking an interrupted attempt's writes into account. */
export async function planIds(context: DataOperationContext, count: number, initial: IdBlock): Promise<IdPlan> {
  const attempt = context.attempt;
  if (!attempt) return { block: initial, written: new Map() };
  const now = context.now();
  const written = new Map<number, string>();
  if (attempt.resumed && count > 0) {
    for (const block of attempt.blocks) {
      const existing = await context.ports.recordBatches.existingIds(
        context.dataset.datasetCode,
        idInBlock(block, 0),
        idInBlock(block, count - 1),
        context.telemetry.capacity,
      );
      for (let position = 0; position < count && existing.size > 0; position++) {
        const id = idInBlock(block, position);
        if (!written.has(position) && existing.has(id)) written.set(position, id);
      }
    }
  }
  let block = initial;
  if (written.size < count && !blockStillWritable(block, context.deadline ?? now + DEFAULT_WRITE_MS)) {
    block = newIdBlock(now);
    await attempt.addBlock(block);
  }
  return { block, written };
}
