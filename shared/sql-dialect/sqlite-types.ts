/**
 * The MySQL type the SQLite rendering gives each value (sqlite-render.ts), and the conversions, comparisons and
 * arithmetic written so that SQLite computes what MySQL 8 computes for values of those types.
 */

import { DialectError } from './dialect-error';
import type { BinaryOp, Expr, IntervalUnit } from './mysql-ast';
import { ciKey, equalityKey, readJsonPath } from './sqlite-functions';
import type { ColumnKind } from './sqlite-render-context';

export type Ty =
  | { k: 'int' }
  | { k: 'dec'; s: number }
  | { k: 'dbl' }
  | { k: 'str'; bin?: boolean }
  | { k: 'date' }
  | { k: 'datetime' }
  | { k: 'time' }
  | { k: 'json' }
  | { k: 'null' };

export interface R {
  sql: string;
  ty: Ty;
}

export const INT: Ty = { k: 'int' };
export const DBL: Ty = { k: 'dbl' };
export const STR: Ty = { k: 'str' };
export const BIN: Ty = { k: 'str', bin: true };
export const NULL_TY: Ty = { k: 'null' };

export const KIND_TYPES: Record<ColumnKind, Ty> = {
  string: STR,
  text: STR,
  enum: STR,
  integer: INT,
  boolean: INT,
  number: DBL,
  date: { k: 'date' },
  datetime: { k: 'datetime' },
  json: { k: 'json' },
  id: STR,
  timestamp: { k: 'datetime' },
};

/** Most decimals a DECIMAL has in MySQL. */
export const MAX_SCALE = 30;
/** MySQL's div_precision_increment: a division has this many more decimals than its dividend. */
export const DIV_PRECISION = 4;

export const isNumeric = (ty: Ty) => ty.k === 'int' || ty.k === 'dec' || ty.k === 'dbl';
export const isTemporal = (ty: Ty) => ty.k === 'date' || ty.k === 'datetime' || ty.k === 'time';
export const scaleOf = (ty: Ty) => (ty.k === 'dec' ? ty.s : 0);
export const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
export const TYPE_NAMES: Record<Ty['k'], string> = {
  int: 'an integer',
  dec: 'a decimal',
  dbl: 'a number',
  str: 'text',
  date: 'a date',
  datetime: 'a datetime',
  time: 'a time',
  json: 'JSON',
  null: 'NULL',
};

export function numberLiteral(text: string): R {
  if (/e/i.test(text)) return { sql: String(Number(text)), ty: DBL };
  if (text.includes('.')) {
    const scale = text.length - text.indexOf('.') - 1;
    return {
      sql: text.endsWith('.')
        ? `${text}0`
        : text.startsWith('.') || text.startsWith('-.')
          ? text.replace('.', '0.')
          : text,
      ty: { k: 'dec', s: scale },
    };
  }
  // Integers beyond 64 bits are DECIMAL in MySQL.
  return Math.abs(Number(text)) > Number.MAX_SAFE_INTEGER
    ? { sql: text, ty: { k: 'dec', s: 0 } }
    : { sql: text, ty: INT };
}

export const isBinary = (ty: Ty) => ty.k === 'str' && ty.bin === true;
export const textTy = (ty: Ty): Ty => (isBinary(ty) ? BIN : STR);

