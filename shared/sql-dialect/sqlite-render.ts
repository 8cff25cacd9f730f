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
import { type CoreFacts, checkGroupBy, type JoinFacts, type Resolution, type SelectedItem } from './group-check';
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
  /**
   * Check MySQL 8's ONLY_FULL_GROUP_BY (group-check.ts). It depends on the text alone, never on the caller, so
   * it is checked when the configuration loads and not again for each caller.
   */
  onlyFullGroupBy?: boolean;
}

export interface StatementClock {
  epochMs: number;
  /**
   * The same moment as `YYYY-MM-DD HH:MM:SS` in the time zone (as record timestamps are written). Asked only
   * when the statement reads the local time (NOW(), CURDATE()): a process's first formatter for a time zone
   * costs it tens of milliseconds, which a statement that never reads it does not pay.
   */
  local(): string;
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
  /** A dataset's column: its field type (`id` and `timestamp` for the system fields). */
  kind?: ColumnKind;
  source?: Source;
  /** A column merged by USING or NATURAL: the column of the side whose value it has. */
  origin?: ScopeColumn;
}

interface Source {
  alias: string;
  columns: ScopeColumn[];
  /** A dataset: `id` is its primary key. */
  dataset?: boolean;
  /** A derived table or non-recursive WITH query: the statement it is the result of. */
  statement?: SelectStatement;
}

/** A FROM clause rendered: its SQL, and its columns in the order `*` lists them (hidden ones too). */
interface RenderedFrom {
  sql: string;
  star: ScopeColumn[];
}

interface Scope {
  sources: Source[];
  parent?: Scope;
  /** Columns merged by USING or NATURAL, found by their name alone before the columns they merge. */
  merged?: ScopeColumn[];
  /** The columns USING or NATURAL merged: found only by their table's name. */
  shadowed?: Set<ScopeColumn>;
  /** The joins of the FROM clause, for the GROUP BY check. */
  joins?: JoinFacts[];
  /** Select-list items by lower-cased alias, for GROUP BY, HAVING and ORDER BY. */
  aliases?: Map<string, AliasItem>;
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
  /** Of a single SELECT: the column each output is, when it is one (a recursive WITH query checks them). */
  columns?: (ScopeColumn | undefined)[];
}

interface Cte {
  name: string;
  outputs: Output[];
  /** The statement, for the GROUP BY check to look under (not for a recursive one). */
  statement?: SelectStatement;
}

/** A column of a select list as rendered: its value, its name, the column it is (if it is one), what it reads. */
interface SelectedColumn {
  sql: string;
  name: string;
  ty: Ty;
  r: R;
  column?: ScopeColumn;
  /** The expression written, for the GROUP BY check (none for a column of `*`). */
  expr?: Expr;
}

/** A select-list column as the GROUP BY check sees it. */
const selectedItem = (item: SelectedColumn): SelectedItem =>
  item.expr ? { expr: item.expr } : { column: item.column as ScopeColumn };

/** A select-list item named by its alias: its value and its index in the list. */
interface AliasItem {
  r: R;
  item: number;
}

/** cte_max_recursion_depth, MySQL 8's default: past this many iterations a recursive WITH query fails. */
const CTE_MAX_RECURSION_DEPTH = 1000;
/** The column a recursive WITH query carries its rows' iteration in (never part of its result). */
const DEPTH_COLUMN = ' depth';

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

/** The recursive SELECT being rendered: the WITH query it reads, and where it reads it. */
interface Recursion {
  name: string;
  /** The scope of the recursive SELECT: a reference from any other (a subquery, a derived table) is refused. */
  scope?: Scope;
  alias?: string;
  references: number;
}

class Renderer {
  readonly tables = new Set<string>();
  /**
   * What the GROUP BY check needs, kept only when it runs (at load): each column reference's resolution and each
   * SELECT as it was read.
   */
  private readonly check: { resolutions: Map<Expr, Resolution>; facts: Map<SelectCore, CoreFacts> } | undefined;
  private recursion: Recursion | undefined;

