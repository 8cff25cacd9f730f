/** Lambda handler of the deploy's custom resource that makes custom SQL's SELECT-only database user (docs/interface.md §20). */
import { handleQueryUser } from '../shared/composition/sql-query-user';

export const handler = handleQueryUser;
