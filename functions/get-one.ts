/** Lambda handler of POST /openapi/data/get-one. */
import { createHandler } from '../shared/composition/pipeline';
import { getOneOperation } from '../shared/operations/get-one';

export const handler = createHandler(getOneOperation);