  constructor(private readonly context: RenderContext) {
    if (context.onlyFullGroupBy) this.check = { resolutions: new Map(), facts: new Map() };
  }

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
      if (statement.recursive && readsTable(cte.select, cte.name)) {
        const recursive = this.recursiveCte(cte, parent, ctes);
        withParts.push(recursive.sql);
        ctes.set(cte.name, recursive.cte);
        continue;
      }
      const inner = this.statement(cte.select, parent, ctes);
      const outputs = cteOutputs(cte, inner.outputs);
      withParts.push(`${quote(cte.name)}(${outputs.map((o) => quote(o.name)).join(', ')}) AS (${inner.sql})`);
      ctes.set(cte.name, { name: cte.name, outputs, statement: cte.select });
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
    if (withParts.length > 0) sql = `WITH ${statement.recursive ? 'RECURSIVE ' : ''}${withParts.join(', ')} ${sql}`;
    return { sql, outputs: body.outputs };
  }

  /**
   * A WITH RECURSIVE query that reads itself, as MySQL 8 runs one: its SELECTs that do not read it (the seed) and
   * then those that do, joined by UNION ALL; its columns have the seed's types; the recursive SELECTs run again
   * on the rows the last round made until a round makes none, and a row of round 1000 (cte_max_recursion_depth)
   * stops the statement with MySQL's error. Each row carries its round in a column of its own; the query is
   * materialized, so that it runs to its end (or its error) whatever reads it, as in MySQL.
   */
  private recursiveCte(
    cte: SelectStatement['with'][number],
    parent: Scope | undefined,
    ctes: Map<string, Cte>,
  ): { sql: string; cte: Cte } {
    const what = `the recursive WITH query '${cte.name}'`;
    const select = cte.select;
    if (select.with.length > 0 || select.orderBy.length > 0 || select.limit)
      throw new DialectError(`WITH, ORDER BY or LIMIT around the SELECTs of ${what}`, cte.position);
    const terms = unionTerms(select.body);
    const readers = terms.map((term) => readsTable(term.body, cte.name));
    const first = readers.indexOf(true);
    if (terms.length < 2 || first < 1 || readers.slice(first).includes(false))
      throw new DialectError(
        `${what} without SELECTs that do not read it, then SELECTs that do, joined by UNION ALL`,
        cte.position,
      );
    if (terms.slice(1).some((term) => !term.all))
      throw new DialectError(
        `UNION DISTINCT in ${what} (write UNION ALL, and a condition that ends the recursion)`,
        cte.position,
      );
    const seeds = terms.slice(0, first).map((term) => this.body(term.body, parent, ctes));
    const width = (seeds[0] as RenderedBody).outputs.length;
    if (seeds.some((seed) => seed.outputs.length !== width))
      throw new DialectError('a UNION of SELECTs with different numbers of columns');
    const types = (seeds[0] as RenderedBody).outputs.map((_, i) =>
      mergeAll(
        seeds.map((seed) => (seed.outputs[i] as Output).ty),
        'UNION',
      ),
    );
    const outputs = cteOutputs(
      cte,
      types.map((ty, i) => ({ name: (seeds[0]?.outputs[i] as Output).name, ty })),
    );
    if (outputs.some((output) => output.name === DEPTH_COLUMN))
      throw new DialectError(`the column name '${DEPTH_COLUMN}' in ${what}`, cte.position);
    const entry: Cte = { name: cte.name, outputs };
    const inner = new Map(ctes).set(cte.name, entry);
    const parts = seeds.map(
      (seed) =>
        `SELECT ${seed.outputs.map((o, i) => convert({ sql: quote(o.name), ty: o.ty }, types[i] as Ty)).join(', ')}, 0 FROM (${seed.sql})`,
    );
    for (const term of terms.slice(first)) {
      const core = term.body;
      if (core.kind !== 'select') throw new DialectError(`a parenthesised recursive SELECT in ${what}`, cte.position);
      if (
        core.distinct ||
        core.groupBy.length > 0 ||
        core.having ||
        core.windows.length > 0 ||
        aggregatesOrWindows(core)
      )
        throw new DialectError(
          `an aggregate, a window function, GROUP BY, HAVING or DISTINCT in the recursive SELECT of ${what}`,
          cte.position,
        );
      const outer = this.recursion;
      const recursion: Recursion = { name: cte.name, references: 0 };
      this.recursion = recursion;
      let rendered: ReturnType<Renderer['core']>;
      try {
        rendered = this.core(core, parent, inner, [], false, recursion);
      } finally {
        this.recursion = outer;
      }
      if (recursion.references !== 1)
        throw new DialectError(
          `${what} read more than once in one recursive SELECT, or from a subquery (MySQL 8 refuses both)`,
          cte.position,
        );
      if (rendered.outputs.length !== width)
        throw new DialectError('a UNION of SELECTs with different numbers of columns');
      rendered.outputs.forEach((output, i) => {
        const seed = seeds.length === 1 ? seeds[0]?.columns?.[i] : undefined;
        const value = { ty: output.ty, column: rendered.columns?.[i] };
        checkRecursiveColumn(outputs[i] as Output, seed, value, recursion.alias as string, what, cte.position);
      });
      parts.push(rendered.sql);
    }
    const columns = [...outputs.map((o) => o.name), DEPTH_COLUMN].map(quote).join(', ');
    return { sql: `${quote(cte.name)}(${columns}) AS MATERIALIZED (${parts.join(' UNION ALL ')})`, cte: entry };
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
    recursion?: Recursion,
  ): RenderedBody & { orderBy: string } {
    const check = this.check;
    const scope: Scope = { sources: [], aggregates: false, ctes, ...(parent ? { parent } : {}) };
    if (recursion) recursion.scope = scope;
    const from = core.from ? this.from(core.from, scope, ctes, false) : undefined;
    const items: SelectedColumn[] = [];
    const selectScope: Scope = { ...scope, aggregates: true };
    for (const item of core.items) items.push(...this.selectItem(item, selectScope, core.windows, from?.star));
    const aliases = new Map<string, AliasItem>();
    for (const item of core.items) {
      if (item.alias !== undefined) {
        const index = items.findIndex((i) => i.name === item.alias);
        const found = items[index];
        if (found) aliases.set(item.alias.toLowerCase(), { r: found.r, item: index });
      }
    }
    const columns = items.map((i) => `${top ? outputSql(i.sql, i.ty) : i.sql} AS ${quote(i.name)}`);
    if (recursion) {
      const depth = `${quote(recursion.alias ?? '')}.${quote(DEPTH_COLUMN)} + 1`;
      columns.push(`my_cte_depth(${depth}, ${CTE_MAX_RECURSION_DEPTH})`);
    }
    let sql = `SELECT ${columns.join(', ')}`;
    if (from) sql += ` FROM ${from.sql}`;
    if (core.where) sql += ` WHERE ${truth(this.expr(core.where, scope, core.windows), 'WHERE')}`;
    const byPosition = (expr: Expr, clause: string): number | undefined => {
      if (expr.kind !== 'number' || !/^\d+$/.test(expr.text)) return undefined;
      const index = Number(expr.text) - 1;
      if (!items[index]) throw new DialectError(`${clause} ${expr.text}: the select list has ${items.length} columns`);
      return index;
    };
    const groupScope: Scope = { ...scope, aliases };
    const groupBy: SelectedItem[] | undefined = check ? [] : undefined;
    if (core.groupBy.length > 0) {
      const keys = core.groupBy.map((expr) => {
        const position = byPosition(expr, 'GROUP BY');
        const r =
          position !== undefined
            ? (items[position] as (typeof items)[number]).r
            : this.expr(expr, { ...groupScope, aliasesLast: true }, core.windows);
        if (check && groupBy) {
          const resolved = expr.kind === 'column' ? check.resolutions.get(expr) : undefined;
          const index = position ?? (resolved && 'item' in resolved ? resolved.item : undefined);
          groupBy.push(index === undefined ? { expr } : selectedItem(items[index] as SelectedColumn));
        }
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
          const position = byPosition(item.expr, 'ORDER BY');
          const r =
            position !== undefined
              ? (items[position] as (typeof items)[number]).r
              : this.expr(item.expr, orderScope, core.windows);
          return `${this.orderKey(r)}${item.desc ? ' DESC' : ''}`;
        })
        .join(', ')}`;
    }
    if (check) {
      const facts: CoreFacts = {
        core,
        sources: scope.sources,
        joins: scope.joins ?? [],
        items: items.map(selectedItem),
        groupBy: groupBy ?? [],
        orderBy,
      };
      check.facts.set(core, facts);
      checkGroupBy(facts, {
        resolve: (expr) => check.resolutions.get(expr),
        factsOf: (statement) =>
          statement.body.kind === 'select' && statement.with.length === 0 ? check.facts.get(statement.body) : undefined,
      });
    }
    return {
      sql,
      outputs: items.map((i) => ({ name: i.name, ty: i.ty })),
      columns: items.map((i) => i.column),
      orderBy: order,
    };
  }

  private selectItem(
    item: SelectItem,
    scope: Scope,
    windows: SelectCore['windows'],
    star: readonly ScopeColumn[] | undefined,
  ): SelectedColumn[] {
    if (item.expr.kind === 'star') {
      const table = item.expr.table;
      const source = table === undefined ? undefined : scope.sources.find((s) => s.alias === table);
      if (table !== undefined && !source) throw new UnknownNameError(`Unknown table '${table}'`);
      const columns = source ? source.columns : star;
      if (!columns) throw new DialectError('SELECT * without FROM');
      return columns
        .filter((c) => c.visible)
        .map((c) => ({
          sql: c.sql,
          name: c.name,
          ty: c.ty,
          r: { sql: c.sql, ty: c.ty },
          column: c,
        }));
    }
    const name = item.alias ?? columnName(item);
    if (item.expr.kind === 'column') {
      const found = this.lookup(item.expr, scope);
      if (!('item' in found)) {
        const r = { sql: found.sql, ty: found.ty };
        return [{ sql: r.sql, name, ty: r.ty, r, column: found, expr: item.expr }];
      }
    }
    const r = this.expr(item.expr, scope, windows);
    return [{ sql: r.sql, name, ty: r.ty, r, expr: item.expr }];
  }

  private from(item: FromItem, scope: Scope, ctes: Map<string, Cte>, weak: boolean): RenderedFrom {
    switch (item.kind) {
      case 'table': {
        const alias = item.alias ?? item.name;
        if (scope.sources.some((s) => s.alias === alias)) throw new DialectError(`Not unique table/alias: '${alias}'`);
        const cte = ctes.get(item.name);
        if (cte) {
          const recursion = this.recursion;
          if (recursion && item.name === recursion.name) {
            recursion.references += scope === recursion.scope ? 1 : 2;
            recursion.alias = alias;
            if (weak)
              throw new DialectError(
                `the recursive WITH query '${item.name}' on the side of an outer join that may be NULL (MySQL 8 refuses it)`,
                item.position,
              );
          }
          const source = this.resultSource(scope, alias, cte.outputs, cte.statement);
          return { sql: `${quote(item.name)} AS ${quote(alias)}`, star: source.columns };
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
        const source: Source = { alias, columns: [], dataset: true };
        const prefix = `${quote(alias)}.`;
        source.columns = table.columns.map((c) => ({
          name: c.name,
          ty: KIND_TYPES[c.kind],
          sql: prefix + quote(c.name),
          visible: c.visible,
          kind: c.kind,
          source,
        }));
        scope.sources.push(source);
        return { sql: `${quote(table.name)} AS ${quote(alias)}`, star: source.columns };
      }
      case 'derived': {
        const inner = this.statement(item.select, scope.parent, ctes);
        checkDistinctNames(inner.outputs, `the derived table '${item.alias}'`);
        if (scope.sources.some((s) => s.alias === item.alias))
          throw new DialectError(`Not unique table/alias: '${item.alias}'`);
        const source = this.resultSource(scope, item.alias, inner.outputs, item.select);
        return { sql: `(${inner.sql}) AS ${quote(item.alias)}`, star: source.columns };
      }
      case 'join':
        return this.join(item, scope, ctes, weak);
    }
  }

  /** A derived table's or WITH query's result as a source of the FROM clause. */
  private resultSource(scope: Scope, alias: string, outputs: readonly Output[], statement?: SelectStatement): Source {
    const source: Source = { alias, columns: [], ...(statement ? { statement } : {}) };
    const prefix = `${quote(alias)}.`;
    source.columns = outputs.map((o) => ({
      name: o.name,
      ty: o.ty,
      sql: prefix + quote(o.name),
      visible: true,
      source,
    }));
    scope.sources.push(source);
    return source;
  }

  /**
   * A join. USING and NATURAL merge each column the two sides share into one, as MySQL 8 does: it has the value
   * of the left side's column (the right side's in a RIGHT JOIN), which equals the other side's or the other side
   * is NULL; `*` lists the merged columns first (in the order of that side), then the rest of that side, then the
   * rest of the other; the name alone finds the merged column, the table's name and the name find the table's.
   */
  private join(
    item: Extract<FromItem, { kind: 'join' }>,
    scope: Scope,
    ctes: Map<string, Cte>,
    weak: boolean,
  ): RenderedFrom {
    const first = scope.sources.length;
    const left = this.from(item.left, scope, ctes, weak || item.type === 'RIGHT');
    const middle = scope.sources.length;
    const right = this.from(item.right, scope, ctes, weak || item.type === 'LEFT');
    const rightSql = item.right.kind === 'join' ? `(${right.sql})` : right.sql;
    const facts: JoinFacts = {
      type: item.type,
      ...(item.on ? { on: item.on } : {}),
      pairs: [],
      weak:
        item.type === 'LEFT'
          ? scope.sources.slice(middle)
          : item.type === 'RIGHT'
            ? scope.sources.slice(first, middle)
            : [],
      weakUpwards: weak,
    };
    if (this.check) {
      scope.joins ??= [];
      scope.joins.push(facts);
    }
    const keyword = item.type === 'INNER' || item.type === 'CROSS' ? 'JOIN' : `${item.type} JOIN`;
    if (!item.using && !item.natural) {
      const condition = item.on ? ` ON ${truth(this.expr(item.on, scope, []), 'ON')}` : '';
      const plain = item.type === 'CROSS' && !item.on ? 'CROSS JOIN' : keyword;
      return { sql: `${left.sql} ${plain} ${rightSql}${condition}`, star: [...left.star, ...right.star] };
    }
    const [strong, other] = item.type === 'RIGHT' ? [right, left] : [left, right];
    const position = item.using?.position;
    const names = item.using
      ? item.using.names
      : strong.star.map((c) => c.name).filter((name) => other.star.some((c) => sameName(c.name, name)));
    const pairs = names.map((name): [ScopeColumn, ScopeColumn] => {
      if (names.filter((n) => sameName(n, name)).length > 1)
        throw new DialectError(`Duplicate column name '${name}'`, position, 'name');
      return [this.joinColumn(name, strong.star, position), this.joinColumn(name, other.star, position)];
    });
    const shared = new Set(pairs.flat());
    const merged = strong.star
      .filter((column) => shared.has(column))
      .map((column): ScopeColumn => {
        const [, partner] = pairs.find(([mine]) => mine === column) as (typeof pairs)[number];
        const ty = merge(column.ty, partner.ty, 'USING');
        return {
          name: column.name,
          ty,
          sql: convert({ sql: column.sql, ty: column.ty }, ty),
          visible: column.visible && partner.visible,
          origin: column,
        };
      });
    scope.shadowed ??= new Set();
    for (const column of shared) scope.shadowed.add(column);
    scope.merged ??= [];
    scope.merged.push(...merged);
    facts.pairs = pairs;
    const condition = pairs.map(([a, b]) => this.compare('=', a, b)).join(' AND ') || '1';
    return {
      sql: `${left.sql} ${keyword} ${rightSql} ON ${condition}`,
      star: [
        ...merged,
        ...strong.star.filter((column) => !shared.has(column)),
        ...other.star.filter((column) => !shared.has(column)),
      ],
    };
  }

  /** The column a USING or NATURAL join names on one side (a hidden one is, to the caller, an unknown one). */
  private joinColumn(name: string, columns: readonly ScopeColumn[], position: number | undefined): ScopeColumn {
    const found = columns.filter((column) => sameName(column.name, name));
    if (found.length > 1) throw new DialectError(`Column '${name}' in from clause is ambiguous`, position, 'name');
    const column = found[0];
    if (!column?.visible) throw new UnknownNameError(`Unknown column '${name}' in 'from clause'`, position);
    return column;
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
          ? { sql: literal(this.context.now.local()), ty: { k: 'datetime' } }
          : { sql: literal(this.context.now.local().slice(0, 10)), ty: { k: 'date' } };
      case 'subquery': {
        const inner = this.statement(expr.select, scope, scope.ctes ?? new Map());
        if (inner.outputs.length !== 1) throw new DialectError('a subquery of more than one column used as a value');
        const output = inner.outputs[0] as Output;
        if (atMostOneRow(expr.select)) return { sql: `(${inner.sql})`, ty: output.ty };
        // SQLite answers a scalar subquery's first row; MySQL fails with error 1242 when it has a second one. At
        // most two rows are read, and min() of the one row there may be is that row's value, type and all.
        const value = quote(output.name);
        return {
          sql: `(SELECT CASE WHEN count(*) > 1 THEN my_subquery_rows() ELSE min(${value}) END FROM (SELECT ${value} FROM (${inner.sql}) LIMIT 2))`,
          ty: output.ty,
        };
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
    const found = this.lookup(expr, scope);
    return 'item' in found ? found.r : { sql: found.sql, ty: found.ty };
  }

  /** What a column reference names: a column of a FROM clause here or around, or a select item by its alias. */
  private lookup(expr: Extract<Expr, { kind: 'column' }>, scope: Scope): ScopeColumn | AliasItem {
    const lower = expr.column.toLowerCase();
    const aliasesLast = scope.aliasesLast === true;
    if (expr.table === undefined && scope.aliases && !aliasesLast) {
      const found = scope.aliases.get(lower);
      if (found) {
        this.check?.resolutions.set(expr, { item: found.item });
        return found;
      }
    }
    for (let current: Scope | undefined = scope; current; current = current.parent) {
      const matches: ScopeColumn[] = [];
      if (expr.table === undefined && current.merged)
        for (const column of current.merged)
          if (column.name.toLowerCase() === lower && !current.shadowed?.has(column)) matches.push(column);
      for (const source of current.sources) {
        if (expr.table !== undefined && source.alias !== expr.table) continue;
        for (const column of source.columns)
          if (column.name.toLowerCase() === lower && (expr.table !== undefined || !current.shadowed?.has(column)))
            matches.push(column);
      }
      if (matches.length > 1)
        throw new DialectError(`Column '${expr.column}' is ambiguous (name its table)`, expr.position, 'name');
      const found = matches[0];
      if (found) {
        if (!found.visible) break;
        this.check?.resolutions.set(expr, { column: found });
        return found;
      }
      if (current === scope && expr.table === undefined && scope.aliases && aliasesLast) {
        const found = scope.aliases.get(lower);
        if (found) {
          this.check?.resolutions.set(expr, { item: found.item });
          return found;
        }
      }
    }
    throw new UnknownNameError(
      `Unknown column '${expr.table ? `${expr.table}.` : ''}${expr.column}' in 'field list'`,
      expr.position,
    );
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

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A WITH query's columns: its own names for them, or the names of its SELECT's. */
function cteOutputs(cte: SelectStatement['with'][number], outputs: readonly Output[]): Output[] {
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
function unionTerms(body: QueryBody): { body: QueryBody; all: boolean }[] {
  if (body.kind !== 'union') return [{ body, all: true }];
  const left = unionTerms(body.left);
  const right = unionTerms(body.right);
  return [...left, { ...(right[0] as { body: QueryBody }), all: body.all }, ...right.slice(1)];
}

/** Whether a query (or a part of one) reads the table or WITH query of that name anywhere. */
function readsTable(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((child) => readsTable(child, name));
  if (!node || typeof node !== 'object') return false;
  if ((node as { kind?: string }).kind === 'table' && (node as { name?: string }).name === name) return true;
  return Object.values(node).some((child) => readsTable(child, name));
}

/**
 * Whether a statement can answer one row at most, from its text alone: a single SELECT that aggregates without
 * GROUP BY, or `LIMIT 0` / `LIMIT 1`. A scalar subquery that can is run as written (no check for a second row).
 */
function atMostOneRow(statement: SelectStatement): boolean {
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
function aggregatesOrWindows(core: SelectCore): boolean {
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
function checkRecursiveColumn(
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
