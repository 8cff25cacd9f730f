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
 *
 * This file is the walk over the statement (WITH, UNION, SELECT, FROM and JOIN, expressions, name lookup); its parts
 * live beside it: what a rendering is given and answers (sqlite-render-context.ts), the MySQL types and conversions
 * (sqlite-types.ts), the names in scope (sqlite-scope.ts), scalar functions (sqlite-calls.ts), aggregates and
 * windows (sqlite-windows.ts), and checks on a statement's shape (sqlite-statement-facts.ts).
 */

import { DialectError } from './dialect-error';
import { type CoreFacts, checkGroupBy, type JoinFacts, type Resolution, type SelectedItem } from './group-check';
import type {
  BinaryOp,
  Expr,
  FromItem,
  OrderItem,
  QueryBody,
  SelectCore,
  SelectItem,
  SelectStatement,
} from './mysql-ast';
import { renderCall } from './sqlite-calls';
import { type RenderContext, type RenderedQuery, UnknownNameError } from './sqlite-render-context';
import {
  type AliasItem,
  type Cte,
  type Output,
  type Recursion,
  type RenderedBody,
  type RenderedFrom,
  type Scope,
  type ScopeColumn,
  type SelectedColumn,
  type Source,
  selectedItem,
} from './sqlite-scope';
import {
  aggregatesOrWindows,
  atMostOneRow,
  checkDistinctNames,
  checkRecursiveColumn,
  columnName,
  cteOutputs,
  outputIndex,
  readsTable,
  sameName,
  unionTerms,
} from './sqlite-statement-facts';
import {
  arithmetic,
  asDatetime,
  BIN,
  cast,
  checkJsonPath,
  checkRegexp,
  ciOf,
  convert,
  DBL,
  dateAdd,
  groupKey,
  INT,
  isBinary,
  isNumeric,
  isTemporal,
  KIND_TYPES,
  literal,
  merge,
  mergeAll,
  NULL_TY,
  numberLiteral,
  orderKey,
  quote,
  type R,
  STR,
  sameClass,
  TYPE_NAMES,
  type Ty,
  temporalArg,
  textTy,
  toNumeric,
  toText,
  truth,
} from './sqlite-types';
import { renderAggregate, renderWindow, renderWindowBody } from './sqlite-windows';

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

class Renderer {
  readonly tables = new Set<string>();
  /**
   * What the GROUP BY check needs, kept only when it runs (at load): each column reference's resolution and each
   * SELECT as it was read.
   */
  private readonly check: { resolutions: Map<Expr, Resolution>; facts: Map<SelectCore, CoreFacts> } | undefined;
  private recursion: Recursion | undefined;

  constructor(readonly context: RenderContext) {
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
          return `${orderKey({ sql: quote(output.name), ty: output.ty })}${item.desc ? ' DESC' : ''}`;
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
      return groupKey({ sql: quote(o.name), ty: o.ty });
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
        return groupKey(r);
      });
      sql += ` GROUP BY ${keys.join(', ')}`;
    }
    if (core.having)
      sql += ` HAVING ${truth(this.expr(core.having, { ...groupScope, aggregates: true, aliasesLast: true }, core.windows), 'HAVING')}`;
    if (core.windows.length > 0) {
      sql += ` WINDOW ${core.windows.map((w) => `${quote(w.name)} AS (${renderWindowBody(this, w.spec, scope, core.windows)})`).join(', ')}`;
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
          return `${orderKey(r)}${item.desc ? ' DESC' : ''}`;
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
        const key = (r: R) => groupKey({ sql: convert(r, target), ty: target });
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
        return cast(sub(expr.expr), expr.to);
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
          sql: `my_timestampdiff('${expr.unit}', ${temporalArg(a, 'TIMESTAMPDIFF')}, ${temporalArg(b, 'TIMESTAMPDIFF')})`,
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
        return renderCall(this, expr.name, expr.args, scope, windows);
      case 'aggregate':
        return renderAggregate(this, expr, scope, windows);
      case 'window':
        return renderWindow(this, expr, scope, windows);
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
      return dateAdd(
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
}
