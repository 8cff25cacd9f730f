/** MySQL 8's scalar functions, rendered for SQLite with MySQL's types and values (sqlite-render.ts). */

import { DialectError } from './dialect-error';
import type { Expr, SelectCore } from './mysql-ast';
import type { ExprRenderer, Scope } from './sqlite-scope';
import {
  arithmetic,
  BIN,
  checkJsonPath,
  ciOf,
  convert,
  DBL,
  dateAdd,
  INT,
  isBinary,
  isTemporal,
  literal,
  MAX_SCALE,
  merge,
  mergeAll,
  NULL_TY,
  type R,
  STR,
  sameClass,
  strToDateKind,
  TYPE_NAMES,
  temporalArg,
  textTy,
  toNumeric,
  toText,
  truth,
} from './sqlite-types';

export function renderCall(
  renderer: ExprRenderer,
  name: string,
  argExprs: Expr[],
  scope: Scope,
  windows: SelectCore['windows'],
): R {
  const intervalArg = (expr: Expr | undefined) => expr?.kind === 'interval';
  if (['DATE_ADD', 'DATE_SUB', 'ADDDATE', 'SUBDATE'].includes(name)) {
    const date = renderer.expr(argExprs[0] as Expr, scope, windows);
    const second = argExprs[1] as Expr;
    const sign = name === 'DATE_SUB' || name === 'SUBDATE' ? -1 : 1;
    if (intervalArg(second)) {
      const interval = second as Extract<Expr, { kind: 'interval' }>;
      return dateAdd(date, renderer.expr(interval.value, scope, windows), interval.unit, sign);
    }
    if (name === 'DATE_ADD' || name === 'DATE_SUB') throw new DialectError(`${name}() without INTERVAL`);
    return dateAdd(date, renderer.expr(second, scope, windows), 'DAY', sign);
  }
  const args = argExprs.map((e) => renderer.expr(e, scope, windows));
  const [a, b, c] = args as [R, R, R];
  const temporal = (r: R) => temporalArg(r, name);
  const number = (r: R) => toNumeric(r, `${name}()`);
  switch (name) {
    case 'DATE':
      return { sql: `my_temporal(${temporal(a)}, 'date')`, ty: { k: 'date' } };
    case 'TIME':
      return { sql: `my_temporal(${temporal(a)}, 'time')`, ty: { k: 'time' } };
    case 'LAST_DAY':
      return { sql: `my_temporal(${temporal(a)}, 'last_day')`, ty: { k: 'date' } };
    case 'YEAR':
    case 'QUARTER':
    case 'MONTH':
    case 'DAY':
    case 'HOUR':
    case 'MINUTE':
    case 'SECOND':
    case 'DAYOFWEEK':
    case 'WEEKDAY':
      return { sql: `my_date_part(${temporal(a)}, '${name}')`, ty: INT };
    case 'WEEK':
      return { sql: `my_week(${temporal(a)}, ${b ? number(b).sql : '0'})`, ty: INT };
    case 'DATE_FORMAT':
      return { sql: `my_date_format(${temporal(a)}, ${toText(b)})`, ty: STR };
    case 'STR_TO_DATE': {
      const format = argExprs[1];
      if (format?.kind !== 'string')
        throw new DialectError('STR_TO_DATE() with a format that is not written in the query');
      const kind = strToDateKind(format.value);
      return { sql: `my_str_to_date(${toText(a)}, ${b.sql}, '${kind}')`, ty: { k: kind } };
    }
    case 'DATEDIFF':
      return { sql: `my_datediff(${temporal(a)}, ${temporal(b)})`, ty: INT };
    case 'UNIX_TIMESTAMP':
      if (!a) return { sql: String(Math.floor(renderer.context.now.epochMs / 1000)), ty: INT };
      return { sql: `my_unix_timestamp(${temporal(a)}, ${literal(renderer.context.timeZone)})`, ty: INT };
    case 'FROM_UNIXTIME': {
      const seconds = number(a);
      const fraction = seconds.ty.k === 'dec' ? Math.min(6, seconds.ty.s) : seconds.ty.k === 'dbl' ? 6 : 0;
      const datetime = `my_from_unixtime(${seconds.sql}, ${literal(renderer.context.timeZone)}, ${fraction})`;
      return b
        ? { sql: `my_date_format(${datetime}, ${toText(b)})`, ty: STR }
        : { sql: datetime, ty: { k: 'datetime' } };
    }
    case 'CONCAT':
      return { sql: `(${args.map(toText).join(' || ')})`, ty: args.some((r) => isBinary(r.ty)) ? BIN : STR };
    case 'CONCAT_WS':
      return { sql: `concat_ws(${args.map(toText).join(', ')})`, ty: args.some((r) => isBinary(r.ty)) ? BIN : STR };
    case 'SUBSTRING':
      return {
        sql: `my_substring(${toText(a)}, ${number(b).sql}${c ? `, ${number(c).sql}` : ''})`,
        ty: textTy(a.ty),
      };
    case 'LEFT':
    case 'RIGHT':
      return { sql: `my_${name.toLowerCase()}(${toText(a)}, ${number(b).sql})`, ty: textTy(a.ty) };
    case 'LENGTH':
      return { sql: `octet_length(${toText(a)})`, ty: INT };
    case 'CHAR_LENGTH':
      return { sql: `length(${toText(a)})`, ty: INT };
    case 'UPPER':
    case 'LOWER':
      return { sql: `my_case(${toText(a)}, ${name === 'UPPER' ? 1 : 0})`, ty: textTy(a.ty) };
    case 'LTRIM':
    case 'RTRIM':
      return { sql: `${name.toLowerCase()}(${toText(a)}, ' ')`, ty: textTy(a.ty) };
    case 'LPAD':
    case 'RPAD':
      return {
        sql: `my_pad(${toText(a)}, ${number(b).sql}, ${toText(c)}, ${name === 'LPAD' ? 1 : 0})`,
        ty: textTy(a.ty),
      };
    case 'REPLACE':
      return { sql: `replace(${toText(a)}, ${toText(b)}, ${toText(c)})`, ty: textTy(a.ty) };
    case 'LOCATE':
      return {
        sql: `my_locate(${toText(a)}, ${toText(b)}, ${c ? number(c).sql : '1'}, ${isBinary(a.ty) || isBinary(b.ty) ? 1 : 0})`,
        ty: INT,
      };
    case 'INSTR':
      return {
        sql: `my_locate(${toText(b)}, ${toText(a)}, 1, ${isBinary(a.ty) || isBinary(b.ty) ? 1 : 0})`,
        ty: INT,
      };
    case 'REPEAT':
      return { sql: `my_repeat(${toText(a)}, ${number(b).sql})`, ty: textTy(a.ty) };
    case 'REVERSE':
      return { sql: `my_reverse(${toText(a)})`, ty: textTy(a.ty) };
    case 'FORMAT':
      return { sql: `my_format(${number(a).sql}, ${number(b).sql})`, ty: STR };
    case 'ROUND':
    case 'TRUNCATE': {
      const value = number(a);
      const places = argExprs[1];
      if (places && places.kind !== 'number' && value.ty.k !== 'dbl')
        throw new DialectError(`${name}() of an exact number to a number of places that is not written in the query`);
      const d = places?.kind === 'number' ? Math.trunc(Number(places.text)) : 0;
      if (value.ty.k === 'dbl') {
        return {
          sql: `my_round_dbl(${value.sql}, ${b ? number(b).sql : '0'}, ${name === 'TRUNCATE' ? 1 : 0})`,
          ty: DBL,
        };
      }
      const fn = name === 'ROUND' ? 'my_round_dec' : 'my_truncate_dec';
      if (value.ty.k === 'int') return { sql: d >= 0 ? value.sql : `${fn}(${value.sql}, ${d})`, ty: INT };
      if (value.ty.k === 'null') return { sql: 'NULL', ty: NULL_TY };
      return { sql: `${fn}(${value.sql}, ${d})`, ty: d > 0 ? { k: 'dec', s: Math.min(d, MAX_SCALE) } : INT };
    }
    case 'FLOOR':
    case 'CEIL': {
      const value = number(a);
      if (value.ty.k === 'int') return value;
      const sql = `${name === 'FLOOR' ? 'floor' : 'ceil'}(${value.sql})`;
      return value.ty.k === 'dbl' ? { sql, ty: DBL } : { sql: `CAST(${sql} AS INTEGER)`, ty: INT };
    }
    case 'ABS': {
      const value = number(a);
      return { sql: `abs(${value.sql})`, ty: value.ty };
    }
    case 'MOD':
      return arithmetic('MOD', a, b);
    case 'POW':
      return { sql: `pow(${number(a).sql}, ${number(b).sql})`, ty: DBL };
    case 'GREATEST':
    case 'LEAST': {
      const temporal = args.find((r) => isTemporal(r.ty));
      if (temporal && args.every((r) => r.ty.k === 'null' || r.ty.k === 'str' || r.ty.k === temporal.ty.k)) {
        // Dates (or datetimes) and text compare as their text, which orders as they do.
        return {
          sql: `${name === 'GREATEST' ? 'max' : 'min'}(${args.map((r) => r.sql).join(', ')})`,
          ty: temporal.ty,
        };
      }
      const ty = mergeAll(
        args.map((r) => r.ty),
        name,
      );
      if (ty.k === 'json') throw new DialectError(`${name}() of JSON values`);
      if (!args.every((r) => r.ty.k === 'null' || sameClass(ty, r.ty)))
        throw new DialectError(
          `${name}() of values of different kinds (${args.map((r) => TYPE_NAMES[r.ty.k]).join(', ')})`,
        );
      const converted = args.map((r) => convert(r, ty));
      if (ty.k === 'str' && !ty.bin) {
        // The first argument whose key is the greatest (least); NULL when any is NULL.
        const keys = converted.map((sql) => ciOf({ sql, ty }, 'order'));
        const best = `${name === 'GREATEST' ? 'max' : 'min'}(${keys.join(', ')})`;
        return { sql: `(CASE ${keys.map((k, i) => `WHEN ${k} = ${best} THEN ${converted[i]}`).join(' ')} END)`, ty };
      }
      return { sql: `${name === 'GREATEST' ? 'max' : 'min'}(${converted.join(', ')})`, ty };
    }
    case 'IF': {
      const ty = merge(b.ty, c.ty, 'IF');
      return { sql: `(CASE WHEN ${truth(a, 'IF')} THEN ${convert(b, ty)} ELSE ${convert(c, ty)} END)`, ty };
    }
    case 'IFNULL':
    case 'COALESCE': {
      const ty = mergeAll(
        args.map((r) => r.ty),
        name,
      );
      return {
        sql: `coalesce(${args.map((r) => convert(r, ty)).join(', ')}${args.length === 1 ? ', NULL' : ''})`,
        ty,
      };
    }
    case 'NULLIF':
      return { sql: `(CASE WHEN ${renderer.compare('=', a, b)} THEN NULL ELSE ${a.sql} END)`, ty: a.ty };
    case 'JSON_EXTRACT': {
      argExprs.slice(1).forEach((path) => {
        if (path.kind === 'string') checkJsonPath(path.value);
      });
      // A JSON value as it is, text as JSON text (3141 when it is not), anything else fails as MySQL 8 fails (3146).
      const doc =
        a.ty.k === 'json'
          ? a.sql
          : a.ty.k === 'str' || a.ty.k === 'null'
            ? toText(a)
            : `my_json_document_type(${a.sql}, 'json_extract')`;
      return { sql: `my_json_extract(${[doc, ...args.slice(1).map(toText)].join(', ')})`, ty: { k: 'json' } };
    }
    case 'JSON_UNQUOTE':
      return {
        sql: a.ty.k === 'json' ? `my_json_unquote(${a.sql})` : `my_json_unquote_text(${toText(a)})`,
        ty: BIN,
      };
    default:
      throw new DialectError(`the function ${name}()`);
  }
}
