/** Lambda handler of POST /openapi/data/get-list. */
import { createHandler } from '../shared/composition/pipeline';
import { getListOperation } from '../shared/operations/get-list';

export const handler = createHandler(getListOperation);
