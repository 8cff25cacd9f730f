/**
 * What an operation is: a plain async function from a small context and the request body to the response's
 * `data`. The context says who calls (the caller authentication resolved), on which dataset with which grant,
 * gives the ports and a telemetry sink, and nothing of HTTP: the same operation can run behind any way in.
 */
import type { Caller } from '../access/caller';
import type { GrantView } from '../access/permissions';
import type { Catalog, Dataset } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';
import type { OperationName } from '../contract/routes';
import type { Telemetry } from '../observability/telemetry';
import type { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import type { EventStore } from '../storage/event-store';
import type { IdBlock } from '../storage/id-blocks';
import type { IdempotencyStore } from '../storage/idempotency-store';
import type { IndexBuildStore } from '../storage/index-build-store';
import type { ListReader } from '../storage/list-reader';
import type { RecordBatchStore } from '../storage/record-batch-store';
import type { WriteOrigin } from '../storage/record-revisions';
import type { RecordStore } from '../storage/record-store';

/** What an operation run under an idempotency key knows and may do. */
export interface IdempotentAttempt {
  /** True when an earlier attempt of the same request failed or stopped: some of its writes may exist. */
  readonly resumed: boolean;
  /** The id blocks of this request, oldest first; a first attempt has one, chosen now. */
  readonly blocks: readonly IdBlock[];
  /** Remember one more block before writing with it (the earlier ones are too old to write with). */
  addBlock(block: IdBlock): Promise<void>;
}

export interface OperationPorts {
  /** One record at a time: create, get-one, update. */
  records: RecordStore;
  /** The reads behind lists and custom SQL's loads. */
  lists: ListReader;
  /** A dataset's bookkeeping items: its version, its record-count checkpoint. */
  bookkeeping: DatasetBookkeeping;
  /** Many new records at once: batch create. */
  recordBatches: RecordBatchStore;
  /** Requests sent with an Idempotency-Key. */
  idempotency: IdempotencyStore;
  /** How far index builds have come (a 2001 names it, `das indexes` shows it). */
  indexBuilds: IndexBuildStore;
  /** The change log, for the feed (docs/interface.md §18); absent where none is configured. */
  changeLog?: EventStore;
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
  /** With the grant: the fields it shows and the rows it reaches, as the access step worked them out. */
  view?: GrantView;
  ports: OperationPorts;
  telemetry: Telemetry;
  now: () => number;
  /** When the request must have answered (ms, by `now`): long writes stop before it. */
  deadline?: number;
  /** The request's `Idempotency-Key`, for the operations that take one (idempotent-operation.ts). */
  idempotencyKey?: string;
  /** Tells the transport that the answer is a kept one (it adds `Idempotent-Replayed: true`). */
  markReplayed?: () => void;
  /** Set when the request carries an `Idempotency-Key`: the ids this attempt writes with. */
  attempt?: IdempotentAttempt;
  /** The request's `If-Match`, for the operations that take one (update, docs/interface.md §18). */
  ifMatch?: string;
  /**
   * Tells the transport the revision of the record the answer holds (get-one, create, update): it answers it as
   * `ETag`. Absent where no header can follow (a hook's reads).
   */
  answerRevision?: (revision: number) => void;
}

/** A data operation's context, where dataset and grant are always resolved. */
export interface DataOperationContext extends OperationContext {
  dataset: Dataset;
  grant: GrantConfig;
  view: GrantView;
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

/** Who makes a write, for the record's origin (`storage/record-revisions.ts`): the caller, in this request. */
export function writeOrigin(context: OperationContext, occurredAt: number): WriteOrigin {
  return {
    appCode: context.caller.application.appCode,
    userId: context.caller.user?.userId ?? null,
    requestId: context.requestId,
    occurredAt,
  };
}

/** Narrow a context to a data operation's; the pipeline guarantees it for routes that require a dataset. */
export function dataContext(context: OperationContext): DataOperationContext {
  if (!context.dataset || !context.grant || !context.view) {
    throw new Error(`${context.operation} needs a dataset and grant`);
  }
  return context as DataOperationContext;
}
