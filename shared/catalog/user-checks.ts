/**
 * The configuration checks of `users` (docs/interface.md §14), run with the schema's other cross-reference checks:
 * a user grant may only narrow the application's (no dataset, operation or field the application lacks, no row
 * filter condition replacing the application's), userIds are unique in an application, and every key digest is
 * unique in the deployment. Written against the shapes it reads, so that the schema can call it without a cycle.
 */

type Problem = (path: (string | number)[], message: string) => void;

interface GrantShape {
  datasetCode: string;
  operations: readonly string[];
  readFields?: string[] | undefined;
  writeFields?: string[] | undefined;
  rowFilter?: Record<string, unknown> | undefined;
}

interface ConfigShape {
  applications: readonly {
    appCode: string;
    grants?: readonly GrantShape[] | undefined;
    users?:
      | readonly { userId: string; keyHashes: readonly string[]; grants?: readonly GrantShape[] | undefined }[]
      | undefined;
  }[];
  datasets: readonly { datasetCode: string; fields: readonly { name: string }[] }[];
}

/** Fields of a user's list that the application's list leaves out (a list that is absent inherits, never widens). */
function fieldsOutside(outer: string[] | undefined, inner: string[] | undefined): string[] {
  if (!outer || !inner) return [];
  const allowed = new Set(outer);
  return inner.filter((name) => !allowed.has(name));
}

/** Problems of the `users` of every application, each reported by path. */
export function checkUserReferences(config: ConfigShape, problem: Problem): void {
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
  grant: GrantShape,
  appGrant: GrantShape | undefined,
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
