/**
 * Names in the mirror's database that the query path needs without the dialect's renderer (which custom SQL loads
 * from a file of its own, so that no function's bundle carries it).
 */

/** The bookkeeping table: `$` is outside every code's alphabet, so no dataset's table can be named so. */
export const STATE_TABLE = 'das$mirror';

/** A MySQL identifier, quoted (as sql-dialect/mysql-render.ts's quoteName). */
export function quoteIdentifier(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}
