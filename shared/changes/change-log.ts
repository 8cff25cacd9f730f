/**
 * What changed in a dataset, for copies of it loaded elsewhere (custom SQL's cache): every write of a dataset
 * that registered queries read adds one small change item naming the records it wrote, so that a loaded copy
 * catches up by reading those change items and those records alone, instead of the whole dataset. The items,
 * their order and how late one may land are storage's (`storage/change-items.ts`); custom SQL's row source reads
 * them (`sql/record-store-row-source.ts`).
 *
 * Called after a record write, once per request (bulk writers: once per batch or chunk) with the ids written.
 * The records are already written, so a failure here must not fail the request (a retry would write them
 * twice); it is logged, and the SQL cache's maximum age bounds its effect. Datasets no registered query reads
 * pay nothing. Records carry no revision and callers see no change feed yet (docs/interface.md §18).
 */
import type { DataOperationContext } from '../operation/operation';
import { datasetsReadBySql } from '../sql/sql-datasets';

export async function recordDatasetWrite(context: DataOperationContext, ids: readonly string[]): Promise<void> {
  const code = context.dataset.datasetCode;
  if (!datasetsReadBySql(context.catalog).has(code)) return;
  try {
    await context.ports.bookkeeping.changes.record(code, ids, context.now(), context.telemetry.capacity);
  } catch (error) {
    context.telemetry.detail(
      'changeRecordFailed',
      error instanceof Error ? `${error.name}: ${error.message}` : 'unknown',
    );
  }
}
