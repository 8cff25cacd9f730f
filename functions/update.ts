/** Lambda handler of POST /openapi/data/update. */
import { createHandler } from '../shared/composition/pipeline';
import { updateOperation } from '../shared/operations/update';

export const handler = createHandler(updateOperation);
