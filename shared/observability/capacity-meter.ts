/** Adds up the DynamoDB capacity one request consumes, for its log line and metrics (docs/interface.md §11). */
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

export class CapacityMeter {
  readUnits = 0;
  writeUnits = 0;

  /**
   * `parent`: this meter counts one part of a request (one dataset's reads among several made at once) and every
   * unit it counts is the request's too.
   */
  constructor(private readonly parent?: CapacityMeter) {}

  /** Record the `ConsumedCapacity` of a read call (one entry or BatchGetItem's list). */
  addRead(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    this.readUnits += total(consumed);
    this.parent?.addRead(consumed);
  }

  /** Record the `ConsumedCapacity` of a write call. */
  addWrite(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    this.writeUnits += total(consumed);
    this.parent?.addWrite(consumed);
  }
}

function total(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): number {
  if (!consumed) return 0;
  const list = Array.isArray(consumed) ? consumed : [consumed];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}
