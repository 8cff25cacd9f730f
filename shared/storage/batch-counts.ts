/**
 * A batch claim's counts per key, carried in the claim itself for the index slots where a batch's records take few
 * distinct keys (an enum, a flag, a field most records leave empty): a total or a fold that meets the batch adds
 * these counts and reads none of the batch's per-record values in the slot (`change-slot#<slot>#<position>`, 1 KB or
 * more per 1,000 records, kept for every slot all the same: a batch only some of whose records were written counts
 * the written ones from them). A slot of many distinct keys per batch (an amount, a customer) is left out, so the
 * claim, which every total of every slot reads, stays small.
 */

/** Per index slot (`countSlotKey`), the number of the batch's records per count key. */
export type BatchCounts = Readonly<Record<string, ReadonlyMap<string, number>>>;

/** A slot's counts are carried when the batch's records take at most this many distinct keys in it... */
export const INLINE_SLOT_KEYS = 16;
/** ...and they take at most this many characters (as stored: JSON text)... */
export const INLINE_SLOT_CHARS = 320;
/** ...and while the claim's counts of all its slots take at most this many. */
export const INLINE_CLAIM_CHARS = 640;

/**
 * The `c` attribute of a batch claim: the counts per key of the slots that fit (in the slots' order), or undefined
 * when none does.
 */
export function inlineCountsAttribute(values: Readonly<Record<string, readonly string[]>>): string | undefined {
  const carried: Record<string, [string, number][]> = {};
  let chars = 0;
  for (const [slot, keys] of Object.entries(values)) {
    const counts = new Map<string, number>();
    for (const key of keys) {
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (counts.size > INLINE_SLOT_KEYS) break;
    }
    if (counts.size > INLINE_SLOT_KEYS) continue;
    const entries = [...counts];
    const size = JSON.stringify(slot).length + JSON.stringify(entries).length + 2;
    if (size > INLINE_SLOT_CHARS || chars + size > INLINE_CLAIM_CHARS) continue;
    carried[slot] = entries;
    chars += size;
  }
  return chars === 0 ? undefined : JSON.stringify(carried);
}

/** The counts a claim's `c` attribute carries (none for a claim without it, or one written before it existed). */
export function readInlineCounts(attribute: unknown): BatchCounts | undefined {
  if (typeof attribute !== 'string') return undefined;
  const parsed = JSON.parse(attribute) as Record<string, [string, number][]>;
  const counts: Record<string, ReadonlyMap<string, number>> = {};
  for (const [slot, entries] of Object.entries(parsed)) counts[slot] = new Map(entries);
  return counts;
}
