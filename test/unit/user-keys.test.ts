/**
 * Client-key mode's pure parts (docs/interface.md §14): personal access keys and their digests, the configuration checks of
 * `users`, how a user's grants narrow the application's, and the catalog's lookup by digest.
 */
import fc from 'fast-check';
import { generateUserKey, sameDigest, USER_KEY_PATTERN, userKeyDigest } from '../../shared/auth/user-key';
import { Catalog } from '../../shared/catalog/catalog';
import type { GrantConfig } from '../../shared/catalog/schema';
import { narrowGrant } from '../../shared/catalog/user-grants';
import { ConfigError, parseConfig } from '../../shared/catalog-store/load-config';
import { clientPathOf, clientRoutes } from '../../shared/contract/client-routes';
import { ROUTES, type RouteDefinition } from '../../shared/contract/routes';
import { userCallerForKey } from '../../shared/permissions/user-callers';

// biome-ignore lint/suspicious/noExplicitAny: the cases write invalid shapes on purpose
type Loose = any;

const KEY = 'dasu_unit-test-key-0000000000000000000000';
const DIGEST = userKeyDigest(KEY);
const OTHER_DIGEST = userKeyDigest(`${KEY}-other`);

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

function problemsOf(mutate: (config: Loose) => void) {
  const value = config();
  mutate(value);
  try {
    parseConfig(value);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const user = (value: Loose) => value.applications[0].users[0];

describe('personal access keys', () => {
  it('are at least 32 random characters, with a recognisable prefix, and differ each time', () => {
    const keys = new Set(Array.from({ length: 50 }, generateUserKey));
    expect(keys.size).toBe(50);
    for (const key of keys) {
      expect(key).toMatch(/^dasu_[A-Za-z0-9_-]{43}$/);
      expect(USER_KEY_PATTERN.test(key)).toBe(true);
    }
  });

  it('are known by their lower-case hex SHA-256 digest', () => {
    // echo -n 'abc' | sha256sum
    expect(userKeyDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compare equal only when the digests are', () => {
    expect(sameDigest(DIGEST, DIGEST)).toBe(true);
    expect(sameDigest(DIGEST, OTHER_DIGEST)).toBe(false);
    expect(sameDigest(DIGEST, 'abc')).toBe(false);
  });
});

describe('users in the configuration', () => {
  it('are accepted when they only narrow the application', () => {
    expect(
      problemsOf((c) => {
        user(c).role = 'analyst';
        user(c).grants = [
          { datasetCode: 'orders', operations: ['read'], readFields: ['customer'], rowFilter: { status: 'new' } },
        ];
      }),
    ).toEqual([]);
  });

  it('refuse a key digest listed twice, in one user or across applications', () => {
    expect(
      problemsOf((c) => {
        user(c).keyHashes = [DIGEST, OTHER_DIGEST];
        c.applications[1].users = [{ userId: 'u9', userName: 'U', loginName: 'u', keyHashes: [OTHER_DIGEST] }];
      }),
    ).toEqual([
      {
        path: 'applications[1].users[0].keyHashes[0]',
        message: 'duplicate key digest (also at applications[0].users[0].keyHashes[1]); every key has its own digest',
      },
    ]);
  });

  it('refuse a key instead of its digest, and a duplicate userId', () => {
    expect(
      problemsOf((c) => {
        user(c).keyHashes = [KEY];
        c.applications[0].users.push({ userId: 'u1', userName: 'Again', loginName: 'again', keyHashes: [] });
      }),
    ).toEqual([
      {
        path: 'applications[0].users[0].keyHashes[0]',
        message: 'must be the lower-case hex SHA-256 digest of a key (das user-key create prints it)',
      },
      { path: 'applications[0].users[1].userId', message: "duplicate userId 'u1' in 'app-a'" },
    ]);
  });

  it('refuse grants to unknown datasets, and grants wider than the application’s', () => {
    expect(
      problemsOf((c) => {
        user(c).grants = [
          { datasetCode: 'nowhere', operations: ['read'] },
          { datasetCode: 'notes', operations: ['read'] },
          {
            datasetCode: 'orders',
            operations: ['read', 'create'],
            readFields: ['customer', 'amount'],
            writeFields: ['status', 'customer'],
            rowFilter: { region: 'US', customer: 'c-1' },
          },
        ];
      }),
    ).toEqual([
      { path: 'applications[0].users[0].grants[0].datasetCode', message: "unknown dataset 'nowhere'" },
      {
        path: 'applications[0].users[0].grants[1].datasetCode',
        message: "wider than the application's grants: 'app-a' has no grant for 'notes'",
      },
      {
        path: 'applications[0].users[0].grants[2].operations[1]',
        message: "wider than the application's grant: 'app-a' may not create 'orders'",
      },
      {
        path: 'applications[0].users[0].grants[2].readFields',
        message: "wider than the application's grant: 'amount' outside its readFields",
      },
      {
        path: 'applications[0].users[0].grants[2].writeFields',
        message: "wider than the application's grant: 'customer' outside its writeFields",
      },
      {
        path: 'applications[0].users[0].grants[2].rowFilter.region',
        message:
          "replaces the application's rowFilter condition on 'region'; a user's rowFilter may only add conditions",
      },
    ]);
  });

  it('refuse a user rowFilter that could never be applied, by path', () => {
    expect(
      problemsOf((c) => {
        user(c).grants = [{ datasetCode: 'orders', operations: ['read'], rowFilter: { amount_like: 'x' } }];
      }),
    ).toEqual([
      { path: 'applications[0].users[0].grants[0].rowFilter', message: expect.stringContaining('amount_like') },
    ]);
  });
});

describe('narrowed grants', () => {
  const app: GrantConfig = {
    datasetCode: 'orders',
    operations: ['read', 'update'],
    readFields: ['customer', 'status', 'region'],
    writeFields: ['status'],
    rowFilter: { region: 'EU' },
  };

  it('are the intersection with the application’s grant, row filters combined', () => {
    expect(
      narrowGrant(app, {
        datasetCode: 'orders',
        operations: ['read'],
        readFields: ['status'],
        rowFilter: { status: 'new' },
      }),
    ).toEqual({
      datasetCode: 'orders',
      operations: ['read'],
      readFields: ['status'],
      writeFields: ['status'],
      rowFilter: { status: 'new', region: 'EU' },
    });
    expect(narrowGrant(app, { datasetCode: 'orders', operations: ['read', 'update'] })).toEqual(app);
    expect(narrowGrant(undefined, { datasetCode: 'orders', operations: ['read'] })).toBeUndefined();
  });

  it('never reach beyond the application’s grant (property)', () => {
    const fields = fc.subarray(['customer', 'status', 'region', 'amount']);
    fc.assert(
      fc.property(
        fc.subarray(['read', 'create', 'update'] as const, { minLength: 1 }),
        fc.option(fields, { nil: undefined }),
        fc.option(fields, { nil: undefined }),
        (operations, readFields, writeFields) => {
          const grant = narrowGrant(app, {
            datasetCode: 'orders',
            operations,
            ...(readFields ? { readFields } : {}),
            ...(writeFields ? { writeFields } : {}),
          }) as GrantConfig;
          for (const operation of grant.operations) expect(app.operations).toContain(operation);
          for (const name of grant.readFields ?? []) expect(app.readFields).toContain(name);
          for (const name of grant.writeFields ?? []) expect(app.writeFields).toContain(name);
          expect(grant.readFields).toBeDefined();
          expect(grant.rowFilter).toMatchObject({ region: 'EU' });
        },
      ),
    );
  });
});

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

describe('client routes', () => {
  it('are derived from every signed route, plus loginUserInfo', () => {
    expect(clientPathOf('/openapi/data/batch-create')).toBe('/client/data/batch-create');
    expect(clientPathOf('/api/custom/executeSql')).toBe('/client/custom/executeSql');
    const routes = clientRoutes();
    expect(routes).toHaveLength(ROUTES.length + 1);
    for (const route of ROUTES) {
      expect(routes).toContainEqual({ ...route, path: clientPathOf(route.path), mode: 'client' });
    }
    expect(routes.at(-1)).toMatchObject({ method: 'GET', path: '/client/user/loginUserInfo', mode: 'client' });
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
