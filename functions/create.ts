/** Lambda handler of POST /openapi/data/create. */
import { createHandler } from '../shared/composition/pipeline';
import { createOperation } from '../shared/operations/create';

export const handler = createHandler(createOperation);
