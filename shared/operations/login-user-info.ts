/**
 * login-user-info (`GET /client/user/loginUserInfo`, docs/interface.md §14): who a personal access key belongs to. Client-key
 * authentication has already found the user; this answers it in the platform's shape.
 */
import type { LoginUserInfo } from '../contract/operation-schemas';
import type { Operation } from '../operation/operation';

export const loginUserInfoOperation: Operation = {
  name: 'login-user-info',
  async run(context): Promise<LoginUserInfo> {
    const user = context.caller.user;
    // Only the /client/ pipeline routes here, and it answers 1002 before this point when there is no user.
    if (!user) throw new Error('login-user-info ran without a client-key user');
    return {
      id: user.userId,
      userName: user.userName,
      loginName: user.loginName,
      appCode: context.caller.application.appCode,
      role: user.role ?? null,
    };
  },
};
