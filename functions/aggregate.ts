/** Lambda handler of POST /openapi/data/aggregate. Its bundle needs SQL_BUNDLE_ASSETS (shared/sql/bundle-assets.ts) beside it. */
import { withLazyDeployedMirrorEngine } from '../shared/composition/lazy-mirror-engine';
import { createHandler } from '../shared/composition/pipeline';
import { aggregateOperation } from '../shared/operations/aggregate';

export const handler = withLazyDeployedMirrorEngine(createHandler(aggregateOperation));
