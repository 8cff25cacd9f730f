/**
 * The "did you mean" of a message about a name the caller got wrong (docs/interface.md §2: a message the caller can act
 * on): the closest of the names it may use, when it is near enough to be a slip — letters swapped, missing, extra
 * or changed, case ignored. The caller of these functions passes only names the caller of the API may see, so a
 * suggestion never reveals one it may not (docs/interface.md §6: a hidden field does not exist for it).
 */

/** Longer names are not compared: a slip is short, and the comparison costs the product of the lengths. */
const MAX_NAME_LENGTH = 100;

/** How far a name may be from a candidate and still be a slip of it: a third of the longer one, at least 1. */
function tolerance(a: string, b: string): number {
  return Math.max(1, Math.floor(Math.max(a.length, b.length) / 3));
}

/** Edits between `a` and `b` (insert, delete, change, swap two neighbours), or `limit + 1` once it exceeds `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] as number) + 1);
      }
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] as number;
}

/** The candidate nearest to `name` within the tolerance; the first one listed wins a tie. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return undefined;
  const wanted = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const limit = tolerance(wanted, candidate);
    const d = distance(wanted, candidate.toLowerCase(), limit);
    if (d <= limit && (!best || d < best.distance)) best = { name: candidate, distance: d };
  }
  return best?.name;
}

/** `; did you mean 'x'?` to end a message with, or nothing when no candidate is near. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const closest = closestName(name, candidates);
  return closest === undefined ? '' : `; did you mean '${closest}'?`;
}
