/**
 * The end of authentication, the same for both ways in (contract §3, steps 5 and 6): the dataset the request
 * names must be known in the deployment, then the caller (an application, or a user with its narrowed grants)
 * must hold a grant covering it and the route's operation. Signed requests and client-key requests both end here,
 * so the checks cannot drift apart.
 */

import type { Caller } from '../access/caller';
import { grantFor } from '../access/permissions';
import type { Catalog } from '../catalog/catalog';
import { DatasetNotFoundError } from '../contract/errors';
import type { RequestState } from './request-state';

/** Sets `state.dataset` and, for a route that needs one, `state.grant`; throws 1005 or 1006. */
export function admitDataset(state: RequestState, catalog: Catalog, caller: Caller, datasetCode: string): void {
  const dataset = catalog.dataset(datasetCode);
  if (!dataset) throw new DatasetNotFoundError(datasetCode);
  state.dataset = dataset;
  if (!state.route.grantOperation) return;
  state.grant = grantFor(caller, datasetCode, state.route.grantOperation);
}
