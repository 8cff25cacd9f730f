/**
 * Renders a registered query's syntax tree (read as MySQL 8 reads it) as a SQLite statement that answers what
 * MySQL 8 answers: every expression is given its MySQL type (integer, exact decimal with a scale, double, text
 * with its collation, date, datetime, time, JSON), and each comparison, conversion and function is written so
 * that SQLite computes MySQL's value, calling the functions of sqlite-functions.js where SQLite's own differ.
 * Result columns are named as MySQL names them.
 *
 * The same rendering checks a query at load (every dataset with every field, nothing hidden: whatever cannot be
 * rendered is refused there, naming it) and renders it for one caller at run time (only the fields and datasets
 * its grants let it read; names are still resolved against every field, so a hidden field is reported as an
 * unknown column and never resolves to something else).
 */
import type { FieldType } from '../catalog/schema';
import { DialectError } from './dialect-error';
import type {
  BinaryOp,
  Expr,
  FromItem,
  IntervalUnit,
  OrderItem,
  QueryBody,
  SelectCore,
  SelectItem,
  SelectStatement,
  WindowSpec,
} from './mysql-ast';
import { ciKey, equalityKey, readJsonPath } from './sqlite-functions';

/** A column's kind: a field type, or one of the system fields' (`id`, `gmt_create`/`gmt_modified`). */
export type ColumnKind = FieldType | 'id' | 'timestamp';

export interface DialectColumn {
  name: string;
  kind: ColumnKind;
  /** Whether the caller may read it; a hidden column is, to the query, a column that does not exist. */
  visible: boolean;
}

export interface DialectTable {
  name: string;
  columns: readonly DialectColumn[];
  /** Whether the caller may read the dataset at all. */
  readable: boolean;
}

export type ParamType = 'string' | 'number' | 'integer' | 'boolean';

export interface RenderContext {
  /** The dataset of that code (case-sensitive, as MySQL on Linux names tables). */
  table(name: string): DialectTable | undefined;
  params: Readonly<Record<string, ParamType>>;
  /** The configuration's time zone: NOW(), CURDATE() and the Unix-time functions are in it. */
  timeZone: string;
  /** The statement's moment: NOW() for the whole statement. */
  now: StatementClock;
}

export interface StatementClock {
  epochMs: number;
  /** The same moment as `YYYY-MM-DD HH:MM:SS` in the time zone (as record timestamps are written). */
  local: string;
}

export interface RenderedQuery {
  /** The SQLite statement, with `#{name}` placeholders where parameters are bound. */
  sql: string;
  /** The result's column names, in order. */
  columns: string[];
  /** The datasets it reads. */
  tables: string[];
}

/** A name the caller cannot see (a hidden field, a dataset it may not read): answered like an unknown one. */
export class UnknownNameError extends DialectError {
  constructor(message: string, position?: number) {
    super(message, position, 'name');
  }
}

type Ty =
  | { k: 'int' }
  | { k: 'dec'; s: number }
  | { k: 'dbl' }
  | { k: 'str'; bin?: boolean }
  | { k: 'date' }
  | { k: 'datetime' }
  | { k: 'time' }
  | { k: 'json' }
  | { k: 'null' };

interface R {
  sql: string;
  ty: Ty;
}

const INT: Ty = { k: 'int' };
const DBL: Ty = { k: 'dbl' };
const STR: Ty = { k: 'str' };
const BIN: Ty = { k: 'str', bin: true };
const NULL_TY: Ty = { k: 'null' };

