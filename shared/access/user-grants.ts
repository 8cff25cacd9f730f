/**
 * The users of an application (docs/interface.md §14): people who call with personal access keys on the `/client/` paths.
 * A user's `grants` only narrow the application's own: the effective grant is their intersection, computed here
 * once per catalog, so that everything after authentication reads one grant whichever way the caller came in.
 * The configuration checks (user-checks.ts) refuse a user grant this would not narrow.
 */
import type { GrantConfig, GrantOperation, UserConfig } from '../catalog/schema';

/** The intersection of two optional field lists, where absent means every field. */
function narrowFields(outer: string[] | undefined, inner: string[] | undefined): string[] | undefined {
  if (!outer) return inner;
  if (!inner) return outer;
  const allowed = new Set(outer);
  return inner.filter((name) => allowed.has(name));
}

/**
 * The grant a user has on one dataset: operations and field lists intersected, row filters combined (both
 * conditions hold). `undefined` when the user's grants leave the dataset out or the application has no grant.
 */
export function narrowGrant(
  appGrant: GrantConfig | undefined,
  userGrant: GrantConfig | undefined,
): GrantConfig | undefined {
  if (!appGrant || !userGrant) return undefined;
  const allowed = new Set<GrantOperation>(appGrant.operations);
  const grant: GrantConfig = {
    datasetCode: appGrant.datasetCode,
    operations: userGrant.operations.filter((operation) => allowed.has(operation)),
  };
  const readFields = narrowFields(appGrant.readFields, userGrant.readFields);
  if (readFields) grant.readFields = readFields;
  const writeFields = narrowFields(appGrant.writeFields, userGrant.writeFields);
  if (writeFields) grant.writeFields = writeFields;
  // Validation refuses a user key that the application's filter also has with another value, so the merge is the
  // conjunction of the two filters (get-list suffix filters are combined with AND).
  if (appGrant.rowFilter || userGrant.rowFilter) grant.rowFilter = { ...userGrant.rowFilter, ...appGrant.rowFilter };
  return grant;
}

/** A user's effective grants by dataset code: the application's, narrowed by the user's when it has some. */
export function userGrants(
  appGrants: ReadonlyMap<string, GrantConfig>,
  user: Pick<UserConfig, 'grants'>,
): ReadonlyMap<string, GrantConfig> {
  if (!user.grants) return appGrants;
  const grants = new Map<string, GrantConfig>();
  for (const userGrant of user.grants) {
    const grant = narrowGrant(appGrants.get(userGrant.datasetCode), userGrant);
    if (grant && grant.operations.length > 0) grants.set(grant.datasetCode, grant);
  }
  return grants;
}
