/**
 * What a fold beside the writes uses to finish a dataset's batch updates their writers left
 * (changes/value-folds.ts `finishBatches`, operations/batch-finish.ts): the deployed fold function and `npm start`'s
 * own fold build it over the records table they fold.
 */
import type { FoldPorts } from '../changes/value-folds';
import { finishOpenBatches } from '../operations/batch-finish';
import type { RecordStore } from '../storage/record-store';

export function batchFinisher(records: RecordStore, now: () => number): NonNullable<FoldPorts['finishBatches']> {
  return (dataset, catalog, meter) =>
    finishOpenBatches({ dataset, records, meter, timeZone: catalog.timeZone, now }, false);
}
