/** Lambda handler of POST /openapi/data/changes: the change feed (docs/interface.md §18). */
import { changesOperation } from '../shared/changes/change-feed';
import { createHandler } from '../shared/composition/pipeline';

export const handler = createHandler(changesOperation);
