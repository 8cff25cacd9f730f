/** Lambda handler of POST /openapi/data/get-list. */
// First: in a hooked bundle the sandbox's worker starts before the rest of the bundle loads.
import '../shared/sandbox/start-at-init';
import { hookedHandler } from '../shared/composition/hooked-handler';
import { getListOperation } from '../shared/operations/get-list-operation';

export const handler = hookedHandler(getListOperation);
