/** Lambda handler of POST /openapi/data/batch-create. */
import { createHandler } from '../shared/http/pipeline';
import { batchCreateOperation } from '../shared/operations/batch-create';

export const handler = createHandler(batchCreateOperation);
