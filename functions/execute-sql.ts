/** Lambda handler of POST /api/custom/executeSql. Its bundle needs SQL_BUNDLE_ASSETS (shared/sql/bundle-assets.ts) beside it. */
import { withDeployedMirrorEngine } from '../shared/composition/deployed-mirror-engine';
import { createHandler } from '../shared/composition/pipeline';
import { executeSqlOperation } from '../shared/operations/execute-sql';

export const handler = withDeployedMirrorEngine(createHandler(executeSqlOperation));
