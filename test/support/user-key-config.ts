/**
 * One application with a user and a personal access key, beside an application without users: the configuration
 * the unit tests of users' checks and of key callers start from, returned fresh (and loosely typed) so that a case
 * can write an invalid shape into it.
 */
import { userKeyDigest } from '../../shared/auth/user-key';

// biome-ignore lint/suspicious/noExplicitAny: the cases write invalid shapes on purpose
export type LooseConfig = any;

export const USER_KEY = 'dasu_unit-test-key-0000000000000000000000';
export const USER_KEY_DIGEST = userKeyDigest(USER_KEY);

export function userKeyConfig(): LooseConfig {
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
        users: [{ userId: 'u1', userName: 'User One', loginName: 'one@example.com', keyHashes: [USER_KEY_DIGEST] }],
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
