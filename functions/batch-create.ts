/** Lambda handler of POST /openapi/data/batch-create. */
// First: in a hooked bundle the sandbox's worker starts before the rest of the bundle loads.
import '../shared/sandbox/start-at-init';
import { hookedHandler } from '../shared/composition/hooked-handler';
import { batchCreateOperation } from '../shared/operations/batch-create';

export const handler = hookedHandler(batchCreateOperation);
