/** Facts about a statement's shape the rendering checks: result names, UNION terms, recursion, row counts. */
import { DialectError } from './dialect-error';
import type { Expr, QueryBody, SelectCore, SelectItem, SelectStatement } from './mysql-ast';
import type { Output, ScopeColumn } from './sqlite-scope';
import { isNumeric, TYPE_NAMES, type Ty } from './sqlite-types';

/** MySQL's name for a column without an alias: a column's own name, a string's content, else the text written. */
export function columnName(item: SelectItem): string {
  const expr = item.expr;
  if (expr.kind === 'column') return expr.column;
  if (expr.kind === 'string') return expr.value;
  return item.text;
}

export function checkDistinctNames(outputs: readonly Output[], what: string): void {
  const seen = new Set<string>();
  for (const output of outputs) {
    const lower = output.name.toLowerCase();
    if (seen.has(lower))
      throw new DialectError(`the column name '${output.name}' twice in ${what} (give the columns different aliases)`);
    seen.add(lower);
  }
}

/** The output column an ORDER BY of a UNION or a SELECT DISTINCT means: a position or a result column's name. */
export function outputIndex(expr: Expr, outputs: readonly Output[], body: QueryBody): number {
  if (expr.kind === 'number' && /^\d+$/.test(expr.text)) {
    const index = Number(expr.text) - 1;
    if (index < 0 || index >= outputs.length)
      throw new DialectError(`ORDER BY ${expr.text}: the result has ${outputs.length} columns`);
    return index;
  }
  if (expr.kind === 'column') {
    const index = outputs.findIndex((o) => o.name.toLowerCase() === expr.column.toLowerCase());
    if (index >= 0) return index;
  }
  if (body.kind === 'select') {
    const index = body.items.findIndex((item) => item.expr.kind !== 'star' && sameExpr(item.expr, expr));
    if (index >= 0) return index;
  }
  throw new DialectError(
    `an ORDER BY of a ${body.kind === 'select' ? 'SELECT DISTINCT' : 'UNION'} that is not one of its result columns (name the column or its position)`,
  );
}

export function sameExpr(a: unknown, b: unknown): boolean {
  return (
    JSON.stringify(a, (key, value) => (key === 'position' ? undefined : value)) ===
    JSON.stringify(b, (key, value) => (key === 'position' ? undefined : value))
  );
}

export const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A WITH query's columns: its own names for them, or the names of its SELECT's. */
export function cteOutputs(cte: SelectStatement['with'][number], outputs: readonly Output[]): Output[] {
  const named = cte.columns
    ? cte.columns.map((name, i) => {
        const output = outputs[i];
        if (!output || cte.columns?.length !== outputs.length)
          throw new DialectError(
            `the WITH query '${cte.name}' names ${cte.columns?.length} columns for ${outputs.length}`,
          );
        return { name, ty: output.ty };
      })
    : outputs.map((output) => ({ name: output.name, ty: output.ty }));
  checkDistinctNames(named, `the WITH query '${cte.name}'`);
  return named;
}

/** The SELECTs of a UNION in order, each with whether the UNION before it is ALL. */
export function unionTerms(body: QueryBody): { body: QueryBody; all: boolean }[] {
  if (body.kind !== 'union') return [{ body, all: true }];
  const left = unionTerms(body.left);
  const right = unionTerms(body.right);
  return [...left, { ...(right[0] as { body: QueryBody }), all: body.all }, ...right.slice(1)];
}

/** Whether a query (or a part of one) reads the table or WITH query of that name anywhere. */
export function readsTable(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((child) => readsTable(child, name));
  if (!node || typeof node !== 'object') return false;
  if ((node as { kind?: string }).kind === 'table' && (node as { name?: string }).name === name) return true;
  return Object.values(node).some((child) => readsTable(child, name));
}

/**
 * Whether a statement can answer one row at most, from its text alone: a single SELECT that aggregates without
 * GROUP BY, or `LIMIT 0` / `LIMIT 1`. A scalar subquery that can is run as written (no check for a second row).
 */
export function atMostOneRow(statement: SelectStatement): boolean {
  const count = statement.limit?.count;
  if (count?.kind === 'number' && Number(count.text) <= 1) return true;
  const core = statement.body;
  if (core.kind !== 'select' || core.groupBy.length > 0 || statement.with.length > 0) return false;
  const visit = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(visit);
    if (!node || typeof node !== 'object') return false;
    const kind = (node as { kind?: string }).kind;
    if (kind === 'aggregate' && (node as { over?: unknown }).over === undefined) return true;
    if (kind === 'subquery' || kind === 'exists' || kind === 'in-select' || kind === 'window') return false;
    return Object.values(node).some(visit);
  };
  return visit(core.items);
}

/** Whether a SELECT's list aggregates or runs a window function (subqueries aside). */
export function aggregatesOrWindows(core: SelectCore): boolean {
  const visit = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(visit);
    if (!node || typeof node !== 'object') return false;
    const kind = (node as { kind?: string }).kind;
    if (kind === 'aggregate' || kind === 'window') return true;
    if (kind === 'subquery' || kind === 'exists' || kind === 'in-select') return false;
    return Object.values(node).some(visit);
  };
  return visit(core.items);
}

/**
 * A recursive SELECT's column against the type the seed gave it. MySQL 8 keeps the seed's type: a longer text or
 * a larger decimal than the seed's fails there ("Data too long", "Out of range"), a value of another kind is
 * converted. Accepted: NULL, the column carried over unchanged, the same kind of number or date, and text (or a
 * decimal) that is a field of the same type as the seed's (so of the same width).
 */
export function checkRecursiveColumn(
  output: Output,
  seed: ScopeColumn | undefined,
  value: { ty: Ty; column: ScopeColumn | undefined },
  alias: string,
  what: string,
  position: number,
): void {
  const seedTy = output.ty;
  const ty = value.ty;
  if (ty.k === 'null') return;
  const carried = value.column?.source?.alias === alias && sameName(value.column.name, output.name);
  if (carried) return;
  const refuse = (why: string) => {
    throw new DialectError(`the column '${output.name}' of ${what} ${why}`, position);
  };
  if (seedTy.k === 'str' || seedTy.k === 'dec') {
    const kind = seed?.kind;
    if (kind !== undefined && kind === value.column?.kind) return;
    refuse(
      seedTy.k === 'str'
        ? "given new text by its recursive SELECT (MySQL 8 keeps the first SELECT's width for it and refuses longer text: carry the column over, or select a field of the same type in both)"
        : "given a new decimal by its recursive SELECT (MySQL 8 keeps the first SELECT's precision for it)",
    );
  }
  if (seedTy.k === 'dbl' && isNumeric(ty)) return;
  if (seedTy.k === ty.k) return;
  refuse(`given ${TYPE_NAMES[ty.k]} by its recursive SELECT where its first SELECT gives ${TYPE_NAMES[seedTy.k]}`);
}
