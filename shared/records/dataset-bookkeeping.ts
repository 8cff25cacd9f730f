/**
 * A dataset's bookkeeping items, kept in the records table beside (never among) its records: the record
 * counter's checkpoint, count entries of bulk groups (`count-store.ts`, `record-counter.ts`), and the change
 * items custom SQL's loaded copies catch up by (`change-log.ts`).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ChangeLog } from './change-log';
import { CountStore } from './count-store';

export class DatasetBookkeeping {
  /** The record counter's items (checkpoint, count index, bulk groups). */
  readonly counts: CountStore;
  /** What changed in datasets that registered queries read. */
  readonly changes: ChangeLog;

  constructor(client: DynamoDBDocumentClient, table: string) {
    this.counts = new CountStore(client, table);
    this.changes = new ChangeLog(client, table);
  }
}
