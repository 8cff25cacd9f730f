/** The callers of personal access keys (docs/interface.md §14): found by key, with the user's narrowed grants. */
import { userKeyDigest } from '../../../../shared/auth/user-key';
import { Catalog } from '../../../../shared/catalog/catalog';
import { parseConfig } from '../../../../shared/catalog-store/load-config';
import { userCallerForKey } from '../../../../shared/permissions/user-callers';

// biome-ignore lint/suspicious/noExplicitAny: the cases write invalid shapes on purpose
type Loose = any;

const KEY = 'dasu_unit-test-key-0000000000000000000000';
const DIGEST = userKeyDigest(KEY);

function config(): Loose {
  return {
    applications: [
      {
        appCode: 'app-a',
        grants: [
          {
            datasetCode: 'orders',
            operations: ['read', 'update'],
            readFields: ['customer', 'status', 'region'],
            writeFields: ['status'],
            rowFilter: { region: 'EU' },
          },
        ],
        users: [{ userId: 'u1', userName: 'User One', loginName: 'one@example.com', keyHashes: [DIGEST] }],
      },
      { appCode: 'app-b', grants: [{ datasetCode: 'orders', operations: ['read'] }] },
    ],
    datasets: [
      {
        appCode: 'app-a',
        datasetCode: 'orders',
        fields: [
          { name: 'customer', type: 'string' },
          { name: 'status', type: 'enum', options: ['new', 'paid'] },
          { name: 'region', type: 'string' },
          { name: 'amount', type: 'number' },
        ],
      },
      { appCode: 'app-a', datasetCode: 'notes', fields: [{ name: 'text', type: 'string' }] },
    ],
  };
}

const user = (value: Loose) => value.applications[0].users[0];

describe('the callers of personal access keys', () => {
  it('find the key’s user with the user’s narrowed grants and the application’s limits; a revoked key finds nobody', () => {
    const value = config();
    user(value).role = 'analyst';
    user(value).grants = [{ datasetCode: 'orders', operations: ['read'] }];
    const catalog = new Catalog(parseConfig(value));
    const caller = userCallerForKey(catalog, KEY);
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
    expect(userCallerForKey(catalog, `${KEY}-other`)).toBeUndefined();
    expect(userCallerForKey(catalog, KEY.slice(0, -1))).toBeUndefined();
  });
});
