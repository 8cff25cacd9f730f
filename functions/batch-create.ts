/** Lambda handler of POST /openapi/data/batch-create. */
import { createHandler } from '../shared/composition/pipeline';
import { batchCreateOperation } from '../shared/operations/batch-create';

export const handler = createHandler(batchCreateOperation);
