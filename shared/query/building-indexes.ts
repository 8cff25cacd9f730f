/**
 * A list that reads past its budget because a field's index is still being built (docs/interface.md §17): the
 * 2001 says so, with how far the build has come as a percentage, instead of advising to index a field that is
 * already being indexed. The percentage is the build's records processed of the records the dataset held when it
 * started (one read of the job's progress counter, on this error's path only); an index whose job has not
 * started yet (its configuration is still reaching every function, or it waits for a slot) is at 0%.
 */
import type { Dataset } from '../catalog/catalog';
import type { AppliedIndex } from '../catalog/index-registry';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { IndexBuildStore } from '../storage/index-build-store';
import { ListBudgetExceeded } from './list-executor';

export interface IndexProgress {
  /** Whole percent: 100 once complete, at most 99 before. */
  percent: number;
  /** Records its job has processed, of the records the dataset held when the job started (once a job runs). */
  processed?: number;
  total?: number;
}

/** How far an index has come: complete, or its job's records processed so far (0% before its job starts). */
export async function indexProgress(
  index: AppliedIndex,
  datasetCode: string,
  builds: IndexBuildStore,
  meter?: CapacityMeter,
): Promise<IndexProgress> {
  if (index.state === 'complete') return { percent: 100 };
  const progress = index.job ? await builds.readProgress(index.job, datasetCode, meter) : undefined;
  if (!progress) return { percent: 0 };
  const done = Math.min(progress.processed, progress.total);
  const percent = progress.total === 0 ? 0 : Math.min(99, Math.floor((done * 100) / progress.total));
  return { percent, processed: done, total: progress.total };
}

/** The same 2001, naming the fields whose index is being built and their progress; the error itself otherwise. */
export async function buildingIndexAdvice(
  error: ListBudgetExceeded,
  dataset: Dataset,
  builds: IndexBuildStore,
  meter: CapacityMeter,
): Promise<ListBudgetExceeded> {
  const building = error.unindexedFields.filter((field) => dataset.indexes.pending.has(field));
  if (building.length === 0) return error;
  const progress = await Promise.all(
    building.map(async (field) => {
      const { percent } = await indexProgress(
        dataset.indexes.pending.get(field) as AppliedIndex,
        dataset.datasetCode,
        builds,
        meter,
      );
      return `the index of '${field}' is being built (${percent}% done)`;
    }),
  );
  const others = error.unindexedFields.filter((field) => !building.includes(field));
  const advice = others.length ? `; no index serves ${others.map((name) => `'${name}'`).join(', ')}` : '';
  return new ListBudgetExceeded(
    error.budget,
    error.unindexedFields,
    `the query would read more than ${error.budget} capacity units: ${progress.join(', ')}${advice}. ` +
      'Until the index is complete, add a condition on an indexed field, or try again later',
  );
}
