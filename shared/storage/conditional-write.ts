/**
 * A conditional write, metered the one way every store here meters it: the units DynamoDB reports when it
 * succeeds, and when its condition fails the one write unit DynamoDB bills for it without reporting it.
 */
import { ConditionalCheckFailedException, type ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';

/** The write's output, or `undefined` when its condition failed; any other error is thrown as it came. */
export async function conditionalWrite<T extends { ConsumedCapacity?: ConsumedCapacity | undefined }>(
  meter: CapacityMeter,
  write: () => Promise<T>,
): Promise<T | undefined> {
  try {
    const result = await write();
    meter.addWrite(result.ConsumedCapacity);
    return result;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    meter.writeUnits += 1;
    return undefined;
  }
}
