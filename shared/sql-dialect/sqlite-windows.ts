/** Aggregates and window functions, rendered for SQLite as MySQL 8 computes them (sqlite-render.ts). */

import { DialectError } from './dialect-error';
import type { Expr, SelectCore, WindowSpec } from './mysql-ast';
import type { ExprRenderer, Scope } from './sqlite-scope';
import {
  BIN,
  convert,
  DBL,
  DIV_PRECISION,
  groupKey,
  INT,
  isBinary,
  literal,
  MAX_SCALE,
  merge,
  orderKey,
  quote,
  type R,
  STR,
  scaleOf,
  toJsonValue,
  toNumeric,
  toText,
} from './sqlite-types';

export function renderAggregate(
  renderer: ExprRenderer,
  expr: Extract<Expr, { kind: 'aggregate' }>,
  scope: Scope,
  windows: SelectCore['windows'],
): R {
  if (!scope.aggregates && !expr.over)
    throw new DialectError(
      `${expr.name}() here (aggregates belong in the select list, HAVING or ORDER BY)`,
      expr.position,
    );
  const inner: Scope = { ...scope, aggregates: false };
  const args = expr.args.map((e) => renderer.expr(e, inner, windows));
  const over = expr.over ? ` OVER ${renderOver(renderer, expr.over, scope, windows)}` : '';
  const [a, b] = args as [R, R];
  switch (expr.name) {
    case 'COUNT':
      if (expr.star) return { sql: `count(*)${over}`, ty: INT };
      if (expr.distinct) {
        if (a.ty.k === 'json') throw new DialectError('COUNT(DISTINCT ...) of a JSON value');
        return { sql: `count(DISTINCT ${groupKey(a)})`, ty: INT };
      }
      return { sql: `count(${a.sql})${over}`, ty: INT };
    case 'SUM': {
      const value = toNumeric(a, 'SUM()');
      if (value.ty.k === 'dbl') return { sql: `sum(${value.sql})${over}`, ty: DBL };
      if (value.ty.k === 'int') return { sql: `sum(${value.sql})${over}`, ty: { k: 'dec', s: 0 } };
      return { sql: `my_round_dec(sum(${value.sql})${over}, ${scaleOf(value.ty)})`, ty: value.ty };
    }
    case 'AVG': {
      const value = toNumeric(a, 'AVG()');
      if (value.ty.k === 'dbl') return { sql: `avg(${value.sql})${over}`, ty: DBL };
      const s = scaleOf(value.ty);
      const scale = Math.min(MAX_SCALE, s + DIV_PRECISION);
      return {
        sql: `my_div(sum(${value.sql})${over}, count(${value.sql})${over}, ${s}, 0, ${scale})`,
        ty: { k: 'dec', s: scale },
      };
    }
    case 'MIN':
    case 'MAX': {
      if (a.ty.k === 'json') throw new DialectError(`${expr.name}() of a JSON value`);
      if (a.ty.k === 'str' && !a.ty.bin) {
        if (over) throw new DialectError(`${expr.name}() of text with OVER`);
        return { sql: `my_${expr.name.toLowerCase()}_ci(${a.sql})`, ty: a.ty };
      }
      return { sql: `${expr.name.toLowerCase()}(${a.sql})${over}`, ty: a.ty };
    }
    case 'GROUP_CONCAT': {
      const value = args.length === 1 ? toText(a) : `(${args.map(toText).join(' || ')})`;
      const key = expr.distinct ? groupKey({ sql: value, ty: args.some((r) => isBinary(r.ty)) ? BIN : STR }) : 'NULL';
      const order = expr.orderBy?.length
        ? ` ORDER BY ${expr.orderBy
            .map((item) => {
              const position =
                item.expr.kind === 'number' && /^\d+$/.test(item.expr.text)
                  ? args[Number(item.expr.text) - 1]
                  : undefined;
              return `${orderKey(position ?? renderer.expr(item.expr, inner, windows))}${item.desc ? ' DESC' : ''}`;
            })
            .join(', ')}`
        : '';
      return {
        sql: `my_group_concat(${value}, ${literal(expr.separator ?? ',')}, ${key}${order})`,
        ty: args.some((r) => isBinary(r.ty)) ? BIN : STR,
      };
    }
    case 'JSON_ARRAYAGG':
      return { sql: `my_json_arrayagg(${toJsonValue(a)})`, ty: { k: 'json' } };
    case 'JSON_OBJECTAGG':
      return { sql: `my_json_objectagg(${toText(a)}, ${toJsonValue(b)})`, ty: { k: 'json' } };
    default:
      throw new DialectError(`the function ${expr.name}()`);
  }
}