/** A qualified column reference as the rendering writes one: `"alias"."column"`. */
export const COLUMN_REF = /^"(?:[^"]|"")*"\."(?:[^"]|"")*"$/;

/**
 * A text value's key under the collation, for equality (`=`, `IN`, GROUP BY, DISTINCT) or for order (`<`, ORDER
 * BY): computed here for a literal, once per statement for a parameter, and for a column by SQLite's lower() when
 * the value is plain ASCII (where it gives the same key), by a call into JavaScript otherwise.
 */
export function ciOf(r: R, purpose: 'equality' | 'order' = 'equality'): string {
  const [fn, compute, plain] =
    purpose === 'equality' ? ['my_ci', equalityKey, "'*[^ -~]*'"] : ['my_ci_order', ciKey, "'*[^0-9A-Za-z]*'"];
  if (/^'(?:[^']|'')*'$/.test(r.sql)) return literal(compute(r.sql.slice(1, -1).replaceAll("''", "'")) ?? '');
  if (/^#\{\w+\}$/.test(r.sql)) return `(SELECT ${fn}(${r.sql}))`;
  if (COLUMN_REF.test(r.sql)) return `(CASE WHEN ${r.sql} GLOB ${plain} THEN ${fn}(${r.sql}) ELSE lower(${r.sql}) END)`;
  return `${fn}(${r.sql})`;
}

export function sameClass(a: Ty, b: Ty): boolean {
  if (isNumeric(a) && isNumeric(b)) return true;
  return a.k === b.k || (isTemporal(a) && isTemporal(b));
}

/** A value as text, as MySQL writes it (a DECIMAL with all its decimals, a DOUBLE in its shortest form). */
export function toText(r: R): string {
  switch (r.ty.k) {
    case 'int':
      return `CAST(${r.sql} AS TEXT)`;
    case 'dec':
      return `my_dec_text(${r.sql}, ${r.ty.s})`;
    case 'dbl':
      return `my_dbl_text(${r.sql})`;
    case 'json':
      return `my_json_format(${r.sql})`;
    default:
      return r.sql;
  }
}

/** A value as a number: text is read for its leading number (a DOUBLE), as MySQL does. */
export function toNumeric(r: R, where: string): R {
  if (isNumeric(r.ty) || r.ty.k === 'null') return r;
  if (r.ty.k === 'str') return { sql: `my_num(${r.sql})`, ty: DBL };
  if (r.ty.k === 'json') return { sql: `my_num(my_json_unquote(${r.sql}))`, ty: DBL };
  throw new DialectError(
    `${TYPE_NAMES[r.ty.k]} used as a number in ${where} (use DATEDIFF(), TIMESTAMPDIFF() or DATE_ADD())`,
  );
}

/** A condition's truth: a number that is not 0. */
export function truth(r: R, where: string): string {
  if (isNumeric(r.ty) || r.ty.k === 'null') return r.sql;
  if (r.ty.k === 'str' || r.ty.k === 'json') return toNumeric(r, where).sql;
  throw new DialectError(`${TYPE_NAMES[r.ty.k]} used as a condition in ${where}`);
}

export function asDatetime(r: R): string {
  if (r.ty.k === 'datetime') return r.sql;
  if (r.ty.k === 'date') return `(${r.sql} || ' 00:00:00')`;
  return `my_temporal(${r.sql}, 'datetime')`;
}

/** The type two values of a CASE, IF, COALESCE or UNION column share, as MySQL decides it. */
export function merge(a: Ty, b: Ty, where: string): Ty {
  if (a.k === 'null') return b;
  if (b.k === 'null') return a;
  if (isNumeric(a) && isNumeric(b)) {
    if (a.k === 'dbl' || b.k === 'dbl') return DBL;
    if (a.k === 'dec' || b.k === 'dec') return { k: 'dec', s: Math.max(scaleOf(a), scaleOf(b)) };
    return INT;
  }
  if (a.k === b.k) return a.k === 'str' ? (a.bin || (b.k === 'str' && b.bin) ? BIN : STR) : a;
  if ((a.k === 'date' && b.k === 'datetime') || (a.k === 'datetime' && b.k === 'date')) return { k: 'datetime' };
  if (a.k === 'json' || b.k === 'json') {
    if (where === 'UNION') throw new DialectError('a UNION column of JSON and other values');
  }
  return isBinary(a) || isBinary(b) ? BIN : STR;
}

export function mergeAll(types: Ty[], where: string): Ty {
  return types.reduce((acc, ty) => merge(acc, ty, where), NULL_TY);
}

/** A value converted to a merged type. */
export function convert(r: R, to: Ty): string {
  if (r.ty.k === 'null') return r.sql;
  if (to.k === 'str') return toText(r);
  if (to.k === 'datetime' && r.ty.k === 'date') return `(${r.sql} || ' 00:00:00')`;
  return r.sql;
}

export function toJsonValue(r: R): string {
  if (r.ty.k === 'json') return `coalesce(${r.sql}, 'null')`;
  return `my_to_json(${r.sql}, '${isNumeric(r.ty) ? 'number' : 'text'}')`;
}

/** `+ - * / DIV MOD` with MySQL's result types: exact decimals stay exact, `/` adds four decimals. */
export function arithmetic(op: BinaryOp, leftRaw: R, rightRaw: R): R {
  const left = toNumeric(leftRaw, `'${op}'`);
  const right = toNumeric(rightRaw, `'${op}'`);
  const anyDouble = left.ty.k === 'dbl' || right.ty.k === 'dbl';
  const [ls, rs] = [scaleOf(left.ty), scaleOf(right.ty)];
  const exact = (s: number): Ty => (s === 0 && left.ty.k !== 'dec' && right.ty.k !== 'dec' ? INT : { k: 'dec', s });
  switch (op) {
    case '+':
    case '-':
    case '*': {
      const sql = `(${left.sql} ${op} ${right.sql})`;
      if (anyDouble) return { sql, ty: DBL };
      const scale = op === '*' ? Math.min(MAX_SCALE, ls + rs) : Math.max(ls, rs);
      const ty = exact(scale);
      return { sql: ty.k === 'dec' && scale > 0 ? `round(${sql}, ${scale})` : sql, ty };
    }
    case '/': {
      if (anyDouble) return { sql: `(${left.sql} * 1.0 / nullif(${right.sql}, 0.0))`, ty: DBL };
      const scale = Math.min(MAX_SCALE, ls + DIV_PRECISION);
      return { sql: `my_div(${left.sql}, ${right.sql}, ${ls}, ${rs}, ${scale})`, ty: { k: 'dec', s: scale } };
    }
    case 'DIV':
      if (left.ty.k === 'int' && right.ty.k === 'int')
        return { sql: `(${left.sql} / nullif(${right.sql}, 0))`, ty: INT };
      return { sql: `my_intdiv(${left.sql}, ${right.sql})`, ty: INT };
    case 'MOD': {
      if (left.ty.k === 'int' && right.ty.k === 'int')
        return { sql: `(${left.sql} % nullif(${right.sql}, 0))`, ty: INT };
      const sql = `mod(${left.sql}, nullif(${right.sql}, 0))`;
      if (anyDouble) return { sql, ty: DBL };
      const scale = Math.max(ls, rs);
      return { sql: `round(${sql}, ${scale})`, ty: { k: 'dec', s: scale } };
    }
    default:
      throw new DialectError(`the operator ${op}`);
  }
}

export function checkJsonPath(path: string): void {
  try {
    readJsonPath(path);
  } catch (error) {
    throw new DialectError(`the JSON path '${path}': ${(error as Error).message}`);
  }
}

export function checkRegexp(pattern: string): void {
  try {
    new RegExp(pattern.replace(/\[:([a-z]+):\]/g, 'a'), 'u');
  } catch {
    throw new DialectError(`the regular expression '${pattern}' (not one both MySQL and the engine read alike)`);
  }
}

export const DATE_SPECIFIERS = /%[YymcdeDjMbWa]/;
export const TIME_SPECIFIERS = /%[HhIiklsSTrpf]/;

export function strToDateKind(format: string): 'date' | 'datetime' | 'time' {
  const date = DATE_SPECIFIERS.test(format);
  const time = TIME_SPECIFIERS.test(format);
  if (date && time) return 'datetime';
  if (time) return 'time';
  return 'date';
}

export function groupKey(r: R): string {
  if (r.ty.k === 'str' && !r.ty.bin) return ciOf(r);
  if (r.ty.k === 'json') throw new DialectError('grouping by a JSON value');
  return r.sql;
}

export function orderKey(r: R): string {
  if (r.ty.k === 'json') throw new DialectError('ORDER BY a JSON value');
  if (r.ty.k === 'str' && !r.ty.bin) return ciOf(r, 'order');
  return r.sql;
}

export function temporalArg(r: R, fn: string): string {
  if (isNumeric(r.ty) && r.ty.k !== 'int') throw new DialectError(`${fn}() of ${TYPE_NAMES[r.ty.k]}`);
  if (r.ty.k === 'json') throw new DialectError(`${fn}() of a JSON value`);
  return r.ty.k === 'int' ? `CAST(${r.sql} AS TEXT)` : r.sql;
}

export function dateAdd(date: R, amount: R, unit: IntervalUnit, sign: number): R {
  const value = temporalArg(date, 'DATE_ADD');
  const ty: Ty =
    date.ty.k === 'date'
      ? ['SECOND', 'MINUTE', 'HOUR'].includes(unit)
        ? { k: 'datetime' }
        : { k: 'date' }
      : date.ty.k === 'datetime'
        ? { k: 'datetime' }
        : STR;
  if (date.ty.k === 'time') throw new DialectError('DATE_ADD() of a time');
  return { sql: `my_date_add(${value}, ${toNumeric(amount, 'INTERVAL').sql}, '${unit}', ${sign})`, ty };
}

export function cast(value: R, to: Extract<Expr, { kind: 'cast' }>['to']): R {
  switch (to.type) {
    case 'SIGNED':
    case 'UNSIGNED':
      if (isTemporal(value.ty)) throw new DialectError(`CAST of ${TYPE_NAMES[value.ty.k]} AS ${to.type}`);
      return {
        sql: `my_cast_int(${value.ty.k === 'json' ? `my_json_unquote(${value.sql})` : value.sql}, ${to.type === 'UNSIGNED' ? 1 : 0}, ${value.ty.k === 'dbl' ? 1 : 0})`,
        ty: INT,
      };
    case 'DECIMAL':
      if (isTemporal(value.ty)) throw new DialectError(`CAST of ${TYPE_NAMES[value.ty.k]} AS DECIMAL`);
      return {
        sql: `my_cast_dec(${toNumeric(value, 'CAST').sql}, ${to.precision}, ${to.scale})`,
        ty: { k: 'dec', s: to.scale },
      };
    case 'CHAR':
      return { sql: toText(value), ty: textTy(value.ty) };
    case 'DATE':
    case 'DATETIME':
      if (isNumeric(value.ty) || value.ty.k === 'json')
        throw new DialectError(`CAST of ${TYPE_NAMES[value.ty.k]} AS ${to.type}`);
      return {
        sql: `my_temporal(${value.sql}, '${to.type.toLowerCase()}')`,
        ty: { k: to.type === 'DATE' ? 'date' : 'datetime' },
      };
  }
}
