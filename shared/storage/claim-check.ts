/**
 * The checked position (value-counter.ts, "Ingredients"): settled claims whose writes did not happen are withdrawn,
 * and the records a partly written batch did write are named, before totals and folds count them.
 */
import type { CapacityMeter } from '../observability/capacity-meter';
import { compareCodePoints } from '../records/value-encoding';
import type { StoredClaim } from './change-items';
import type { DatasetBookkeeping } from './dataset-bookkeeping';

/** What a check found: claims withdrawn, and batches of which only some records were written. */
export interface CheckOutcome {
  withdrawn: ReadonlySet<string>;
  landed: ReadonlyMap<string, ReadonlySet<string>>;
}

export function applyCheck(claims: readonly StoredClaim[], outcome: CheckOutcome): StoredClaim[] {
  return claims
    .filter((claim) => !outcome.withdrawn.has(claim.position))
    .map((claim) => {
      const landed = outcome.landed.get(claim.position);
      return claim.kind === 'batch' && landed ? { ...claim, landed } : claim;
    });
}

/**
 * Check the claims positioned after `from` up to `through` (settled: no write of theirs can still land),
 * withdraw those whose writes did not happen, say which records of partly written batches exist, and move
 * the dataset's checked position to `through`.
 */
export async function checkClaims(
  bookkeeping: DatasetBookkeeping,
  datasetCode: string,
  from: string,
  through: string,
  meter: CapacityMeter,
): Promise<CheckOutcome> {
  const claims = await bookkeeping.changes.after(datasetCode, from || undefined, meter, true);
  const due = claims.filter((claim) => compareCodePoints(claim.position, through) <= 0);
  const replaced = new Set(
    claims.flatMap((claim) => (claim.kind === 'update' && claim.previous ? [claim.previous] : [])),
  );
  const entries = new Map(
    (await bookkeeping.entriesAfter(datasetCode, from || undefined, meter)).map((entry) => [entry.key, entry]),
  );
  const withdrawn = new Set<string>();
  const landed = new Map<string, ReadonlySet<string>>();
  const byRecord: Extract<StoredClaim, { kind: 'update' | 'create' }>[] = [];
  for (const claim of due) {
    if (claim.kind === 'create' && claim.id === claim.position) {
      if (!entries.has(claim.id)) withdrawn.add(claim.position);
    } else if (claim.kind === 'batch') {
      if (claim.landed) continue;
      const entry = entries.get(claim.position);
      if (entry && !entry.open && entry.weight === claim.ids.length) continue;
      const group = { entryKey: claim.position, firstId: claim.ids[0] as string, lastId: claim.ids.at(-1) as string };
      const ids = new Set(claim.ids);
      const found = new Set(
        (await bookkeeping.bulkGroupRecordIds(datasetCode, group, meter)).filter((id) => ids.has(id)),
      );
      if (found.size === 0) withdrawn.add(claim.position);
      else if (found.size < claim.ids.length) {
        await bookkeeping.changes.markLanded(datasetCode, claim.position, [...found], meter);
        landed.set(claim.position, found);
      }
      if (entry?.open) {
        await bookkeeping.settleBulkGroup(datasetCode, { ...group, count: found.size, done: false }, meter);
      }
    } else if (claim.kind === 'update' && claim.direct) {
      // It moves no count key: whether it happened changes no total, and custom SQL reads its record again.
    } else if (!replaced.has(claim.position)) {
      byRecord.push(claim);
    }
  }
  if (byRecord.length > 0) {
    const positions = await bookkeeping.recordPositions(
      datasetCode,
      [...new Set(byRecord.map((claim) => claim.id))],
      meter,
    );
    const unsure: typeof byRecord = [];
    for (const claim of byRecord) {
      const record = positions.get(claim.id);
      const revision = claim.kind === 'update' ? (claim.revision ?? 1) : 1;
      if (!record || record.revision < revision) withdrawn.add(claim.position);
      else if (record.position !== claim.position) unsure.push(claim);
    }
    if (unsure.length > 0) {
      // The record moved on: a later write replaced this one if its claim, made before that write and so
      // before the read above, names it.
      const later = await bookkeeping.changes.after(datasetCode, from || undefined, meter, true);
      const named = new Set(
        later.flatMap((claim) => (claim.kind === 'update' && claim.previous ? [claim.previous] : [])),
      );
      for (const claim of unsure) if (!named.has(claim.position)) withdrawn.add(claim.position);
    }
  }
  if (withdrawn.size > 0) await bookkeeping.changes.withdrawAll(datasetCode, [...withdrawn], meter);
  await bookkeeping.values.advanceChecked(datasetCode, through, meter);
  return { withdrawn, landed };
}
