/**
 * After a record write: bump the dataset's version when registered queries read the dataset, so custom SQL's
 * cached copy of it is reloaded. The record is already written, so a failure here must not fail the request
 * (a retry would write the record twice); it is logged, and the cache's maximum age bounds its effect.
 */
import { datasetsReadBySql } from '../sql/sql-datasets';
import type { DataOperationContext } from './operation';

export async function recordDatasetWrite(context: DataOperationContext): Promise<void> {
  const code = context.dataset.datasetCode;
  if (!datasetsReadBySql(context.catalog).has(code)) return;
  try {
    await context.ports.bookkeeping.bumpVersion(code, context.telemetry.capacity);
  } catch (error) {
    context.telemetry.detail(
      'versionBumpFailed',
      error instanceof Error ? `${error.name}: ${error.message}` : 'unknown',
    );
  }
}
