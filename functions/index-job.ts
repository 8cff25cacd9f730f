/** Lambda handler of the index jobs' state machine (see shared/composition/index-job-task.ts). */
import { indexJobTask } from '../shared/composition/index-job-task';

export const handler = indexJobTask();
