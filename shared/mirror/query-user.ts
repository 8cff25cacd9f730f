/**
 * The SELECT-only database user custom SQL runs as in a deployment (docs/interface.md §20): created by the mirror's
 * writer with the password of the query user's own secret, and allowed to read the mirror's database (its tables, and
 * the mirror's bookkeeping, which a query reads to wait until the mirror holds its own writes) and to make temporary
 * tables there (a result over the Data API's 1 MiB is paged from one, private to the query's session): it cannot
 * write any table of the mirror. Run on every deploy:
 * creating is skipped when the user exists, and the password is set again, so a rotated query secret takes effect
 * at the next deploy. The writer never learns the query password from anywhere but that secret.
 */
import { quoteName } from '../sql-dialect/mysql-render';
import type { SqlSession } from './mirror-tables';

/** A MySQL string literal: the generated passwords hold no quote or backslash, and would be escaped if they did. */
function literal(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The statements that make `user` a SELECT-only user of `database` with `password`, in order. */
export function queryUserStatements(user: string, password: string, database: string): string[] {
  const account = `${literal(user)}@'%'`;
  return [
    // Account management takes no bound parameters: the password is a literal.
    `CREATE USER IF NOT EXISTS ${account} IDENTIFIED BY ${literal(password)}`,
    `ALTER USER ${account} IDENTIFIED BY ${literal(password)}`,
    `GRANT SELECT, CREATE TEMPORARY TABLES ON ${quoteName(database)}.* TO ${account}`,
  ];
}

export interface EnsureQueryUserOptions {
  /** The writer's session (the cluster's admin user). */
  writer: SqlSession;
  user: string;
  password: string;
  database: string;
  /** How long a paused cluster may take to resume before this gives up (ms). */
  resumeWithinMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Makes the query user as `queryUserStatements` says, waiting for a paused cluster to resume. */
export async function ensureQueryUser(options: EnsureQueryUserOptions): Promise<void> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + options.resumeWithinMs;
  for (const statement of queryUserStatements(options.user, options.password, options.database)) {
    for (;;) {
      try {
        await options.writer.execute(statement);
        break;
      } catch (error) {
        // The Data API answers DatabaseResumingException while a paused cluster starts (tens of seconds).
        if ((error as { name?: unknown }).name !== 'DatabaseResumingException' || now() >= deadline) throw error;
        await sleep(5_000);
      }
    }
  }
}
