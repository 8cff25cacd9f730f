/** Lambda handler of the index status (see shared/operations/index-status.ts). */
import { createHandler } from '../shared/composition/pipeline';
import { indexStatusOperation } from '../shared/operations/index-status';

export const handler = createHandler(indexStatusOperation);
