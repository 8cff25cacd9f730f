/**
 * changes: the pull feed (docs/interface.md §18). `paramMap` `{after?, limit?}` answers `{events, cursor, hasMore}`:
 * the events of every dataset the caller's grants let it read (or of the one dataset it names), oldest first,
 * each narrowed as get-one would narrow the record for this caller (change-events.ts).
 *
 * The feed reads the change log's datasets in the order its events were written (their positions), merged, and
 * never past `now − settle`: until then an event of an earlier position may still be being written
 * (storage/event-store.ts), after it none can be, so a caller that follows the cursor sees every event once. The
 * cursor is the position the page ended at (or the settled horizon when it read everything there was); it stays
 * valid while its events are kept (`changeRetentionDays`), an older or a malformed one is 1001.
 */
import type { ChangeEvent, ChangesPage } from '../../packages/client/src/change-events';
import { readableGrant } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import { InternalError, InvalidParameterError } from '../contract/errors';
import type { Operation } from '../operation/operation';
import { readParamMap } from '../operation/param-map';
import { firstPositionAt, lastPositionAt, positionTime, type StoredChange } from '../storage/event-store';
import { eventFor } from './change-events';

export const DEFAULT_FEED_LIMIT = 100;
export const MAX_FEED_LIMIT = 500;
/** Changes one request reads at most, visible or not: past it the page ends early (`hasMore`) with its cursor. */
export const MAX_CHANGES_SCANNED = 2_000;
/** Datasets read at once. */
const DATASETS_IN_PARALLEL = 8;

const CURSOR_VERSION = '1';

/** The cursor of a position: opaque to callers. */
export function cursorOf(position: string): string {
  return Buffer.from(`${CURSOR_VERSION}:${position}`).toString('base64url');
}

/** The position a cursor holds; 1001 when it is not one this service gave. */
export function positionOfCursor(cursor: unknown): string {
  const text = typeof cursor === 'string' ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [version, position] = text.split(':');
  if (version !== CURSOR_VERSION || position === undefined || positionTime(position) === undefined) {
    throw new InvalidParameterError(
      'paramMap.after must be a cursor an earlier page of the feed answered; start without after to read from the oldest kept event',
    );
  }
  return position;
}

function readLimit(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_FEED_LIMIT;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_FEED_LIMIT) {
    throw new InvalidParameterError(`paramMap.limit must be an integer from 1 to ${MAX_FEED_LIMIT}`);
  }
  return value;
}

interface Reader {
  dataset: Dataset;
  grant: GrantConfig;
}

export const changesOperation: Operation = {
  name: 'changes',
  readsBesideAdmission: true,
  async run(context, body) {
    const params = readParamMap(body, true);
    for (const key of Object.keys(params)) {
      if (key !== 'after' && key !== 'limit') {
        throw new InvalidParameterError(`paramMap.${key} is not a parameter of the feed: send after and limit`);
      }
    }
    const limit = readLimit(params.limit);
    const changeLog = context.ports.changeLog;
    if (!changeLog) throw new InternalError('the change log is not configured (EVENTS_TABLE)');
    const { catalog, caller } = context;
    const now = context.now();
    const oldest = now - catalog.changeRetentionDays * 86_400_000;
    let after: string | undefined;
    if (params.after !== undefined && params.after !== null) {
      after = positionOfCursor(params.after);
      if ((positionTime(after) ?? 0) < oldest) {
        throw new InvalidParameterError(
          `the cursor has expired: events are kept ${catalog.changeRetentionDays} days; start again without after`,
        );
      }
    }
    // One dataset when the request names it (access checked its grant), else every dataset the caller may read.
    const readers: Reader[] = [];
    if (context.dataset && context.grant) readers.push({ dataset: context.dataset, grant: context.grant });
    else {
      for (const dataset of catalog.allDatasets()) {
        const grant = readableGrant(caller, dataset.datasetCode);
        if (grant) readers.push({ dataset, grant });
      }
    }
    const range = { from: firstPositionAt(oldest), through: lastPositionAt(now - changeLog.settleMs) };
    const capacity = context.telemetry.capacity;
    const events: ChangeEvent[] = [];
    let cursor = after;
    let scanned = 0;
    for (;;) {
      const reads = [];
      for (let start = 0; start < readers.length; start += DATASETS_IN_PARALLEL) {
        reads.push(
          ...(await Promise.all(
            readers.slice(start, start + DATASETS_IN_PARALLEL).map(async (reader) => ({
              reader,
              read: await changeLog.read(reader.dataset.datasetCode, { after: cursor, ...range }, limit, capacity),
            })),
          )),
        );
      }
      // A dataset that has more than it answered bounds what can be taken from the others in this round.
      const frontier = reads
        .filter(({ read }) => read.more)
        .map(({ read }) => read.changes.at(-1)?.position ?? '')
        .reduce<string | undefined>(
          (least, position) => (least === undefined || position < least ? position : least),
          undefined,
        );
      const merged: { change: StoredChange; reader: Reader }[] = reads
        .flatMap(({ reader, read }) => read.changes.map((change) => ({ change, reader })))
        .filter(({ change }) => frontier === undefined || change.position <= frontier)
        .sort((a, b) => (a.change.position < b.change.position ? -1 : 1));
      for (const [index, { change, reader }] of merged.entries()) {
        cursor = change.position;
        scanned += 1;
        const event = eventFor(change, reader.dataset, reader.grant);
        if (event) events.push(event);
        if (events.length === limit || scanned >= MAX_CHANGES_SCANNED) {
          const hasMore = index < merged.length - 1 || frontier !== undefined;
          return page(events, cursor, hasMore);
        }
      }
      // Everything up to the settled horizon is read: the next page starts there.
      if (frontier === undefined) return page(events, after && after > range.through ? after : range.through, false);
    }
  },
};

function page(events: ChangeEvent[], position: string, hasMore: boolean): ChangesPage {
  return { events, cursor: cursorOf(position), hasMore };
}
