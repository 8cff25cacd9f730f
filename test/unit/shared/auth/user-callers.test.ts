/** The callers of personal access keys (docs/interface.md §14): found by key, with the user's narrowed grants. */
import { userCallerForKey } from '../../../../shared/auth/user-callers';
import { Catalog } from '../../../../shared/catalog/catalog';
import { parseConfig } from '../../../../shared/catalog-store/load-config';
import { type LooseConfig, USER_KEY, userKeyConfig } from '../../../support/user-key-config';

const user = (value: LooseConfig) => value.applications[0].users[0];

describe('the callers of personal access keys', () => {
  it('find the key’s user with the user’s narrowed grants and the application’s limits; a revoked key finds nobody', () => {
    const value = userKeyConfig();
    user(value).role = 'analyst';
    user(value).grants = [{ datasetCode: 'orders', operations: ['read'] }];
    const catalog = new Catalog(parseConfig(value));
    const caller = userCallerForKey(catalog, USER_KEY);
    expect(caller?.user).toEqual({ userId: 'u1', userName: 'User One', loginName: 'one@example.com', role: 'analyst' });
    expect(caller?.application).toBe(catalog.application('app-a'));
    expect(caller?.grants.get('orders')).toEqual({
      datasetCode: 'orders',
      operations: ['read'],
      readFields: ['customer', 'status', 'region'],
      writeFields: ['status'],
      rowFilter: { region: 'EU' },
    });
    expect(catalog.application('app-a')?.grants.get('orders')?.operations).toEqual(['read', 'update']);
    expect(userCallerForKey(catalog, `${USER_KEY}-other`)).toBeUndefined();
    expect(userCallerForKey(catalog, USER_KEY.slice(0, -1))).toBeUndefined();
  });
});
