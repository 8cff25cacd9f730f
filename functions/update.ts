/** Lambda handler of POST /openapi/data/update. */
// First: in a hooked bundle the sandbox's worker starts before the rest of the bundle loads.
import '../shared/sandbox/start-at-init';
import { hookedHandler } from '../shared/composition/hooked-handler';
import { updateOperation } from '../shared/operations/update';

export const handler = hookedHandler(updateOperation);
