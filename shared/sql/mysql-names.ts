/**
 * A name quoted for MySQL text. The dialect (sql-dialect/mysql-render.ts) has the same rule; this copy is what the
 * operations' own modules use, so that no function's bundle carries the dialect for it (the dialect is loaded at
 * a query's first run, sql-dialect/dialect-loader.ts).
 */
export function quoteName(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}
