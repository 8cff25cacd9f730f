/**
 * What a batch of new records must keep up to date besides the records themselves, once per batch and never per
 * record, so a batch costs its records' writes and nothing more:
 *
 * - custom SQL's cached copies: the dataset's version is bumped once (dataset-version.ts);
 * - list totals: nothing to write. The record count (record-counter.ts) counts a dataset's records as a settled
 *   checkpoint plus the ids after it, which holds because every record is written soon after its id's time; a
 *   batch keeps that promise by writing within its request and, when a retry resumes it, only with ids still
 *   inside the settle window (id-blocks.ts). Its records are in the count as soon as they are written.
 */
import { recordDatasetWrite } from './dataset-version';
import type { DataOperationContext } from './operation';

export async function recordBatchWrite(context: DataOperationContext, _written: number): Promise<void> {
  await recordDatasetWrite(context);
}
