/**
 * The callers of client-key mode (docs/interface.md §14): each user of each application, with the application's
 * grants narrowed by the user's, indexed by the SHA-256 digests of the user's personal access keys. Built once per
 * catalog (the container caches the catalog, so a request costs a hash and a map lookup, never a store read), and
 * rebuilt with the next catalog: a digest removed from the configuration stops finding its user at the next refresh.
 */
import type { Caller, CallerUser } from '../access/caller';
import { userGrants } from '../access/user-grants';
import type { Catalog } from '../catalog/catalog';
import { sameDigest, userKeyDigest } from './user-key';

interface Entry {
  digest: string;
  caller: Caller;
}

const indexes = new WeakMap<Catalog, ReadonlyMap<string, Entry>>();

function indexOf(catalog: Catalog): ReadonlyMap<string, Entry> {
  let index = indexes.get(catalog);
  if (index) return index;
  const built = new Map<string, Entry>();
  for (const application of catalog.allApplications()) {
    for (const user of application.config.users ?? []) {
      const callerUser: CallerUser = { userId: user.userId, userName: user.userName, loginName: user.loginName };
      if (user.role !== undefined) callerUser.role = user.role;
      const caller: Caller = { application, user: callerUser, grants: userGrants(application.grants, user) };
      for (const digest of user.keyHashes) built.set(digest, { digest, caller });
    }
  }
  index = built;
  indexes.set(catalog, index);
  return index;
}

/**
 * The caller a personal access key acts as; `undefined` for an unknown or revoked key. The map finds the
 * candidate by the key's digest, which a caller cannot steer (it would need SHA-256 preimages), and a
 * constant-time comparison of the digests decides.
 */
export function userCallerForKey(catalog: Catalog, key: string): Caller | undefined {
  const digest = userKeyDigest(key);
  const entry = indexOf(catalog).get(digest);
  return entry && sameDigest(entry.digest, digest) ? entry.caller : undefined;
}
