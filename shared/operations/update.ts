/**
 * update: a partial update of one record (docs/interface.md §4, §18), in one of two ways.
 *
 * - **Direct** (the fields sent hold no indexed field, and no `If-Match`): one conditional write, no read before
 *   it. Its condition is everything the update must check of the stored record: it exists, it is inside the
 *   caller's row filter, and at least one field sent differs from what it holds (an update that changes nothing
 *   writes nothing: no revision, no event). The write adds one to the revision, so concurrent updates of one
 *   record never wait for each other: each lands with a revision of its own. When the condition fails, the record
 *   is read once to say which: 2002 (absent, or outside the caller's rows), the record as it is (nothing to
 *   change), or, when it changed in between, the write is tried again, a bounded number of times.
 * - **Keyed** (an indexed field is sent, or `If-Match`): one consistent read (2002 when the record is absent or
 *   outside the caller's rows; the record as it is when nothing would change), then one conditional write of the
 *   fields sent on the record's latest keyed write being the one read (`@cpos`: the index keys it moves are still
 *   the ones read, which per-value totals count by) and the row scope. Direct updates may land in between
 *   without making it fail. When another keyed write came first, the record is read again and the update decided
 *   afresh, a bounded number of times, with jitter. `If-Match: "<revision>"` makes the read revision a
 *   precondition of the write itself: when the record is at another one, nothing is written and the answer is
 *   1001 with HTTP 412 (also when any write moves it on between read and write).
 *
 * An update that cannot be applied within its rounds answers 4001 with `Retry-After`. Each write claims its
 * change item first (storage/change-items.ts): a keyed one with the values before and after of the index slots it
 * changes (per-value totals and custom SQL's loaded copies learn of it there), a direct one with its id only.
 */
import { assertWritable, rowInScope, rowScope, updateScopeCondition, visibleFields } from '../access/permissions';
import { DataNotFoundError, InvalidParameterError, RateLimitedError, RevisionMismatchError } from '../contract/errors';
import { type DataOperationContext, dataContext, type Operation, writeOrigin } from '../operation/operation';
import { readParamMap, readRecordId } from '../operation/param-map';
import {
  type ApiRecord,
  effectiveChanges,
  isEmptyChange,
  type RecordChanges,
  type RecordItem,
  validateChanges,
} from '../records/record-codec';
import { formatTimestamp } from '../records/timestamps';
import { movesIndexKeys, withDerivedAttributes } from '../storage/index-attributes';
import { revisionOf } from '../storage/record-revisions';
import { RecordAttr } from '../storage/table-definitions';
import { finishBatch, finishingOf } from './batch-finish';
import { isBatchId, runBatchUpdate } from './batch-update';
import { movedSlots } from './moved-slots';
import { answerRecord } from './record-answer';
import { inRecordTurn, TurnTimeout } from './record-turns';

/** Reads and conditional writes one keyed update may make before it gives up under contention. */
export const MAX_UPDATE_ROUNDS = 40;
/**
 * Writes one direct update may make: another round is needed only when the record changed between a refused
 * write and the read after it (it entered the caller's rows, or a field sent was changed back).
 */
export const MAX_DIRECT_ROUNDS = 5;
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
    const { dataset, grant, caller } = data;
    const appCode = caller.application.appCode;
    const params = readParamMap(body);
    if (isBatchId(params.id)) return runBatchUpdate(data, params, context.ifMatch);
    const id = readRecordId(params);
    const expected = readIfMatch(context.ifMatch);
    const sent = validateChanges(dataset, params, 'update', visibleFields(grant));
    if (isEmptyChange(sent)) {
      throw new InvalidParameterError('nothing to update: send at least one dataset field besides id');
    }
    assertWritable(grant, sent, appCode, dataset.datasetCode);
    try {
      return await inRecordTurn(`${dataset.datasetCode}\n${id}`, () => applyUpdate(data, id, sent, expected));
    } catch (error) {
      if (error instanceof TurnTimeout) throw contention(data, id, 0);
      throw error;
    }
  },
};

