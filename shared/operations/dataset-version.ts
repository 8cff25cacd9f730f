/**
 * After a record write: when registered queries read the dataset, record which records changed (a change
 * item, `DatasetBookkeeping.changes`), so custom SQL's loaded copies of the dataset catch up by reading those
 * records alone. The records are already written, so a failure here must not fail the request (a retry would
 * write them twice); it is logged, and the SQL cache's maximum age bounds its effect.
 *
 * Bulk writers call this once per batch (or chunk) with the ids they wrote, after the writes succeeded.
 */
import { datasetsReadBySql } from '../sql/sql-datasets';
import type { DataOperationContext } from './operation';

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
