/**
 * The change log's writer (docs/interface.md §18): it reads the records table's change stream, which holds every
 * item change once, in order per item, with the item before and after, and turns each record change into an event
 * in the change log (storage/event-store.ts) and a delivery for each webhook subscription that may see it
 * (delivery-queue.ts). The same code runs in the deployment's stream function (functions/change-stream.ts, fed by
 * Lambda's DynamoDB Streams event source) and in `npm start` (stream-poller.ts, fed by the local stream twin).
 *
 * Why this gives an event exactly when a change happened: the event is built from the stream record of the write
 * that made the change (a write that failed makes no stream record; one that succeeded always does), it is logged
 * under the record's id and revision with a condition that it is new (a record read twice is logged once), and the
 * reader of a batch reports the first item change it could not finish, so the stream hands it, and everything
 * after it, out again: nothing is skipped, and a record's changes are handled in order, one after the other
 * (different records in parallel).
 *
 * Where the writer is the only one that can be logging these changes (`npm start` over its embedded store:
 * ChangeLogWriting), a batch is logged whole instead: one consistent read of which of its changes are logged
 * already, batch writes of the others (positions taken in stream order, so a record's changes stay in order), then
 * their deliveries; any failure hands the whole batch out again. Logged once all the same, at a few requests per
 * batch rather than one conditional write per change, which in the store's own process is what the writer's time
 * went to behind a bulk load.
 *
 * The same batches carry the change items of writes (storage/change-items.ts): for each dataset whose items it
 * sees, the writer asks for a fold of its per-value totals once they have settled (value-folds.ts).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Catalog } from '../catalog/catalog';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { EventStore, LoggedChange } from '../storage/event-store';
import { changeOfImages, eventFor, eventIdOf } from './change-events';
import type { DeliveryMessage, DeliveryQueue } from './delivery-queue';
import { type FoldQueue, foldsOfItemChanges } from './value-folds';

/** An item change as the stream gives it (Lambda's event records and the Streams API's records have this shape). */
export interface ItemChangeRecord {
  eventName?: string | undefined;
  dynamodb?:
    | {
        Keys?: Record<string, unknown> | undefined;
        NewImage?: Record<string, unknown> | undefined;
        OldImage?: Record<string, unknown> | undefined;
        SequenceNumber?: string | undefined;
      }
    | undefined;
}

export interface ChangeLogPorts {
  catalog(): Promise<Catalog>;
  events: EventStore;
  deliveries: DeliveryQueue;
  /** Where the folds of per-value totals the batch's change items ask for are scheduled (value-folds.ts). */
  folds: FoldQueue;
  /** The next position in the change log: a ULID of now, increasing within the process. */
  nextPosition(): string;
  now(): number;
}

export interface ChangeLogOutcome {
  logged: number;
  duplicates: number;
  queued: number;
  /** The longest time from a change to its event (ms), when the batch logged any. */
  lagMs?: number;
  /** The sequence number of the first item change that failed: it and everything after it must be read again. */
  failedAt?: string;
  /** Why it failed (for the log). */
  error?: Error;
}

/** How the writer logs a batch's events. */
export interface ChangeLogWriting {
  /**
   * The writer is the only one logging these changes, and none of its writes can land after it stopped (the
   * embedded store's stream, read in the store's own process, where `kill -9` stops the store with the writer):
   * a batch's events are logged with one consistent read of which are logged already and batch writes of the
   * others (EventStore.logAll), a few requests per batch instead of one conditional write per change. Without it
   * (the deployment's stream function, whose timed-out attempt may still be writing when the batch is retried, or
   * another endpoint's stream), each event is written with the condition that it is new.
   */
  soleWriter?: boolean;
}

/** How many records' changes are handled at once (each record's own changes one after the other). */
const RECORDS_IN_PARALLEL = 10;

/** Stream images in the document form the rest of the service reads (numbers as numbers, as the stores read them). */
function imageOf(image: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!image) return undefined;
  return unmarshall(image as Record<string, AttributeValue>, { wrapNumbers: (text: string) => Number(text) });
}

/** The item an item change is about, as a key (record changes of one item are handled in stream order). */
function itemKeyOf(record: ItemChangeRecord): string {
  const keys = record.dynamodb?.Keys ?? {};
  return JSON.stringify(
    Object.keys(keys)
      .sort()
      .map((name) => [name, keys[name]]),
  );
}

