/**
 * The names a stage's custom SQL resources are deployed under (lib/sql-cluster.ts) and found by again
 * (`das sql status --stage`), as the tables are by `tableNameFor`: the cluster's identifier, the mirror's database
 * and the secrets of its two database users.
 */

/** The mirror's database on the cluster. */
export const SQL_DATABASE = 'mirror';

/** The Aurora cluster's identifier in a stage. */
export function sqlClusterIdentifierFor(stage: string): string {
  return `data-access-service-${stage}-sql`;
}

/** The secret of a database user of the stage's cluster: the mirror's writer, or the SELECT-only query user. */
export function sqlSecretNameFor(stage: string, user: 'writer' | 'query'): string {
  return `data-access-service/${stage}/sql/${user}`;
}

/** The stage's default signing secret, which every deployed stage has, with custom SQL on Aurora or not. */
export function defaultSecretNameFor(stage: string): string {
  return `data-access-service/${stage}/default`;
}
