/** The /client/ routes (docs/interface.md §14), derived from the signed route table. */
import { clientPathOf, clientRoutes } from '../../../../shared/contract/client-routes';
import { ROUTES, type RouteDefinition } from '../../../../shared/contract/routes';

describe('client routes', () => {
  it('are derived from every signed route, plus loginUserInfo and the bff endpoint', () => {
    expect(clientPathOf('/openapi/data/batch-create')).toBe('/client/data/batch-create');
    expect(clientPathOf('/api/custom/executeSql')).toBe('/client/custom/executeSql');
    const routes = clientRoutes();
    expect(routes).toHaveLength(ROUTES.length + 2);
    for (const route of ROUTES) {
      expect(routes).toContainEqual({ ...route, path: clientPathOf(route.path), mode: 'client' });
    }
    expect(routes.at(-2)).toMatchObject({ method: 'GET', path: '/client/user/loginUserInfo', mode: 'client' });
    expect(routes.at(-1)).toMatchObject({
      operation: 'bff-endpoint',
      method: 'GET',
      path: '/client/bff/endpoint/{appCode}/{functionName}',
      mode: 'client',
    });
  });

  it('give an operation added to the signed table its /client/ twin, with everything else of its route', () => {
    const batch: RouteDefinition = {
      operation: 'create',
      method: 'POST',
      path: '/openapi/data/batch-create',
      functionFile: 'batch-create',
      requiresDataset: true,
      grantOperation: 'create',
      writes: true,
    };
    expect(clientRoutes([...ROUTES, batch])).toContainEqual({
      ...batch,
      path: '/client/data/batch-create',
      mode: 'client',
    });
  });
});
