/**
 * A registered query as MySQL itself runs it (docs/interface.md §20): nothing of its text is translated. Two
 * things change, both by position in the text as written:
 *
 * - every reference to a dataset (a table name that no WITH query in scope shadows) becomes a derived table that
 *   holds only what the caller may read: `orders o` → `(SELECT id, <visible fields>, gmt_create, gmt_modified
 *   FROM <mirror>.orders WHERE <row scope>) o`, and an unaliased `orders` keeps its name as the derived table's
 *   alias. Every way a statement can reach a table (subqueries, WITH, UNION, JOINs) goes through a table
 *   reference, so each reaches the narrowed rows and columns only;
 * - every `#{name}` becomes `?`, bound by the driver in the order `params` lists.
 *
 * Expressions keep their text, so result columns are named as MySQL names them. The query has been checked and
 * rendered for the caller by the dialect first (a hidden field is refused there as an unknown column).
 */
import type { FromItem, SelectStatement } from './mysql-ast';
import { tokenize } from './mysql-lexer';

export interface MysqlStatement {
  /** The statement, with `?` where each parameter is bound. */
  sql: string;
  /** The parameter of each `?`, in order (a name used twice is bound twice). */
  params: string[];
}

/** `source(datasetCode)`: the SELECT that yields the rows and columns of that dataset the caller may read. */
export function renderMysql(
  statement: SelectStatement,
  text: string,
  source: (datasetCode: string) => string,
): MysqlStatement {
  const references = new Map<number, FromItem & { kind: 'table' }>();
  collectDatasetReferences(statement, new Set(), references);
  const params: string[] = [];
  let sql = '';
  let at = 0;
  for (const token of tokenize(text)) {
    if (token.kind === 'end') break;
    const reference = references.get(token.start);
    if (token.kind === 'param') {
      sql += `${text.slice(at, token.start)}?`;
      params.push(token.value);
      at = token.end;
    } else if (reference) {
      const alias = reference.alias === undefined ? ` AS ${quoteName(reference.name)}` : '';
      sql += `${text.slice(at, token.start)}(${source(reference.name)})${alias}`;
      at = token.end;
    }
  }
  return { sql: sql + text.slice(at), params };
}

export function quoteName(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

/**
 * The table references of a statement that name a dataset, by position: a name that a WITH query in scope
 * carries reads that query (as MySQL resolves it), any other names a dataset.
 */
function collectDatasetReferences(
  node: unknown,
  ctes: ReadonlySet<string>,
  found: Map<number, FromItem & { kind: 'table' }>,
): void {
  if (Array.isArray(node)) {
    for (const item of node) collectDatasetReferences(item, ctes, found);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const value = node as { kind?: unknown };
  if (value.kind === 'statement') {
    const statement = node as SelectStatement;
    const scope = new Set(ctes);
    for (const cte of statement.with) {
      // A recursive WITH query reads itself; another reads only the ones before it.
      if (statement.recursive) scope.add(cte.name);
      collectDatasetReferences(cte.select, scope, found);
      scope.add(cte.name);
    }
    collectDatasetReferences([statement.body, statement.orderBy, statement.limit], scope, found);
    return;
  }
  if (value.kind === 'table') {
    const table = node as FromItem & { kind: 'table' };
    if (!ctes.has(table.name)) found.set(table.position, table);
    return;
  }
  for (const child of Object.values(node)) collectDatasetReferences(child, ctes, found);
}
