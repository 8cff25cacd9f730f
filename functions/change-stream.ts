/** Lambda handler of the records table's stream: the change log's writer (docs/interface.md §18). */
import { handleStreamBatch } from '../shared/composition/change-log-ports';

export const handler = handleStreamBatch;
