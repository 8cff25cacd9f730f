/** Lambda handler of GET /client/user/loginUserInfo (client-key mode only). */
import { createHandler } from '../shared/composition/pipeline';
import { loginUserInfoOperation } from '../shared/operations/login-user-info';

export const handler = createHandler(loginUserInfoOperation);
