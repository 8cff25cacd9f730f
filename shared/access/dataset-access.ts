/**
 * Access to one dataset, decided the same way for every way in (docs/interface.md §3, steps 5 and 6): the dataset
 * must be known in the deployment, then the caller (an application, or a user with its narrowed grants) must hold
 * a grant covering it and the operation. Signed requests and client-key requests end their checks here (the
 * pipeline step `checkDatasetAccess`, after authentication), and so does each `context.client` read of a hook
 * (`readAccess`), so the checks cannot drift apart.
 */
import type middy from '@middy/core';
import type { Catalog, Dataset } from '../catalog/catalog';
import type { GrantConfig, GrantOperation } from '../catalog/schema';
import { DatasetNotFoundError } from '../contract/errors';
import { type ApiEvent, type ApiResult, requestSlot, type ServiceContext, type ServiceRequest } from '../http/request';
import type { Authentication, Caller } from './caller';
import { type GrantView, grantFor, grantView } from './permissions';

/** What a request may do with the dataset it names. */
export interface DatasetAccess {
  readonly dataset: Dataset;
  /** The caller's grant, for an operation that needs one (every data operation); with it, what it shows. */
  readonly grant?: GrantConfig;
  readonly view?: GrantView;
}

/** The caller's grant on a known dataset for `operation`, and its view; 1006 when it holds none that allows it. */
function granted(caller: Caller, dataset: Dataset, operation: GrantOperation): Required<DatasetAccess> {
  const grant = grantFor(caller, dataset.datasetCode, operation);
  return { dataset, grant, view: grantView(grant, dataset) };
}

/**
 * A hook's `context.client` read of a dataset: the caller's own grant, which must allow `read`, exactly as if
 * the caller had asked. An unknown dataset is the hook's mistake, reported to it as such.
 */
export function readAccess(catalog: Catalog, caller: Caller, datasetCode: string): Required<DatasetAccess> {
  const dataset = catalog.dataset(datasetCode);
  if (!dataset) throw new Error(`unknown dataset '${datasetCode}'`);
  return granted(caller, dataset, 'read');
}

export interface CheckDatasetAccessOptions {
  /** What authentication established for the request (the step before this one). */
  authentication: (request: ServiceRequest) => Authentication | undefined;
}

export interface AccessStep extends middy.MiddlewareObj<ApiEvent, ApiResult, Error, ServiceContext> {
  /** The request's access to the dataset it names, from this step's `before` on; none when it names none. */
  accessOf(request: ServiceRequest): DatasetAccess | undefined;
}

/** The pipeline step: the named dataset known (else 1005), then, for a data operation, a grant for it (else 1006). */
export function checkDatasetAccess(options: CheckDatasetAccessOptions): AccessStep {
  const decided = requestSlot<DatasetAccess>('dataset access');

  const checkDataset: middy.MiddlewareFn<ApiEvent, ApiResult, Error, ServiceContext> = (request) => {
    const { request: received, outcome } = request.context;
    const authentication = options.authentication(received);
    const datasetCode = authentication?.datasetCode;
    if (!authentication || !datasetCode) return;
    const dataset = authentication.catalog.dataset(datasetCode);
    if (!dataset) throw new DatasetNotFoundError(datasetCode);
    outcome.datasetCode = dataset.datasetCode;
    const operation = received.route.grantOperation;
    decided.set(received, operation ? granted(authentication.caller, dataset, operation) : { dataset });
  };

  return { before: checkDataset, accessOf: (request) => decided.get(request) };
}
