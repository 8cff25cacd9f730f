/**
 * A dataset's bookkeeping items, kept in the records table beside (never among) its records: the record
 * counter's checkpoint and the count entries of bulk groups (the `CountStore` methods, `record-counter.ts`),
 * and the change items custom SQL's loaded copies catch up by (`changes`, `change-items.ts`). The counter's calls
 * are methods of the port itself, so that wrappers of the port's methods (reads beside the quota admission)
 * see them.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ChangeItems } from './change-items';
import { CountStore } from './count-store';

export class DatasetBookkeeping extends CountStore {
  /** What changed in datasets that registered queries read. */
  readonly changes: ChangeItems;

  constructor(client: DynamoDBDocumentClient, table: string) {
    super(client, table);
    this.changes = new ChangeItems(client, table);
  }
}
