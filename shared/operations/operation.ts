/**
 * What an operation is: a plain async function from a small context and the request body to the response's
 * `data`. The context says who calls (the caller authentication resolved), on which dataset with which grant,
 * gives the ports and a telemetry sink, and nothing of HTTP: the same operation can run behind any way in.
 */
import type { Catalog, Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import type { OperationName } from '../contract/routes';
import type { Telemetry } from '../observability/telemetry';
import type { Caller } from '../permissions/caller';
import type { DatasetBookkeeping } from '../records/dataset-bookkeeping';
import type { ListReader } from '../records/list-reader';
import type { RecordStore } from '../records/record-store';

export interface OperationPorts {
  /** One record at a time: create, get-one, update. */
  records: RecordStore;
  /** The reads behind lists and custom SQL's loads. */
  lists: ListReader;
  /** A dataset's bookkeeping items: its version, its record-count checkpoint. */
  bookkeeping: DatasetBookkeeping;
}

export interface OperationContext {
  /** Names the request in logs and in a 3001's message. */
  requestId: string;
  operation: OperationName;
  caller: Caller;
  /** The deployed configuration the request was checked against. */
  catalog: Catalog;
  /** Data operations only: the dataset of the request. */
  dataset?: Dataset;
  /** Data operations only: the caller's grant on the dataset, already checked for the operation. */
  grant?: GrantConfig;
  ports: OperationPorts;
  telemetry: Telemetry;
  now: () => number;
}

/** A data operation's context, where dataset and grant are always resolved. */
export interface DataOperationContext extends OperationContext {
  dataset: Dataset;
  grant: GrantConfig;
}

export interface Operation {
  name: OperationName;
  /**
   * A read that starts its first store call beside the quota admission instead of after it
   * (`quota/beside-admission.ts`); nothing it reads is used unless the request is admitted. Never for writes.
   */
  readsBesideAdmission?: boolean;
  run(context: OperationContext, body: Record<string, unknown>): Promise<unknown>;
}

/** Narrow a context to a data operation's; the pipeline guarantees it for routes that require a dataset. */
export function dataContext(context: OperationContext): DataOperationContext {
  if (!context.dataset || !context.grant) throw new Error(`${context.operation} needs a dataset and grant`);
  return context as DataOperationContext;
}
