/** Lambda handler of GET /client/bff/endpoint/{appCode}/{functionName} (client-key mode only). */
import { createHandler } from '../shared/composition/pipeline';
import { bffEndpointOperation } from '../shared/operations/bff-endpoint';

export const handler = createHandler(bffEndpointOperation);
