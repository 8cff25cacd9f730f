/**
 * What an operation is: a plain async function from the resolved request (application, dataset, grant, ports)
 * and its body to the response's `data`. The domain lives here, testable without HTTP.
 */
import type { Application, Catalog, Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import type { RequestState } from '../http/request-state';
import type { OperationName } from '../http/routes';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { RecordStore } from '../records/record-store';

export interface OperationPorts {
  records: RecordStore;
}

export interface OperationContext {
  requestId: string;
  catalog: Catalog;
  application: Application;
  /** Data operations only. */
  dataset?: Dataset;
  grant?: GrantConfig;
  capacity: CapacityMeter;
  ports: OperationPorts;
  now: () => number;
  /** The request's state, for operations that add metrics or cleanups. */
  state: RequestState;
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
  if (!context.dataset || !context.grant) throw new Error(`${context.state.route.operation} needs a dataset and grant`);
  return context as DataOperationContext;
}
