/**
 * The configuration checks of `users` (docs/interface.md §14), through the schema as a file is loaded: narrowing
 * grants only, unique userIds, unique key digests, row filters that can apply.
 */
import { userKeyDigest } from '../../../../shared/auth/user-key';
import { ConfigError, parseConfig } from '../../../../shared/catalog-store/load-config';
import { type LooseConfig, USER_KEY, USER_KEY_DIGEST, userKeyConfig } from '../../../support/user-key-config';

const OTHER_DIGEST = userKeyDigest(`${USER_KEY}-other`);

function problemsOf(mutate: (config: LooseConfig) => void) {
  const value = userKeyConfig();
  mutate(value);
  try {
    parseConfig(value);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const user = (value: LooseConfig) => value.applications[0].users[0];

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
        user(c).keyHashes = [USER_KEY_DIGEST, OTHER_DIGEST];
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
        user(c).keyHashes = [USER_KEY];
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
