/**
 * The dialect for the code that runs custom SQL, loaded when it first needs it rather than imported: execute-sql
 * and a hook's `context.client.sql` run custom SQL, and every other operation's bundle leaves the dialect (some
 * 84 KB of parser and renderer) out. A bundle that runs custom SQL has the dialect bundled on its own beside it
 * (SQL_DIALECT_FILE, built from SQL_DIALECT_ENTRY: lib/service-stacks.ts places it with the SQL engine's files);
 * from source (tsx, the tests) the module is loaded from this folder.
 *
 * Everything the caller uses of the dialect comes from the one loaded module, its error classes too, so that
 * `instanceof` holds between what it throws and what its caller catches.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type * as Dialect from './dialect';

export type SqlDialect = typeof Dialect;

/** The dialect's file beside a bundle: `dialect.ts` and what it imports, bundled by esbuild. */
export const SQL_DIALECT_FILE = 'sql-dialect.js';
/** The dialect's entry, which the bundling step turns into SQL_DIALECT_FILE. */
export const SQL_DIALECT_ENTRY = path.join(__dirname, 'dialect.ts');

let loaded: SqlDialect | undefined;

/** The dialect, loaded on the first call: from the file beside the running code, else from source. */
export function sqlDialect(): SqlDialect {
  if (loaded) return loaded;
  const beside = path.join(__dirname, SQL_DIALECT_FILE);
  // The ids are not literals, so esbuild leaves both to run time: a bundle never carries the dialect itself.
  const file = existsSync(beside) ? beside : path.join(__dirname, 'dialect');
  try {
    loaded = require(file) as SqlDialect;
  } catch (cause) {
    throw new Error(
      `custom SQL's dialect cannot be loaded: ${SQL_DIALECT_FILE} is not beside the code (${__dirname}) and ` +
        `there is no source to load instead (${(cause as Error).message})`,
      { cause },
    );
  }
  return loaded;
}
