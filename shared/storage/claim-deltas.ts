/**
 * What claims add to a slot's count keys (value-counter.ts, point 3): +1 for a create's key, -1/+1 for an update's
 * keys before and after, +1 per written record of a batch: from the counts per key the claim carries for a slot of
 * few distinct keys (batch-counts.ts) when all its records count, else from its values read from the batch's item
 * for the slot.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import type { StoredClaim } from './change-items';
import type { DatasetBookkeeping } from './dataset-bookkeeping';

/** How many records' worth of counting the claims hold. */
export function weight(claims: readonly StoredClaim[]): number {
  return claims.reduce(
    (sum, claim) => sum + (claim.kind === 'batch' ? (claim.landed?.size ?? claim.ids.length) : 1),
    0,
  );
}

export interface Delta {
  claim: StoredClaim;
  key: string;
  delta: number;
}

/** What each claim adds to one slot's counts, key by key. */
export function claimDeltas(
  claims: readonly StoredClaim[],
  slot: string,
  batchValues: ReadonlyMap<string, ReadonlyMap<string, string>>,
): Delta[] {
  const deltas: Delta[] = [];
  for (const claim of claims) {
    if (claim.kind === 'create') {
      const key = claim.values[slot];
      if (key !== undefined) deltas.push({ claim, key, delta: 1 });
    } else if (claim.kind === 'update') {
      const before = claim.before[slot];
      const after = claim.after[slot];
      if (before === after) continue;
      if (before !== undefined) deltas.push({ claim, key: before, delta: -1 });
      if (after !== undefined) deltas.push({ claim, key: after, delta: 1 });
    } else if (!claim.landed && claim.counts?.[slot]) {
      for (const [key, delta] of claim.counts[slot]) deltas.push({ claim, key, delta });
    } else {
      const values = batchValues.get(claim.position);
      if (!values) continue;
      const added = new Map<string, number>();
      for (const [id, key] of values) {
        if (claim.landed && !claim.landed.has(id)) continue;
        added.set(key, (added.get(key) ?? 0) + 1);
      }
      for (const [key, delta] of added) deltas.push({ claim, key, delta });
    }
  }
  return deltas;
}

/** Batches needing their values item read among more than this are read a Get each, not by a Query over all. */
const FEW_BATCHES = 8;

/**
 * The values in `slot` of the batches among `claims` that `claimDeltas` needs them for (a batch without counts for
 * the slot, or only some of whose records were written), by batch position: none read when every batch carries its
 * counts, a Get each when only a few among many need them, else one Query over the batches' items after `after` (up
 * to `through`, inclusive, when given).
 */
export async function readBatchValues(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  slot: string,
  after: string,
  claims: readonly StoredClaim[],
  meter: CapacityMeter,
  consistent: boolean,
  through?: string,
): Promise<Map<string, ReadonlyMap<string, string>>> {
  const batches = new Map<string, string[]>();
  let carried = 0;
  for (const claim of claims) {
    if (claim.kind !== 'batch') continue;
    if (!claim.landed && claim.counts?.[slot]) carried += 1;
    else batches.set(claim.position, claim.ids);
  }
  if (batches.size === 0) return new Map();
  if (batches.size <= FEW_BATCHES && carried > 0) {
    return bookkeeping.changes.slotValuesOf(datasetCode, slot, batches, meter, consistent);
  }
  return bookkeeping.changes.slotValuesAfter(
    datasetCode,
    slot,
    after || undefined,
    (position) => batches.get(position),
    meter,
    consistent,
    through,
  );
}
