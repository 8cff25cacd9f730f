/**
 * indexes (`POST /openapi/data/indexes`, docs/interface.md §17): the indexes of the datasets the caller may read,
 * each with its state and how far its build (or its removal) has come: records processed of the records the
 * dataset held when its job started, when it started and when it became complete. `das indexes` prints it.
 *
 * Seen through the caller's grant like everything else: only datasets it may read, and only fields its
 * `readFields` show (a hidden field's index is, to it, an index the dataset does not have). A dataset named in
 * the body must exist (1005) and be readable by the caller (1006).
 */
import { grantFor, readableGrant } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import { codeSchema } from '../contract/body-schemas';
import { DatasetNotFoundError, InvalidParameterError } from '../contract/errors';
import type { IndexesResult } from '../contract/operation-schemas';
import type { Operation, OperationContext } from '../operation/operation';
import { indexProgress } from '../query/building-indexes';
import { formatTimestamp } from '../records/timestamps';

type DatasetStatus = IndexesResult['datasets'][number];

async function statusOf(context: OperationContext, dataset: Dataset, grant: GrantConfig): Promise<DatasetStatus> {
  const visible = grant.readFields ? new Set(grant.readFields) : undefined;
  const at = (ms: number | undefined) =>
    ms === undefined ? null : formatTimestamp(new Date(ms), context.catalog.timeZone);
  const indexes = await Promise.all(
    dataset.indexes.all
      .filter((index) => !visible || visible.has(index.field))
      .map(async (index) => {
        const progress = await indexProgress(
          index,
          dataset.datasetCode,
          context.ports.indexBuilds,
          context.telemetry.capacity,
        );
        return {
          field: index.field,
          state: index.state,
          percent: progress.percent,
          recordsDone: progress.processed ?? null,
          recordsTotal: progress.total ?? null,
          startedAt: at(index.startedAt),
          finishedAt: at(index.state === 'complete' ? index.finishedAt : undefined),
        };
      }),
  );
  return { datasetCode: dataset.datasetCode, indexes };
}

export const indexStatusOperation: Operation = {
  name: 'indexes',
  async run(context, body): Promise<IndexesResult> {
    const { catalog, caller } = context;
    const named = body.datasetCode;
    if (named !== undefined) {
      if (!codeSchema.safeParse(named).success) {
        throw new InvalidParameterError('datasetCode must be 1 to 64 letters, digits, "_" or "-"');
      }
      const dataset = catalog.dataset(named as string);
      if (!dataset) throw new DatasetNotFoundError(named as string);
      return { datasets: [await statusOf(context, dataset, grantFor(caller, dataset.datasetCode, 'read'))] };
    }
    const readable = catalog
      .allDatasets()
      .map((dataset) => ({ dataset, grant: readableGrant(caller, dataset.datasetCode) }))
      .filter((entry): entry is { dataset: Dataset; grant: GrantConfig } => entry.grant !== undefined);
    return { datasets: await Promise.all(readable.map(({ dataset, grant }) => statusOf(context, dataset, grant))) };
  },
};