const KIND_TYPES: Record<ColumnKind, Ty> = {
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
const MAX_SCALE = 30;
/** MySQL's div_precision_increment: a division has this many more decimals than its dividend. */
const DIV_PRECISION = 4;

const isNumeric = (ty: Ty) => ty.k === 'int' || ty.k === 'dec' || ty.k === 'dbl';
const isTemporal = (ty: Ty) => ty.k === 'date' || ty.k === 'datetime' || ty.k === 'time';
const scaleOf = (ty: Ty) => (ty.k === 'dec' ? ty.s : 0);
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
const TYPE_NAMES: Record<Ty['k'], string> = {
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

interface ScopeColumn {
  name: string;
  ty: Ty;
  sql: string;
  visible: boolean;
}

interface Source {
  alias: string;
  columns: ScopeColumn[];
}

interface Scope {
  sources: Source[];
  parent?: Scope;
  /** Select-list items by lower-cased alias, for GROUP BY, HAVING and ORDER BY. */
  aliases?: Map<string, R>;
  /** Whether aggregates may appear here (select list, HAVING, ORDER BY of a select). */
  aggregates?: boolean;
  /** GROUP BY and HAVING look a name up in the tables first, then among the select list's aliases. */
  aliasesLast?: boolean;
  /** The WITH queries a subquery here may read. */
  ctes?: Map<string, Cte>;
}

interface Output {
  name: string;
  ty: Ty;
}

interface RenderedBody {
  sql: string;
  outputs: Output[];
}

interface Cte {
  name: string;
  outputs: Output[];
}

/** Renders a query for SQLite; throws DialectError for what it cannot answer as MySQL does. */
export function renderSqlite(statement: SelectStatement, context: RenderContext): RenderedQuery {
  const renderer = new Renderer(context);
  const body = renderer.statement(statement, undefined, new Map(), true);
  return { sql: body.sql, columns: body.outputs.map((output) => output.name), tables: [...renderer.tables] };
}

/** A result column as the caller receives it: JSON printed as MySQL prints it. */
function outputSql(sql: string, ty: Ty): string {
  return ty.k === 'json' ? `my_json_format(${sql})` : sql;
}

class Renderer {
  readonly tables = new Set<string>();

  constructor(private readonly context: RenderContext) {}

  /** A statement; `top` for the query itself, whose result columns are formatted for the caller. */
  statement(
    statement: SelectStatement,
    parent: Scope | undefined,
    outerCtes: Map<string, Cte>,
    top = false,
  ): RenderedBody {
    const ctes = new Map(outerCtes);
    const withParts: string[] = [];
    for (const cte of statement.with) {
      if (ctes.has(cte.name) && !outerCtes.has(cte.name))
        throw new DialectError(`the WITH query name '${cte.name}' used twice`);
      const inner = this.statement(cte.select, parent, ctes);
      const outputs = cte.columns
        ? cte.columns.map((name, i) => {
            const output = inner.outputs[i];
            if (!output || cte.columns?.length !== inner.outputs.length)
              throw new DialectError(
                `the WITH query '${cte.name}' names ${cte.columns?.length} columns for ${inner.outputs.length}`,
              );
            return { name, ty: output.ty };
          })
        : inner.outputs;
      checkDistinctNames(outputs, `the WITH query '${cte.name}'`);
      withParts.push(`${quote(cte.name)}(${outputs.map((o) => quote(o.name)).join(', ')}) AS (${inner.sql})`);
      ctes.set(cte.name, { name: cte.name, outputs });
    }
    const simpleCore = statement.body.kind === 'select' && !statement.body.distinct ? statement.body : undefined;
    let body: RenderedBody;
    let order = '';
    if (simpleCore) {
      const core = this.core(simpleCore, parent, ctes, statement.orderBy, top);
      body = { sql: core.sql, outputs: core.outputs };
      order = core.orderBy;
    } else {
      body = this.body(statement.body, parent, ctes);
      if (statement.orderBy.length > 0 || top) {
        const keys = statement.orderBy.map((item) => {
          const index = outputIndex(item.expr, body.outputs, statement.body);
          const output = body.outputs[index] as Output;
          return `${this.orderKey({ sql: quote(output.name), ty: output.ty })}${item.desc ? ' DESC' : ''}`;
        });
        const columns = top
          ? body.outputs.map((o) => `${outputSql(quote(o.name), o.ty)} AS ${quote(o.name)}`).join(', ')
          : '*';
        body = { sql: `SELECT ${columns} FROM (${body.sql})`, outputs: body.outputs };
        if (keys.length > 0) order = ` ORDER BY ${keys.join(', ')}`;
      }
    }
    let sql = body.sql + order;
    if (statement.limit) {
      const count = this.limitValue(statement.limit.count);
      const offset = statement.limit.offset ? ` OFFSET ${this.limitValue(statement.limit.offset)}` : '';
      sql += ` LIMIT ${count}${offset}`;
    }
    if (withParts.length > 0) sql = `WITH ${withParts.join(', ')} ${sql}`;
    return { sql, outputs: body.outputs };
  }

  private limitValue(expr: Expr): string {
    if (expr.kind === 'number') return expr.text;
    if (expr.kind === 'param') {
      const type = this.context.params[expr.name];
      if (type !== 'integer')
        throw new DialectError(`LIMIT #{${expr.name}}: its parameter must be declared as an integer`);
      return `#{${expr.name}}`;
    }
    throw new DialectError('a LIMIT that is not a whole number or a #{parameter}');
  }

  /** A UNION, a parenthesised statement, or a SELECT with DISTINCT (deduplicated under the collation). */
  private body(body: QueryBody, parent: Scope | undefined, ctes: Map<string, Cte>): RenderedBody {
    if (body.kind === 'statement') return this.statement(body, parent, ctes);
    if (body.kind === 'select') {
      const core = this.core(body, parent, ctes, []);
      return body.distinct ? this.deduplicate(core, 'SELECT DISTINCT') : core;
    }
    const left = this.body(body.left, parent, ctes);
    const right = this.body(body.right, parent, ctes);
    if (left.outputs.length !== right.outputs.length)
      throw new DialectError('a UNION of SELECTs with different numbers of columns');
    const types = left.outputs.map((o, i) => merge(o.ty, (right.outputs[i] as Output).ty, 'UNION'));
    const outputs = left.outputs.map((o, i) => ({ name: o.name, ty: types[i] as Ty }));
    const side = (part: RenderedBody) => {
      const columns = part.outputs.map(
        (o, i) =>
          `${convert({ sql: quote(o.name), ty: o.ty }, types[i] as Ty)} AS ${quote((outputs[i] as Output).name)}`,
      );
      return `SELECT ${columns.join(', ')} FROM (${part.sql})`;
    };
    const all = { sql: `${side(left)} UNION ALL ${side(right)}`, outputs };
    return body.all ? all : this.deduplicate(all, 'UNION');
  }

  private deduplicate(part: RenderedBody, what: string): RenderedBody {
    checkDistinctNames(part.outputs, what);
    const keys = part.outputs.map((o) => {
      if (o.ty.k === 'json') throw new DialectError(`${what} over a JSON value`);
      return this.groupKey({ sql: quote(o.name), ty: o.ty });
    });
    return {
      sql: `SELECT ${part.outputs.map((o) => quote(o.name)).join(', ')} FROM (${part.sql}) GROUP BY ${keys.join(', ')}`,
      outputs: part.outputs,
    };
  }

  private core(
    core: SelectCore,
    parent: Scope | undefined,
    ctes: Map<string, Cte>,
    orderBy: readonly OrderItem[],
    top = false,
  ): RenderedBody & { orderBy: string } {
    const scope: Scope = { sources: [], aggregates: false, ctes, ...(parent ? { parent } : {}) };
    const from = core.from ? this.from(core.from, scope, ctes) : '';
    const items: { sql: string; name: string; ty: Ty; r: R }[] = [];
    const selectScope: Scope = { ...scope, aggregates: true };
    for (const item of core.items) items.push(...this.selectItem(item, selectScope, core.windows));
    const aliases = new Map<string, R>();
    for (const item of core.items) {
      if (item.alias !== undefined) {
        const found = items.find((i) => i.name === item.alias);
        if (found) aliases.set(item.alias.toLowerCase(), found.r);
      }
    }
    let sql = `SELECT ${items.map((i) => `${top ? outputSql(i.sql, i.ty) : i.sql} AS ${quote(i.name)}`).join(', ')}`;
    if (from) sql += ` FROM ${from}`;
    if (core.where) sql += ` WHERE ${truth(this.expr(core.where, scope, core.windows), 'WHERE')}`;
    const byPosition = (expr: Expr, clause: string): R | undefined => {
      if (expr.kind !== 'number' || !/^\d+$/.test(expr.text)) return undefined;
      const item = items[Number(expr.text) - 1];
      if (!item) throw new DialectError(`${clause} ${expr.text}: the select list has ${items.length} columns`);
      return item.r;
    };
    const groupScope: Scope = { ...scope, aliases };
    if (core.groupBy.length > 0) {
      const keys = core.groupBy.map((expr) => {
        const r = byPosition(expr, 'GROUP BY') ?? this.expr(expr, { ...groupScope, aliasesLast: true }, core.windows);
        if (r.ty.k === 'json') throw new DialectError('GROUP BY a JSON value');
        return this.groupKey(r);
      });
      sql += ` GROUP BY ${keys.join(', ')}`;
    }
    if (core.having)
      sql += ` HAVING ${truth(this.expr(core.having, { ...groupScope, aggregates: true, aliasesLast: true }, core.windows), 'HAVING')}`;
    if (core.windows.length > 0) {
      sql += ` WINDOW ${core.windows.map((w) => `${quote(w.name)} AS (${this.windowBody(w.spec, scope, core.windows)})`).join(', ')}`;
    }
    let order = '';
    if (orderBy.length > 0) {
      const orderScope: Scope = { ...scope, aliases, aggregates: true };
      order = ` ORDER BY ${orderBy
        .map((item) => {
          const r = byPosition(item.expr, 'ORDER BY') ?? this.expr(item.expr, orderScope, core.windows);
          return `${this.orderKey(r)}${item.desc ? ' DESC' : ''}`;
        })
        .join(', ')}`;
    }
    return { sql, outputs: items.map((i) => ({ name: i.name, ty: i.ty })), orderBy: order };
  }

  private selectItem(
    item: SelectItem,
    scope: Scope,
    windows: SelectCore['windows'],
  ): { sql: string; name: string; ty: Ty; r: R }[] {
    if (item.expr.kind === 'star') {
      const table = item.expr.table;
      const sources = table === undefined ? scope.sources : scope.sources.filter((s) => s.alias === table);
      if (table !== undefined && sources.length === 0) throw new UnknownNameError(`Unknown table '${table}'`);
      if (scope.sources.length === 0) throw new DialectError('SELECT * without FROM');
      return sources.flatMap((source) =>
        source.columns
          .filter((c) => c.visible)
          .map((c) => ({ sql: c.sql, name: c.name, ty: c.ty, r: { sql: c.sql, ty: c.ty } })),
      );
    }
    const r = this.expr(item.expr, scope, windows);
    return [{ sql: r.sql, name: item.alias ?? columnName(item), ty: r.ty, r }];
  }

  private from(item: FromItem, scope: Scope, ctes: Map<string, Cte>): string {
    switch (item.kind) {
      case 'table': {
        const alias = item.alias ?? item.name;
        if (scope.sources.some((s) => s.alias === alias)) throw new DialectError(`Not unique table/alias: '${alias}'`);
        const cte = ctes.get(item.name);
        if (cte) {
          scope.sources.push({
            alias,
            columns: cte.outputs.map((o) => ({
              name: o.name,
              ty: o.ty,
              sql: `${quote(alias)}.${quote(o.name)}`,
              visible: true,
            })),
          });
          return `${quote(item.name)} AS ${quote(alias)}`;
        }
        const table = this.context.table(item.name);
        if (!table)
          throw new DialectError(
            `Table '${item.name}' doesn't exist (no dataset has that code)`,
            item.position,
            'name',
          );
        if (!table.readable) throw new UnknownNameError(`Table '${item.name}' doesn't exist`);
        this.tables.add(table.name);
        scope.sources.push({
          alias,
          columns: table.columns.map((c) => ({
            name: c.name,
            ty: KIND_TYPES[c.kind],
            sql: `${quote(alias)}.${quote(c.name)}`,
            visible: c.visible,
          })),
        });
        return `${quote(table.name)} AS ${quote(alias)}`;
      }
      case 'derived': {
        const inner = this.statement(item.select, scope.parent, ctes);
        checkDistinctNames(inner.outputs, `the derived table '${item.alias}'`);
        if (scope.sources.some((s) => s.alias === item.alias))
          throw new DialectError(`Not unique table/alias: '${item.alias}'`);
        scope.sources.push({
          alias: item.alias,
          columns: inner.outputs.map((o) => ({
            name: o.name,
            ty: o.ty,
            sql: `${quote(item.alias)}.${quote(o.name)}`,
            visible: true,
          })),
        });
        return `(${inner.sql}) AS ${quote(item.alias)}`;
      }
      case 'join': {
        const left = this.from(item.left, scope, ctes);
        const right = this.from(item.right, scope, ctes);
        const keyword =
          item.type === 'CROSS'
            ? item.on
              ? 'JOIN'
              : 'CROSS JOIN'
            : item.type === 'INNER'
              ? 'JOIN'
              : `${item.type} JOIN`;
        const condition = item.on ? ` ON ${truth(this.expr(item.on, scope, []), 'ON')}` : '';
        return `${left} ${keyword} ${right}${condition}`;
      }
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Expressions.

  expr(expr: Expr, scope: Scope, windows: SelectCore['windows']): R {
    const sub = (e: Expr) => this.expr(e, scope, windows);
    switch (expr.kind) {
      case 'string':
        return { sql: literal(expr.value), ty: STR };
      case 'number':
        return numberLiteral(expr.text);
      case 'null':
        return { sql: 'NULL', ty: NULL_TY };
      case 'bool':
        return { sql: expr.value ? '1' : '0', ty: INT };
      case 'param': {
        const type = this.context.params[expr.name];
        if (!type) throw new DialectError(`placeholder #{${expr.name}} has no declared parameter`);
        return { sql: `#{${expr.name}}`, ty: type === 'string' ? STR : type === 'number' ? DBL : INT };
      }
      case 'column':
        return this.column(expr, scope);
      case 'json': {
        const column = sub(expr.column);
        if (column.ty.k !== 'json') throw new DialectError(`'${expr.op}' on a value that is not a json field`);
        checkJsonPath(expr.path);
        const extract = `my_json_extract(${column.sql}, ${literal(expr.path)})`;
        return expr.op === '->' ? { sql: extract, ty: { k: 'json' } } : { sql: `my_json_unquote(${extract})`, ty: BIN };
      }
      case 'unary': {
        const inner = sub(expr.expr);
        if (expr.op === 'NOT') return { sql: `(NOT ${truth(inner, 'NOT')})`, ty: INT };
        const number = toNumeric(inner, `unary ${expr.op}`);
        return expr.op === '-' ? { sql: `(- ${number.sql})`, ty: number.ty } : number;
      }
      case 'binary':
        return this.binary(expr.op, expr.left, expr.right, scope, windows);
      case 'is': {
        const inner = sub(expr.expr);
        const test = expr.value === 'NULL' ? `${inner.sql} IS NULL` : `${truth(inner, 'IS')} IS ${expr.value}`;
        return { sql: `(${expr.not ? `NOT (${test})` : test})`, ty: INT };
      }
      case 'in': {
        const left = sub(expr.expr);
        const list = expr.list.map(sub);
        const sameKind = list.every((r) => r.ty.k === 'null' || sameClass(left.ty, r.ty));
        let test: string;
        if (sameKind && left.ty.k !== 'json' && !isTemporal(left.ty)) {
          const binary = left.ty.k === 'str' && (left.ty.bin || list.some((r) => r.ty.k === 'str' && r.ty.bin));
          const key = (r: R) => (left.ty.k === 'str' && !binary ? ciOf(r) : r.sql);
          test = `${key(left)} IN (${list.map(key).join(', ')})`;
        } else test = list.map((r) => this.compare('=', left, r)).join(' OR ');
        return { sql: `(${expr.not ? 'NOT ' : ''}(${test}))`, ty: INT };
      }
      case 'in-select': {
        const left = sub(expr.expr);
        if (expr.select.limit)
          throw new DialectError('LIMIT in an IN (SELECT ...) subquery (MySQL 8 does not support it)');
        const inner = this.statement(expr.select, scope, scope.ctes ?? new Map());
        if (inner.outputs.length !== 1) throw new DialectError('an IN (SELECT ...) subquery of more than one column');
        const output = inner.outputs[0] as Output;
        const target = merge(left.ty, output.ty, 'IN');
        if (target.k === 'json') throw new DialectError('IN (SELECT ...) over JSON values');
        const key = (r: R) => this.groupKey({ sql: convert(r, target), ty: target });
        const test = `${key(left)} IN (SELECT ${key({ sql: quote(output.name), ty: output.ty })} FROM (${inner.sql}))`;
        return { sql: `(${expr.not ? 'NOT ' : ''}${test})`, ty: INT };
      }
      case 'between': {
        const value = sub(expr.expr);
        const test = `(${this.compare('>=', value, sub(expr.low))} AND ${this.compare('<=', value, sub(expr.high))})`;
        return { sql: expr.not ? `(NOT ${test})` : test, ty: INT };
      }
      case 'like': {
        const value = sub(expr.expr);
        const pattern = sub(expr.pattern);
        const binary = isBinary(value.ty) || isBinary(pattern.ty);
        const escapeText = expr.escape ? toText(sub(expr.escape)) : "'\\'";
        const test = `my_like(${toText(value)}, ${toText(pattern)}, ${escapeText}, ${binary ? 1 : 0})`;
        return { sql: expr.not ? `(NOT ${test})` : test, ty: INT };
      }
      case 'regexp': {
        const value = sub(expr.expr);
        const pattern = sub(expr.pattern);
        if (expr.pattern.kind === 'string') checkRegexp(expr.pattern.value);
        const test = `my_regexp(${toText(value)}, ${toText(pattern)}, ${isBinary(value.ty) || isBinary(pattern.ty) ? 1 : 0})`;
        return { sql: expr.not ? `(NOT ${test})` : test, ty: INT };
      }
      case 'case': {
        const operand = expr.operand ? sub(expr.operand) : undefined;
        const whens = expr.whens.map((w) => ({ when: sub(w.when), result: sub(w.result) }));
        const otherwise = expr.else ? sub(expr.else) : undefined;
        const ty = mergeAll([...whens.map((w) => w.result.ty), ...(otherwise ? [otherwise.ty] : [])], 'CASE');
        const parts = whens.map(
          (w) =>
            `WHEN ${operand ? this.compare('=', operand, w.when) : truth(w.when, 'WHEN')} THEN ${convert(w.result, ty)}`,
        );
        return { sql: `(CASE ${parts.join(' ')}${otherwise ? ` ELSE ${convert(otherwise, ty)}` : ''} END)`, ty };
      }
      case 'cast':
        return this.cast(sub(expr.expr), expr.to);
      case 'interval':
        throw new DialectError('INTERVAL outside DATE_ADD(), DATE_SUB() or date + INTERVAL');
      case 'trim': {
        const value = sub(expr.expr);
        if (!expr.remove) {
          const fn = expr.mode === 'LEADING' ? 'ltrim' : expr.mode === 'TRAILING' ? 'rtrim' : 'trim';
          return { sql: `${fn}(${toText(value)}, ' ')`, ty: textTy(value.ty) };
        }
        return { sql: `my_trim(${toText(value)}, ${toText(sub(expr.remove))}, '${expr.mode}')`, ty: textTy(value.ty) };
      }
      case 'unit-call': {
        const [a, b] = expr.args.map(sub) as [R, R];
        return {
          sql: `my_timestampdiff('${expr.unit}', ${this.temporalArg(a, 'TIMESTAMPDIFF')}, ${this.temporalArg(b, 'TIMESTAMPDIFF')})`,
          ty: INT,
        };
      }
      case 'now':
        return expr.name === 'NOW'
          ? { sql: literal(this.context.now.local), ty: { k: 'datetime' } }
          : { sql: literal(this.context.now.local.slice(0, 10)), ty: { k: 'date' } };
      case 'subquery': {
        const inner = this.statement(expr.select, scope, scope.ctes ?? new Map());
        if (inner.outputs.length !== 1) throw new DialectError('a subquery of more than one column used as a value');
        return { sql: `(${inner.sql})`, ty: (inner.outputs[0] as Output).ty };
      }
      case 'exists': {
        const inner = this.statement(expr.select, scope, scope.ctes ?? new Map());
        return { sql: `(EXISTS (${inner.sql}))`, ty: INT };
      }
      case 'call':
        return this.call(expr.name, expr.args, scope, windows);
      case 'aggregate':
        return this.aggregate(expr, scope, windows);
      case 'window':
        return this.window(expr, scope, windows);
    }
  }

  private column(expr: Extract<Expr, { kind: 'column' }>, scope: Scope): R {
    const lower = expr.column.toLowerCase();
    const unknown = () =>
      new UnknownNameError(
        `Unknown column '${expr.table ? `${expr.table}.` : ''}${expr.column}' in 'field list'`,
        expr.position,
      );
    const aliasesLast = scope.aliasesLast === true;
    if (expr.table === undefined && scope.aliases && !aliasesLast) {
      const alias = scope.aliases.get(lower);
      if (alias) return alias;
    }
    for (let current: Scope | undefined = scope; current; current = current.parent) {
      const matches: ScopeColumn[] = [];
      for (const source of current.sources) {
        if (expr.table !== undefined && source.alias !== expr.table) continue;
        for (const column of source.columns) if (column.name.toLowerCase() === lower) matches.push(column);
      }
      if (matches.length > 1)
        throw new DialectError(`Column '${expr.column}' is ambiguous (name its table)`, expr.position, 'name');
      const found = matches[0];
      if (found) {
        if (!found.visible) throw unknown();
        return { sql: found.sql, ty: found.ty };
      }
      if (current === scope && expr.table === undefined && scope.aliases && aliasesLast) {
        const alias = scope.aliases.get(lower);
        if (alias) return alias;
      }
    }
    throw unknown();
  }

  private binary(op: BinaryOp, leftExpr: Expr, rightExpr: Expr, scope: Scope, windows: SelectCore['windows']): R {
    // date + INTERVAL n unit, INTERVAL n unit + date, date - INTERVAL n unit
    if ((op === '+' || op === '-') && (rightExpr.kind === 'interval' || leftExpr.kind === 'interval')) {
      const interval = (rightExpr.kind === 'interval' ? rightExpr : leftExpr) as Extract<Expr, { kind: 'interval' }>;
      const date = rightExpr.kind === 'interval' ? leftExpr : rightExpr;
      if (op === '-' && leftExpr.kind === 'interval') throw new DialectError('INTERVAL - date');
      return this.dateAdd(
        this.expr(date, scope, windows),
        this.expr(interval.value, scope, windows),
        interval.unit,
        op === '-' ? -1 : 1,
      );
    }
    const left = this.expr(leftExpr, scope, windows);
    const right = this.expr(rightExpr, scope, windows);
    switch (op) {
      case 'AND':
      case 'OR':
        return { sql: `(${truth(left, op)} ${op} ${truth(right, op)})`, ty: INT };
      case 'XOR':
        return { sql: `(((${truth(left, op)}) <> 0) + ((${truth(right, op)}) <> 0) = 1)`, ty: INT };
      case '=':
      case '<>':
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '<=>':
        return { sql: `(${this.compare(op, left, right)})`, ty: INT };
      default:
        return arithmetic(op, left, right);
    }
  }

  /** A comparison as MySQL makes it: text under the collation, dates as dates, text against numbers as numbers. */
  compare(op: BinaryOp, left: R, right: R): string {
    const sqlOp = op === '<=>' ? 'IS' : op;
    if (left.ty.k === 'json' || right.ty.k === 'json') {
      const flip: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
      const [json, other, compareOp] =
        left.ty.k === 'json' ? [left, right, sqlOp] : [right, left, flip[sqlOp] ?? sqlOp];
      const kind = other.ty.k === 'json' ? 'json' : isNumeric(other.ty) ? 'number' : 'text';
      if (other.ty.k === 'null') return `${json.sql} ${sqlOp} NULL`;
      return `my_json_compare(${json.sql}, ${kind === 'text' ? toText(other) : other.sql}, '${kind}') ${compareOp} 0`;
    }
    if (left.ty.k === 'null' || right.ty.k === 'null') return `${left.sql} ${sqlOp} ${right.sql}`;
    if (left.ty.k === 'str' && right.ty.k === 'str') {
      if (left.ty.bin || right.ty.bin) return `${left.sql} ${sqlOp} ${right.sql}`;
      const purpose = sqlOp === '=' || sqlOp === '<>' || sqlOp === 'IS' ? 'equality' : 'order';
      return `${ciOf(left, purpose)} ${sqlOp} ${ciOf(right, purpose)}`;
    }
    if (isTemporal(left.ty) || isTemporal(right.ty)) {
      if (isNumeric(left.ty) || isNumeric(right.ty))
        throw new DialectError(`a comparison of ${TYPE_NAMES[left.ty.k]} with ${TYPE_NAMES[right.ty.k]}`);
      if (left.ty.k === 'time' || right.ty.k === 'time') {
        if (left.ty.k !== right.ty.k && left.ty.k !== 'str' && right.ty.k !== 'str')
          throw new DialectError(`a comparison of ${TYPE_NAMES[left.ty.k]} with ${TYPE_NAMES[right.ty.k]}`);
        const asTime = (r: R) => (r.ty.k === 'time' ? r.sql : `my_temporal(${r.sql}, 'time')`);
        return `${asTime(left)} ${sqlOp} ${asTime(right)}`;
      }
      if (left.ty.k === 'date' && right.ty.k === 'date') return `${left.sql} ${sqlOp} ${right.sql}`;
      return `${asDatetime(left)} ${sqlOp} ${asDatetime(right)}`;
    }
    if (isNumeric(left.ty) && isNumeric(right.ty)) return `${left.sql} ${sqlOp} ${right.sql}`;
    return `${toNumeric(left, 'a comparison').sql} ${sqlOp} ${toNumeric(right, 'a comparison').sql}`;
  }

  private groupKey(r: R): string {
    if (r.ty.k === 'str' && !r.ty.bin) return ciOf(r);
    if (r.ty.k === 'json') throw new DialectError('grouping by a JSON value');
    return r.sql;
  }

  private orderKey(r: R): string {
    if (r.ty.k === 'json') throw new DialectError('ORDER BY a JSON value');
    if (r.ty.k === 'str' && !r.ty.bin) return ciOf(r, 'order');
    return r.sql;
  }

  private temporalArg(r: R, fn: string): string {
    if (isNumeric(r.ty) && r.ty.k !== 'int') throw new DialectError(`${fn}() of ${TYPE_NAMES[r.ty.k]}`);
    if (r.ty.k === 'json') throw new DialectError(`${fn}() of a JSON value`);
    return r.ty.k === 'int' ? `CAST(${r.sql} AS TEXT)` : r.sql;
  }

  private dateAdd(date: R, amount: R, unit: IntervalUnit, sign: number): R {
    const value = this.temporalArg(date, 'DATE_ADD');
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

  private cast(value: R, to: Extract<Expr, { kind: 'cast' }>['to']): R {
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

  private call(name: string, argExprs: Expr[], scope: Scope, windows: SelectCore['windows']): R {
    const intervalArg = (expr: Expr | undefined) => expr?.kind === 'interval';
    if (['DATE_ADD', 'DATE_SUB', 'ADDDATE', 'SUBDATE'].includes(name)) {
      const date = this.expr(argExprs[0] as Expr, scope, windows);
      const second = argExprs[1] as Expr;
      const sign = name === 'DATE_SUB' || name === 'SUBDATE' ? -1 : 1;
      if (intervalArg(second)) {
        const interval = second as Extract<Expr, { kind: 'interval' }>;
        return this.dateAdd(date, this.expr(interval.value, scope, windows), interval.unit, sign);
      }
      if (name === 'DATE_ADD' || name === 'DATE_SUB') throw new DialectError(`${name}() without INTERVAL`);
      return this.dateAdd(date, this.expr(second, scope, windows), 'DAY', sign);
    }
    const args = argExprs.map((e) => this.expr(e, scope, windows));
    const [a, b, c] = args as [R, R, R];
    const temporal = (r: R) => this.temporalArg(r, name);
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
        if (!a) return { sql: String(Math.floor(this.context.now.epochMs / 1000)), ty: INT };
        return { sql: `my_unix_timestamp(${temporal(a)}, ${literal(this.context.timeZone)})`, ty: INT };
      case 'FROM_UNIXTIME': {
        const seconds = number(a);
        const fraction = seconds.ty.k === 'dec' ? Math.min(6, seconds.ty.s) : seconds.ty.k === 'dbl' ? 6 : 0;
        const datetime = `my_from_unixtime(${seconds.sql}, ${literal(this.context.timeZone)}, ${fraction})`;
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
        return { sql: `(CASE WHEN ${this.compare('=', a, b)} THEN NULL ELSE ${a.sql} END)`, ty: a.ty };
      case 'JSON_EXTRACT': {
        argExprs.slice(1).forEach((path) => {
          if (path.kind === 'string') checkJsonPath(path.value);
        });
        const doc = a.ty.k === 'json' ? a.sql : toText(a);
        return { sql: `my_json_extract(${[doc, ...args.slice(1).map(toText)].join(', ')})`, ty: { k: 'json' } };
      }
      case 'JSON_UNQUOTE':
        return { sql: `my_json_unquote(${a.ty.k === 'json' ? a.sql : toText(a)})`, ty: BIN };
      default:
        throw new DialectError(`the function ${name}()`);
    }
  }

  private aggregate(expr: Extract<Expr, { kind: 'aggregate' }>, scope: Scope, windows: SelectCore['windows']): R {
    if (!scope.aggregates && !expr.over)
      throw new DialectError(
        `${expr.name}() here (aggregates belong in the select list, HAVING or ORDER BY)`,
        expr.position,
      );
    const inner: Scope = { ...scope, aggregates: false };
    const args = expr.args.map((e) => this.expr(e, inner, windows));
    const over = expr.over ? ` OVER ${this.over(expr.over, scope, windows)}` : '';
    const [a, b] = args as [R, R];
    switch (expr.name) {
      case 'COUNT':
        if (expr.star) return { sql: `count(*)${over}`, ty: INT };
        if (expr.distinct) {
          if (a.ty.k === 'json') throw new DialectError('COUNT(DISTINCT ...) of a JSON value');
          return { sql: `count(DISTINCT ${this.groupKey(a)})`, ty: INT };
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
        const key = expr.distinct
          ? this.groupKey({ sql: value, ty: args.some((r) => isBinary(r.ty)) ? BIN : STR })
          : 'NULL';
        const order = expr.orderBy?.length
          ? ` ORDER BY ${expr.orderBy
              .map((item) => {
                const position =
                  item.expr.kind === 'number' && /^\d+$/.test(item.expr.text)
                    ? args[Number(item.expr.text) - 1]
                    : undefined;
                return `${this.orderKey(position ?? this.expr(item.expr, inner, windows))}${item.desc ? ' DESC' : ''}`;
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

  private window(expr: Extract<Expr, { kind: 'window' }>, scope: Scope, windows: SelectCore['windows']): R {
    if (!scope.aggregates)
      throw new DialectError(
        `${expr.name}() here (window functions belong in the select list or ORDER BY)`,
        expr.position,
      );
    const inner: Scope = { ...scope, aggregates: false };
    const args = expr.args.map((e) => this.expr(e, inner, windows));
    const over = ` OVER ${this.over(expr.over, scope, windows)}`;
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

  private over(spec: WindowSpec, scope: Scope, windows: SelectCore['windows']): string {
    if (spec.name !== undefined && spec.partitionBy.length === 0 && spec.orderBy.length === 0 && !spec.frame) {
      if (!windows.some((w) => w.name === spec.name))
        throw new DialectError(`the window '${spec.name}' (not defined by WINDOW)`);
      return quote(spec.name);
    }
    return `(${this.windowBody(spec, scope, windows)})`;
  }

  private windowBody(spec: WindowSpec, scope: Scope, windows: SelectCore['windows']): string {
    const inner: Scope = { ...scope, aggregates: false };
    const parts: string[] = [];
    if (spec.partitionBy.length > 0)
      parts.push(`PARTITION BY ${spec.partitionBy.map((e) => this.groupKey(this.expr(e, inner, windows))).join(', ')}`);
    if (spec.orderBy.length > 0)
      parts.push(
        `ORDER BY ${spec.orderBy.map((item) => `${this.orderKey(this.expr(item.expr, inner, windows))}${item.desc ? ' DESC' : ''}`).join(', ')}`,
      );
    if (spec.frame) parts.push(spec.frame);
    return parts.join(' ');
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** MySQL's name for a column without an alias: a column's own name, a string's content, else the text written. */
function columnName(item: SelectItem): string {
  const expr = item.expr;
  if (expr.kind === 'column') return expr.column;
  if (expr.kind === 'string') return expr.value;
  return item.text;
}

function checkDistinctNames(outputs: readonly Output[], what: string): void {
  const seen = new Set<string>();
  for (const output of outputs) {
    const lower = output.name.toLowerCase();
    if (seen.has(lower))
      throw new DialectError(`the column name '${output.name}' twice in ${what} (give the columns different aliases)`);
    seen.add(lower);
  }
}

/** The output column an ORDER BY of a UNION or a SELECT DISTINCT means: a position or a result column's name. */
function outputIndex(expr: Expr, outputs: readonly Output[], body: QueryBody): number {
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

function sameExpr(a: unknown, b: unknown): boolean {
  return (
    JSON.stringify(a, (key, value) => (key === 'position' ? undefined : value)) ===
    JSON.stringify(b, (key, value) => (key === 'position' ? undefined : value))
  );
}

function numberLiteral(text: string): R {
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

const isBinary = (ty: Ty) => ty.k === 'str' && ty.bin === true;
const textTy = (ty: Ty): Ty => (isBinary(ty) ? BIN : STR);

/** A qualified column reference as the rendering writes one: `"alias"."column"`. */
const COLUMN_REF = /^"(?:[^"]|"")*"\."(?:[^"]|"")*"$/;

/**
 * A text value's key under the collation, for equality (`=`, `IN`, GROUP BY, DISTINCT) or for order (`<`, ORDER
 * BY): computed here for a literal, once per statement for a parameter, and for a column by SQLite's lower() when
 * the value is plain ASCII (where it gives the same key), by a call into JavaScript otherwise.
 */
function ciOf(r: R, purpose: 'equality' | 'order' = 'equality'): string {
  const [fn, compute, plain] =
    purpose === 'equality' ? ['my_ci', equalityKey, "'*[^ -~]*'"] : ['my_ci_order', ciKey, "'*[^0-9A-Za-z]*'"];
  if (/^'(?:[^']|'')*'$/.test(r.sql)) return literal(compute(r.sql.slice(1, -1).replaceAll("''", "'")) ?? '');
  if (/^#\{\w+\}$/.test(r.sql)) return `(SELECT ${fn}(${r.sql}))`;
  if (COLUMN_REF.test(r.sql)) return `(CASE WHEN ${r.sql} GLOB ${plain} THEN ${fn}(${r.sql}) ELSE lower(${r.sql}) END)`;
  return `${fn}(${r.sql})`;
}

function sameClass(a: Ty, b: Ty): boolean {
  if (isNumeric(a) && isNumeric(b)) return true;
  return a.k === b.k || (isTemporal(a) && isTemporal(b));
}

/** A value as text, as MySQL writes it (a DECIMAL with all its decimals, a DOUBLE in its shortest form). */
function toText(r: R): string {
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
function toNumeric(r: R, where: string): R {
  if (isNumeric(r.ty) || r.ty.k === 'null') return r;
  if (r.ty.k === 'str') return { sql: `my_num(${r.sql})`, ty: DBL };
  if (r.ty.k === 'json') return { sql: `my_num(my_json_unquote(${r.sql}))`, ty: DBL };
  throw new DialectError(
    `${TYPE_NAMES[r.ty.k]} used as a number in ${where} (use DATEDIFF(), TIMESTAMPDIFF() or DATE_ADD())`,
  );
}

/** A condition's truth: a number that is not 0. */
function truth(r: R, where: string): string {
  if (isNumeric(r.ty) || r.ty.k === 'null') return r.sql;
  if (r.ty.k === 'str' || r.ty.k === 'json') return toNumeric(r, where).sql;
  throw new DialectError(`${TYPE_NAMES[r.ty.k]} used as a condition in ${where}`);
}

function asDatetime(r: R): string {
  if (r.ty.k === 'datetime') return r.sql;
  if (r.ty.k === 'date') return `(${r.sql} || ' 00:00:00')`;
  return `my_temporal(${r.sql}, 'datetime')`;
}

/** The type two values of a CASE, IF, COALESCE or UNION column share, as MySQL decides it. */
function merge(a: Ty, b: Ty, where: string): Ty {
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

function mergeAll(types: Ty[], where: string): Ty {
  return types.reduce((acc, ty) => merge(acc, ty, where), NULL_TY);
}

/** A value converted to a merged type. */
function convert(r: R, to: Ty): string {
  if (r.ty.k === 'null') return r.sql;
  if (to.k === 'str') return toText(r);
  if (to.k === 'datetime' && r.ty.k === 'date') return `(${r.sql} || ' 00:00:00')`;
  return r.sql;
}

function toJsonValue(r: R): string {
  if (r.ty.k === 'json') return `coalesce(${r.sql}, 'null')`;
  return `my_to_json(${r.sql}, '${isNumeric(r.ty) ? 'number' : 'text'}')`;
}

/** `+ - * / DIV MOD` with MySQL's result types: exact decimals stay exact, `/` adds four decimals. */
function arithmetic(op: BinaryOp, leftRaw: R, rightRaw: R): R {
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

function checkJsonPath(path: string): void {
  try {
    readJsonPath(path);
  } catch (error) {
    throw new DialectError(`the JSON path '${path}': ${(error as Error).message}`);
  }
}

function checkRegexp(pattern: string): void {
  try {
    new RegExp(pattern.replace(/\[:([a-z]+):\]/g, 'a'), 'u');
  } catch {
    throw new DialectError(`the regular expression '${pattern}' (not one both MySQL and the engine read alike)`);
  }
}

const DATE_SPECIFIERS = /%[YymcdeDjMbWa]/;
const TIME_SPECIFIERS = /%[HhIiklsSTrpf]/;

function strToDateKind(format: string): 'date' | 'datetime' | 'time' {
  const date = DATE_SPECIFIERS.test(format);
  const time = TIME_SPECIFIERS.test(format);
  if (date && time) return 'datetime';
  if (time) return 'time';
  return 'date';
}