/** The update once the request is checked: direct or keyed (see the module's comment). */
async function applyUpdate(
  data: DataOperationContext,
  id: string,
  sent: RecordChanges,
  expected: ReadonlySet<number> | undefined,
): Promise<ApiRecord> {
  const { dataset, grant, ports, telemetry } = data;
  const scope = rowScope(grant, dataset);
  if (!expected && !movesIndexKeys(dataset, sent)) {
    for (let round = 0; round < MAX_DIRECT_ROUNDS; round++) {
      const outcome = await writeDirect(data, id, sent);
      if ('applied' in outcome) return answerRecord(data, outcome.applied);
      const stored = outcome.refused;
      if (!stored || !rowInScope(scope, stored)) throw notFound(id, dataset.datasetCode);
      if (await waitForBatch(data, stored, id, round)) continue;
      if (isEmptyChange(effectiveChanges(stored, sent))) return answerRecord(data, stored);
    }
    throw contention(data, id, MAX_DIRECT_ROUNDS);
  }
  for (let round = 0; round < MAX_UPDATE_ROUNDS; round++) {
    if (round > 0) await pause(round);
    const stored = await ports.records.get(dataset.datasetCode, id, telemetry.capacity);
    // Not found covers a row outside the caller's scope too: its existence is not revealed.
    if (!stored || !rowInScope(scope, stored)) throw notFound(id, dataset.datasetCode);
    const revision = revisionOf(stored);
    if (expected && !expected.has(revision)) {
      throw new RevisionMismatchError(
        `record '${id}' was changed since revision ${[...expected].join(', ')}: it is at revision ${revision}; read it again and send If-Match: "${revision}"`,
      );
    }
    if (await waitForBatch(data, stored, id, round)) continue;
    if (isEmptyChange(effectiveChanges(stored, sent))) return answerRecord(data, stored);
    const written = await writeAtRevision(data, stored, id, sent, revision, expected !== undefined);
    if (written) return answerRecord(data, written);
  }
  throw contention(data, id, MAX_UPDATE_ROUNDS);
}

/**
 * A record a batch update holds takes no other write (batch-update.ts): the update finishes that batch when it is
 * committed or has no writer left, else waits a moment for it. True when the update should try again.
 */
async function waitForBatch(
  data: DataOperationContext,
  stored: RecordItem,
  id: string,
  round: number,
): Promise<boolean> {
  const batchId = stored[RecordAttr.batchLock];
  if (typeof batchId !== 'string') return false;
  if (!(await finishBatch(finishingOf(data), batchId, id, false))) await pause(round + 3);
  return true;
}

function notFound(id: string, datasetCode: string): DataNotFoundError {
  return new DataNotFoundError(`record '${id}' not found in dataset '${datasetCode}'`);
}

function contention(context: DataOperationContext, id: string, rounds: number): RateLimitedError {
  context.telemetry.detail('updateContention', String(rounds));
  return new RateLimitedError(
    `record '${id}' is being changed by other requests right now and this update could not be applied; retry in a second`,
    1,
  );
}

/** The write's time, its gmt_modified and the row-scope condition it carries. */
function writeFrame(context: DataOperationContext, changes: RecordChanges, derived: RecordChanges) {
  const { dataset, grant, caller, catalog, now } = context;
  const occurredAt = now();
  const modifiedAt = formatTimestamp(new Date(occurredAt), catalog.timeZone);
  const condition = updateScopeCondition(
    rowScope(grant, dataset),
    { ...derived.set, gmt_modified: modifiedAt },
    new Set([...Object.keys(changes.set), ...changes.remove, 'gmt_modified']),
    caller.application.appCode,
    dataset.datasetCode,
  );
  return { occurredAt, modifiedAt, condition };
}

/** One direct write of the fields sent: no read before it (see the module's comment). */
function writeDirect(context: DataOperationContext, id: string, sent: RecordChanges) {
  const derived = withDerivedAttributes(context.dataset, id, sent, 'update');
  const { occurredAt, modifiedAt, condition } = writeFrame(context, sent, derived);
  return context.ports.records.updateDirect(
    context.dataset.datasetCode,
    id,
    { sent, changes: derived, modifiedAt, origin: writeOrigin(context, occurredAt), now: context.now },
    context.telemetry.capacity,
    condition,
  );
}

/**
 * One conditional write of the fields sent on the keyed write read (or, `exact`, on the revision read);
 * `undefined` when another write came first. All fields sent are written, not only those the read shows
 * changing: a direct update may change one of them between the read and the write.
 */
async function writeAtRevision(
  context: DataOperationContext,
  stored: RecordItem,
  id: string,
  sent: RecordChanges,
  revision: number,
  exact: boolean,
): Promise<RecordItem | undefined> {
  // Index keys and lower-cased shadows change in the same UpdateItem as the fields they derive from.
  const derived = withDerivedAttributes(context.dataset, id, sent, 'update');
  const { occurredAt, modifiedAt, condition } = writeFrame(context, sent, derived);
  return context.ports.records.updateAtRevision(
    context.dataset.datasetCode,
    id,
    {
      changes: derived,
      modifiedAt,
      revision,
      ...(exact ? { exactRevision: true } : {}),
      origin: writeOrigin(context, occurredAt),
      claim: { ...movedSlots(context, stored, derived, id), now: context.now },
    },
    context.telemetry.capacity,
    condition,
  );
}

/** Random pause before round `round` (1-based), up to a bound that doubles each round. */
function pause(round: number): Promise<void> {
  const bound = Math.min(MAX_BACKOFF_MS, 2 ** round);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * bound));
}
