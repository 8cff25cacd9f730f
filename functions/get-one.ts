/** Lambda handler of POST /openapi/data/get-one. */
// First: in a hooked bundle the sandbox's worker starts before the rest of the bundle loads.
import '../shared/sandbox/start-at-init';
import { hookedHandler } from '../shared/composition/hooked-handler';
import { getOneOperation } from '../shared/operations/get-one';

export const handler = hookedHandler(getOneOperation);
