/**
 * When a dataset's mirror position is older than what the change log still holds (docs/totals-and-changes.md,
 * "A mirror stopped past the retention"). A change is removed once its time + `changeRetentionDays` has passed
 * (events table TTL, `npm start`'s twin of it); a mirror stopped longer than that resumes from a position whose
 * following changes may be gone, so it must copy the dataset again instead of carrying on from what is left.
 *
 * The test is the position's own time, with no read: the position P is expired when
 * `time(P) < now − retention + margin`. Why that is enough: every change after P was logged at a position of a time
 * after P's, and its `occurredAt` (from which its expiry counts) is at most the change log writer's delay before
 * that; the records table's stream keeps a change 24 hours, so that delay is under a day (locally, seconds). Each
 * change after P is therefore kept until `time(P) + retention − 1 day` at least, and neither TTL nor the local twin
 * removes one before its expiry. The margin is that day, or a quarter of the retention when the retention is
 * shorter than four days (a stream stuck longer than that is alarmed on long before).
 *
 * Why not "the oldest change kept is newer than P": TTL removes expired changes in no order and up to two days late,
 * so an older change still present proves nothing about the ones after P, and a quiet dataset has no change at all.
 * A retention lengthened by a new configuration applies to changes logged after it (their expiry was written with
 * them); until the former retention has passed, a mirror stopped longer than the former retention is not detected.
 */
import { positionTime } from '../storage/event-store';

const DAY_MS = 86_400_000;

/** How much earlier than the retention's end a position counts as expired (ms). */
export function retentionMarginMs(retentionDays: number): number {
  return Math.min(DAY_MS, (retentionDays * DAY_MS) / 4);
}

/** Whether the changes after `position` may no longer all be in the change log at `now`. */
export function positionExpired(position: string, now: number, retentionDays: number): boolean {
  const at = positionTime(position);
  // A position that is not one (a state row written by hand) cannot be trusted: copy again.
  if (at === undefined) return true;
  return at < now - retentionDays * DAY_MS + retentionMarginMs(retentionDays);
}

/** Why a dataset is copied again, as `das sql status` and 2001 say it. */
export function expiredReason(position: string, retentionDays: number): string {
  const at = positionTime(position);
  const since = at === undefined ? 'an unreadable position' : new Date(at).toISOString();
  return (
    `the mirror stopped at the change log position of ${since}, and the change log keeps changes ` +
    `${retentionDays} days: the dataset is copied again from the records`
  );
}