/** Log the record changes among a batch of item changes, and queue their deliveries. */
export async function logItemChanges(
  records: readonly ItemChangeRecord[],
  ports: ChangeLogPorts,
  meter: CapacityMeter,
  writing: ChangeLogWriting = {},
): Promise<ChangeLogOutcome> {
  const outcome: ChangeLogOutcome = { logged: 0, duplicates: 0, queued: 0 };
  try {
    await ports.folds.schedule(foldsOfItemChanges(records, ports.now()));
  } catch (error) {
    // Read again, folds and all: the events are logged once whatever the number of reads.
    outcome.error = error instanceof Error ? error : new Error(String(error));
    outcome.failedAt = records[0]?.dynamodb?.SequenceNumber ?? '0';
    return outcome;
  }
  if (writing.soleWriter) return logAllOnce(records, ports, meter, outcome);
  const byItem = new Map<string, number[]>();
  records.forEach((record, index) => {
    const key = itemKeyOf(record);
    byItem.set(key, [...(byItem.get(key) ?? []), index]);
  });
  let firstFailure: number | undefined;
  const groups = [...byItem.values()];
  const work = async (indexes: number[]) => {
    for (const index of indexes) {
      if (firstFailure !== undefined && firstFailure < index) return;
      const record = records[index] as ItemChangeRecord;
      try {
        await logOne(record, ports, meter, outcome);
      } catch (error) {
        if (firstFailure === undefined || index < firstFailure) {
          firstFailure = index;
          outcome.error = error instanceof Error ? error : new Error(String(error));
        }
        return;
      }
    }
  };
  for (let start = 0; start < groups.length; start += RECORDS_IN_PARALLEL) {
    await Promise.all(groups.slice(start, start + RECORDS_IN_PARALLEL).map(work));
  }
  if (firstFailure !== undefined) {
    outcome.failedAt = records[firstFailure]?.dynamodb?.SequenceNumber ?? String(firstFailure);
  }
  return outcome;
}

/**
 * The sole writer's way (ChangeLogWriting): the batch's record changes logged together, positions taken in stream
 * order, then their deliveries queued in the same order. Any failure reads the whole batch again: what this attempt
 * logged is found logged then, and its deliveries are queued again (the queue keeps one per subscription and event).
 */
async function logAllOnce(
  records: readonly ItemChangeRecord[],
  ports: ChangeLogPorts,
  meter: CapacityMeter,
  outcome: ChangeLogOutcome,
): Promise<ChangeLogOutcome> {
  try {
    const changes = records
      .map((record) => changeOfImages(imageOf(record.dynamodb?.OldImage), imageOf(record.dynamodb?.NewImage)))
      .filter((change) => change !== undefined);
    if (changes.length === 0) return outcome;
    const catalog = await ports.catalog();
    const retentionMs = catalog.changeRetentionDays * 86_400_000;
    const answers = await ports.events.logAll(
      changes.map((change) => ({ change, expiresAt: change.occurredAt + retentionMs })),
      () => ports.nextPosition(),
      meter,
    );
    const messages: DeliveryMessage[] = [];
    for (const [index, change] of changes.entries()) {
      const { position, logged } = answers[index] as { position: string; logged: boolean };
      if (logged) {
        outcome.logged += 1;
        outcome.lagMs = Math.max(outcome.lagMs ?? 0, ports.now() - change.occurredAt);
      } else {
        outcome.duplicates += 1;
      }
      messages.push(...deliveriesOf(change, position, catalog));
    }
    if (messages.length > 0) {
      await ports.deliveries.enqueue(messages);
      outcome.queued += messages.length;
    }
  } catch (error) {
    outcome.error = error instanceof Error ? error : new Error(String(error));
    outcome.failedAt = records[0]?.dynamodb?.SequenceNumber ?? '0';
  }
  return outcome;
}

async function logOne(
  record: ItemChangeRecord,
  ports: ChangeLogPorts,
  meter: CapacityMeter,
  outcome: ChangeLogOutcome,
): Promise<void> {
  const change = changeOfImages(imageOf(record.dynamodb?.OldImage), imageOf(record.dynamodb?.NewImage));
  if (!change) return;
  const catalog = await ports.catalog();
  const position = ports.nextPosition();
  const expiresAt = change.occurredAt + catalog.changeRetentionDays * 86_400_000;
  const logged = await ports.events.log(change, position, expiresAt, meter);
  if (logged) {
    outcome.logged += 1;
    const lag = ports.now() - change.occurredAt;
    outcome.lagMs = Math.max(outcome.lagMs ?? 0, lag);
  } else {
    outcome.duplicates += 1;
  }
  // Queued again even when the event was logged before: the attempt that logged it may have stopped before
  // queueing. The queue keeps one message per subscription and event.
  const messages = deliveriesOf(change, position, catalog);
  if (messages.length > 0) {
    await ports.deliveries.enqueue(messages);
    outcome.queued += messages.length;
  }
}

/** One delivery per subscription of the dataset that may see the change, of a type it asked for. */
export function deliveriesOf(change: LoggedChange, position: string, catalog: Catalog): DeliveryMessage[] {
  const dataset = catalog.dataset(change.datasetCode);
  if (!dataset) return [];
  const messages: DeliveryMessage[] = [];
  for (const subscription of catalog.webhooksOf(change.datasetCode)) {
    const grant = catalog.application(subscription.appCode)?.grants.get(change.datasetCode);
    if (!grant?.operations.includes('read')) continue;
    const event = eventFor({ ...change, position }, dataset, grant);
    if (!event || (subscription.types && !subscription.types.includes(event.type))) continue;
    messages.push({
      subscriptionId: subscription.id,
      datasetCode: change.datasetCode,
      id: change.id,
      revision: change.revision,
      eventId: eventIdOf(change.datasetCode, change.id, change.revision),
      position,
    });
  }
  return messages;
}
