/**
 * The users of an application (contract §14): people who call with personal access keys on the `/client/` paths.
 * A user's `grants` only narrow the application's own: the effective grant is their intersection, computed here
 * once per catalog, so that everything after authentication reads one grant whichever way the caller came in.
 * The configuration checks refuse what could widen a grant (a dataset, operation or field the application does
 * not have, a row filter that replaces the application's condition) and a key digest listed twice.
 */
import type { CatalogConfig, GrantConfig, GrantOperation, UserConfig } from './schema';

type Problem = (path: (string | number)[], message: string) => void;

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

/** Fields of a user's list that the application's list leaves out (a list that is absent inherits, never widens). */
function fieldsOutside(outer: string[] | undefined, inner: string[] | undefined): string[] {
  if (!outer || !inner) return [];
  const allowed = new Set(outer);
  return inner.filter((name) => !allowed.has(name));
}

/** Configuration checks of `users` (run with the other cross-reference checks of the schema). */
export function checkUserReferences(config: CatalogConfig, problem: Problem): void {
  const datasetFields = new Map(config.datasets.map((d) => [d.datasetCode, new Set(d.fields.map((f) => f.name))]));
  const digests = new Map<string, string>();
  config.applications.forEach((app, i) => {
    const appGrants = new Map((app.grants ?? []).map((grant) => [grant.datasetCode, grant]));
    const userIds = new Set<string>();
    (app.users ?? []).forEach((user, u) => {
      const at = ['applications', i, 'users', u];
      if (userIds.has(user.userId)) problem([...at, 'userId'], `duplicate userId '${user.userId}' in '${app.appCode}'`);
      userIds.add(user.userId);
      user.keyHashes.forEach((digest, k) => {
        const first = digests.get(digest);
        if (first)
          problem([...at, 'keyHashes', k], `duplicate key digest (also at ${first}); every key has its own digest`);
        else digests.set(digest, `applications[${i}].users[${u}].keyHashes[${k}]`);
      });
      const granted = new Set<string>();
      (user.grants ?? []).forEach((grant, j) => {
        checkUserGrant(grant, appGrants.get(grant.datasetCode), datasetFields.get(grant.datasetCode), granted, {
          problem,
          at: [...at, 'grants', j],
          appCode: app.appCode,
        });
      });
    });
  });
}

function checkUserGrant(
  grant: GrantConfig,
  appGrant: GrantConfig | undefined,
  fields: ReadonlySet<string> | undefined,
  granted: Set<string>,
  where: { problem: Problem; at: (string | number)[]; appCode: string },
): void {
  const { problem, at, appCode } = where;
  const code = grant.datasetCode;
  if (granted.has(code)) problem([...at, 'datasetCode'], `duplicate grant for '${code}'`);
  granted.add(code);
  if (!fields) {
    problem([...at, 'datasetCode'], `unknown dataset '${code}'`);
    return;
  }
  if (!appGrant) {
    problem([...at, 'datasetCode'], `wider than the application's grants: '${appCode}' has no grant for '${code}'`);
    return;
  }
  grant.operations.forEach((operation, k) => {
    if (!appGrant.operations.includes(operation)) {
      problem(
        [...at, 'operations', k],
        `wider than the application's grant: '${appCode}' may not ${operation} '${code}'`,
      );
    }
  });
  for (const list of ['readFields', 'writeFields'] as const) {
    grant[list]?.forEach((name, k) => {
      if (!fields.has(name)) problem([...at, list, k], `unknown field '${name}' of dataset '${code}'`);
    });
    const outside = fieldsOutside(appGrant[list], grant[list]);
    if (outside.length > 0) {
      problem(
        [...at, list],
        `wider than the application's grant: ${outside.map((n) => `'${n}'`).join(', ')} outside its ${list}`,
      );
    }
  }
  for (const [key, value] of Object.entries(grant.rowFilter ?? {})) {
    const own = appGrant.rowFilter?.[key];
    if (own !== undefined && JSON.stringify(own) !== JSON.stringify(value)) {
      problem(
        [...at, 'rowFilter', key],
        `replaces the application's rowFilter condition on '${key}'; a user's rowFilter may only add conditions`,
      );
    }
  }
}
