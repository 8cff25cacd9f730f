/** Lambda handler of the schedule that keeps custom SQL's MySQL mirror in step with the change log (docs/interface.md §20). */
import { handleMirrorRun } from '../shared/composition/sql-mirror';

export const handler = handleMirrorRun;
