/** Lambda handler of the fold queue: per-value totals folded beside the writes (shared/changes/value-folds.ts). */
import { handleFoldBatch } from '../shared/composition/change-log-ports';

export const handler = handleFoldBatch;
