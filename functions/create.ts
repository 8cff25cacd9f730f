/** Lambda handler of POST /openapi/data/create. */
// First: in a hooked bundle the sandbox's worker starts before the rest of the bundle loads.
import '../shared/sandbox/start-at-init';
import { hookedHandler } from '../shared/composition/hooked-handler';
import { createOperation } from '../shared/operations/create';

export const handler = hookedHandler(createOperation);
