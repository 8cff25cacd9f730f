/** The local server finds a request's route as API Gateway does: literal paths exactly, `{name}` as one segment. */
import { routeMatcher } from '../../../../bin/local/lambda-http';
import { serviceRoutes } from '../../../../shared/contract/client-routes';

const match = routeMatcher(serviceRoutes());

describe('routeMatcher', () => {
  it('finds a literal path exactly, with no path parameters', () => {
    expect(match('/client/user/loginUserInfo')).toMatchObject({
      route: { operation: 'login-user-info' },
      pathParameters: null,
    });
    expect(match('/openapi/data/get-list/')).toBeUndefined();
  });

  it('fills each {name} segment with its URL-decoded value', () => {
    expect(match('/client/bff/endpoint/app-demo/mask%20email')).toMatchObject({
      route: { operation: 'bff-endpoint' },
      pathParameters: { appCode: 'app-demo', functionName: 'mask email' },
    });
  });

  it('matches a {name} to one whole, non-empty segment only, and no malformed encoding', () => {
    expect(match('/client/bff/endpoint/app-demo')).toBeUndefined();
    expect(match('/client/bff/endpoint/app-demo/')).toBeUndefined();
    expect(match('/client/bff/endpoint//mask-email')).toBeUndefined();
    expect(match('/client/bff/endpoint/app-demo/mask-email/extra')).toBeUndefined();
    expect(match('/client/bff/endpoint/app-demo/%E0%A4%A')).toBeUndefined();
  });
});