export function renderWindow(
  renderer: ExprRenderer,
  expr: Extract<Expr, { kind: 'window' }>,
  scope: Scope,
  windows: SelectCore['windows'],
): R {
  if (!scope.aggregates)
    throw new DialectError(
      `${expr.name}() here (window functions belong in the select list or ORDER BY)`,
      expr.position,
    );
  const inner: Scope = { ...scope, aggregates: false };
  const args = expr.args.map((e) => renderer.expr(e, inner, windows));
  const over = ` OVER ${renderOver(renderer, expr.over, scope, windows)}`;
  const count = (min: number, max: number) => {
    if (args.length < min || args.length > max)
      throw new DialectError(`${expr.name}() with ${args.length} arguments`, expr.position);
  };
  const [a, b, c] = args as [R, R, R];
  switch (expr.name) {
    case 'ROW_NUMBER':
    case 'RANK':
    case 'DENSE_RANK':
      count(0, 0);
      return { sql: `${expr.name.toLowerCase()}()${over}`, ty: INT };
    case 'PERCENT_RANK':
    case 'CUME_DIST':
      count(0, 0);
      return { sql: `${expr.name.toLowerCase()}()${over}`, ty: DBL };
    case 'NTILE':
      count(1, 1);
      return { sql: `ntile(${toNumeric(a, 'NTILE()').sql})${over}`, ty: INT };
    case 'LAG':
    case 'LEAD': {
      count(1, 3);
      if (b && expr.args[1]?.kind !== 'number')
        throw new DialectError(`${expr.name}() with an offset that is not a whole number written in the query`);
      const ty = c ? merge(a.ty, c.ty, expr.name) : a.ty;
      return {
        sql: `${expr.name.toLowerCase()}(${[convert(a, ty), b?.sql ?? '1', ...(c ? [convert(c, ty)] : [])].join(', ')})${over}`,
        ty,
      };
    }
    case 'FIRST_VALUE':
    case 'LAST_VALUE':
      count(1, 1);
      return { sql: `${expr.name.toLowerCase()}(${a.sql})${over}`, ty: a.ty };
    case 'NTH_VALUE':
      count(2, 2);
      if (expr.args[1]?.kind !== 'number')
        throw new DialectError('NTH_VALUE() with a position that is not a whole number written in the query');
      return { sql: `nth_value(${a.sql}, ${b.sql})${over}`, ty: a.ty };
    default:
      throw new DialectError(`the function ${expr.name}()`);
  }
}

export function renderOver(
  renderer: ExprRenderer,
  spec: WindowSpec,
  scope: Scope,
  windows: SelectCore['windows'],
): string {
  if (spec.name !== undefined && spec.partitionBy.length === 0 && spec.orderBy.length === 0 && !spec.frame) {
    if (!windows.some((w) => w.name === spec.name))
      throw new DialectError(`the window '${spec.name}' (not defined by WINDOW)`);
    return quote(spec.name);
  }
  return `(${renderWindowBody(renderer, spec, scope, windows)})`;
}

export function renderWindowBody(
  renderer: ExprRenderer,
  spec: WindowSpec,
  scope: Scope,
  windows: SelectCore['windows'],
): string {
  const inner: Scope = { ...scope, aggregates: false };
  const parts: string[] = [];
  if (spec.partitionBy.length > 0)
    parts.push(`PARTITION BY ${spec.partitionBy.map((e) => groupKey(renderer.expr(e, inner, windows))).join(', ')}`);
  if (spec.orderBy.length > 0)
    parts.push(
      `ORDER BY ${spec.orderBy.map((item) => `${orderKey(renderer.expr(item.expr, inner, windows))}${item.desc ? ' DESC' : ''}`).join(', ')}`,
    );
  if (spec.frame) parts.push(spec.frame);
  return parts.join(' ');
}
