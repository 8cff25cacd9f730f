/** Lambda handler of POST /openapi/data/aggregate. Its bundle needs SQL_BUNDLE_ASSETS (shared/sql/bundle-assets.ts) beside it. */
import { createHandler } from '../shared/composition/pipeline';
import { aggregateOperation } from '../shared/operations/aggregate';

export const handler = createHandler(aggregateOperation);
