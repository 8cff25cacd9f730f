/**
 * update: a partial update of one record (docs/interface.md §4, §18). The flow: one consistent read of the record
 * (2002 when it is absent or outside the caller's row scope), then the fields that really change; when none does,
 * nothing is written and the record is answered as it is (same revision, no event). Otherwise one conditional
 * write of the changed fields on the revision that was read (and the row scope): when another write came first,
 * the record is read again and the update decided afresh, a bounded number of times, with jitter. Two concurrent
 * updates of different fields therefore both survive, and an update never overwrites a change it did not see.
 *
 * `If-Match: "<revision>"` makes the read revision a precondition: when the record is at another one, nothing is
 * written and the answer is 1001 with HTTP 412 (also when a concurrent write moves it on between read and write).
 *
 * Each write claims its change item first (storage/change-items.ts), with the values before and after of the
 * index slots it changes: per-value totals and custom SQL's loaded copies learn of it there.
 */
import { assertWritable, rowInScope, rowScope, updateScopeCondition, visibleFields } from '../access/permissions';
import { DataNotFoundError, InvalidParameterError, RateLimitedError, RevisionMismatchError } from '../contract/errors';
import { type DataOperationContext, dataContext, type Operation, writeOrigin } from '../operation/operation';
import { readParamMap, readRecordId } from '../operation/param-map';
import {
  effectiveChanges,
  isEmptyChange,
  type RecordChanges,
  type RecordItem,
  validateChanges,
} from '../records/record-codec';
import { formatTimestamp } from '../records/timestamps';
import { slotCountKeys, withDerivedAttributes } from '../storage/index-attributes';
import { revisionOf } from '../storage/record-revisions';
import type { UpdateClaimInput } from '../storage/record-store';
import { RecordAttr } from '../storage/table-definitions';
import { answerRecord } from './record-answer';

/** Reads and conditional writes one update may make before it gives up under contention. */
export const MAX_UPDATE_ROUNDS = 40;
/** The longest pause between two rounds (ms); each pause is random up to a bound that doubles from 2 ms. */
const MAX_BACKOFF_MS = 100;

/** The revisions an `If-Match` header accepts; `undefined` for `*` (any revision of an existing record). */
export function readIfMatch(header: string | undefined): ReadonlySet<number> | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (text === '*') return undefined;
  const revisions = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^\s*(?:W\/)?"?([1-9]\d{0,14})"?\s*$/.exec(part);
    if (!match) {
      throw new InvalidParameterError(
        `If-Match must be a record revision in quotes, as the ETag header gives it (e.g. If-Match: "3"), not '${header.slice(0, 40)}'`,
      );
    }
    revisions.add(Number(match[1]));
  }
  return revisions;
}

export const updateOperation: Operation = {
  name: 'update',
  async run(context, body) {
    const data = dataContext(context);
    const { dataset, grant, caller, ports, telemetry } = data;
    const appCode = caller.application.appCode;
    const params = readParamMap(body);
    const id = readRecordId(params);
    const expected = readIfMatch(context.ifMatch);
    const sent = validateChanges(dataset, params, 'update', visibleFields(grant));
    if (isEmptyChange(sent)) {
      throw new InvalidParameterError('nothing to update: send at least one dataset field besides id');
    }
    assertWritable(grant, sent, appCode, dataset.datasetCode);
    const scope = rowScope(grant, dataset);
    for (let round = 0; round < MAX_UPDATE_ROUNDS; round++) {
      if (round > 0) await pause(round);
      const stored = await ports.records.get(dataset.datasetCode, id, telemetry.capacity);
      // Not found covers a row outside the caller's scope too: its existence is not revealed.
      if (!stored || !rowInScope(scope, stored)) {
        throw new DataNotFoundError(`record '${id}' not found in dataset '${dataset.datasetCode}'`);
      }
      const revision = revisionOf(stored);
      if (expected && !expected.has(revision)) {
        throw new RevisionMismatchError(
          `record '${id}' was changed since revision ${[...expected].join(', ')}: it is at revision ${revision}; read it again and send If-Match: "${revision}"`,
        );
      }
      const changes = effectiveChanges(stored, sent);
      if (isEmptyChange(changes)) return answerRecord(data, stored);
      const written = await writeAtRevision(data, stored, id, changes, revision);
      if (written) return answerRecord(data, written);
    }
    telemetry.detail('updateContention', String(MAX_UPDATE_ROUNDS));
    throw new RateLimitedError(
      `record '${id}' is being changed by other requests right now and this update could not be applied; retry in a second`,
      1,
    );
  },
};

/** One conditional write of the changes on the revision read; `undefined` when another write came first. */
async function writeAtRevision(
  context: DataOperationContext,
  stored: RecordItem,
  id: string,
  changes: RecordChanges,
  revision: number,
): Promise<RecordItem | undefined> {
  const { dataset, grant, caller, ports, telemetry, catalog, now } = context;
  const occurredAt = now();
  const modifiedAt = formatTimestamp(new Date(occurredAt), catalog.timeZone);
  // Index keys and lower-cased shadows change in the same UpdateItem as the fields they derive from.
  const derived = withDerivedAttributes(dataset, id, changes, 'update');
  const condition = updateScopeCondition(
    rowScope(grant, dataset),
    { ...derived.set, gmt_modified: modifiedAt },
    new Set([...Object.keys(changes.set), ...changes.remove, 'gmt_modified']),
    caller.application.appCode,
    dataset.datasetCode,
  );
  return ports.records.updateAtRevision(
    dataset.datasetCode,
    id,
    {
      changes: derived,
      modifiedAt,
      revision,
      origin: writeOrigin(context, occurredAt),
      claim: { ...movedSlots(context, stored, derived, id), now },
    },
    telemetry.capacity,
    condition,
  );
}

/** The index slots an update moves, with their count keys before and after, and the write it replaces. */
function movedSlots(
  context: DataOperationContext,
  stored: RecordItem,
  derived: RecordChanges,
  id: string,
): Omit<UpdateClaimInput, 'now'> {
  const after: RecordItem = { ...stored, ...derived.set };
  for (const name of derived.remove) delete after[name];
  const keysBefore = slotCountKeys(context.dataset, stored, id);
  const keysAfter = slotCountKeys(context.dataset, after, id);
  const moved = Object.keys(keysAfter).filter((slot) => keysBefore[slot] !== keysAfter[slot]);
  const previous = stored[RecordAttr.changePosition];
  return {
    ...(typeof previous === 'string' ? { previous } : {}),
    before: Object.fromEntries(moved.flatMap((slot) => pair(slot, keysBefore[slot]))),
    after: Object.fromEntries(moved.flatMap((slot) => pair(slot, keysAfter[slot]))),
  };
}

function pair(slot: string, key: string | undefined): [string, string][] {
  return key === undefined ? [] : [[slot, key]];
}

/** Random pause before round `round` (1-based), up to a bound that doubles each round. */
function pause(round: number): Promise<void> {
  const bound = Math.min(MAX_BACKOFF_MS, 2 ** round);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * bound));
}
