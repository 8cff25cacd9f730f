/** Lambda handler of POST /openapi/data/get-list. */
// First: in a hooked bundle the sandbox's worker starts before the rest of the bundle loads.
import '../shared/sandbox/start-at-init';
import { withLazyDeployedMirrorEngine } from '../shared/composition/lazy-mirror-engine';
import { createHandler } from '../shared/composition/pipeline';
import { getListOperation } from '../shared/operations/get-list-operation';

export const handler = withLazyDeployedMirrorEngine(createHandler(getListOperation));
