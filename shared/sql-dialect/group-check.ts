/**
 * MySQL 8's ONLY_FULL_GROUP_BY, which its default sql_mode turns on: a query that groups (GROUP BY, or an
 * aggregate without it) may name, outside aggregates, in its select list, HAVING, ORDER BY and windows, only
 * columns that are grouped or functionally dependent on the grouped ones; MySQL refuses any other, and so does
 * custom SQL, when the configuration loads (docs/interface.md §19). Dependence is detected as MySQL 8 detects it
 * (its manual, "Detection of Functional Dependence"):
 *
 * - a dataset's `id` (its primary key) determines every column of the dataset;
 * - `a = b` in WHERE, in an inner join's ON or USING, with `a` determined, a constant, a parameter or a column of
 *   an enclosing query, determines `b`; in an outer join's ON or USING it determines a column of the side that
 *   may be NULL-complemented when the other side's columns of the condition are all determined;
 * - a column of a derived table or WITH query is determined when the select item under it depends only on what
 *   the outer query determines of that table (a grouped one: every column, once its grouped items are);
 * - an expression equal to a GROUP BY expression is grouped, but a column inside a larger one is not (MySQL does
 *   not look for dependence on expressions: `YEAR(d) + 1` with `GROUP BY YEAR(d)` is refused there too).
 *
 * Where this detection stops short of MySQL's (an inner join nested inside an outer join's NULL-complemented
 * side, a derived table on such a side), a query is refused rather than answered: a refusal names itself, an
 * answer MySQL would not give does not. The renderer (sqlite-render.ts) hands over what it resolved.
 */
import { DialectError } from './dialect-error';
import type { Expr, OrderItem, SelectCore, SelectStatement, WindowSpec } from './mysql-ast';

/** A column as the renderer resolved it; a merged USING/NATURAL column stands for its `origin`. */
export interface GroupColumn {
  name: string;
  source?: GroupSource;
  origin?: GroupColumn;
}

export interface GroupSource {
  alias: string;
  columns: readonly GroupColumn[];
  /** A dataset: `id` is its primary key. */
  dataset?: boolean;
  /** A derived table or (non-recursive) WITH query: the statement it is the result of. */
  statement?: SelectStatement;
}

/** What a column reference resolved to: a column, or the select item of that index (an alias). */
export type Resolution = { column: GroupColumn } | { item: number };

export interface JoinFacts {
  type: 'INNER' | 'LEFT' | 'RIGHT' | 'CROSS';
  on?: Expr;
  /** Columns a USING or NATURAL join makes equal. */
  pairs: [GroupColumn, GroupColumn][];
  /** The side that may be NULL-complemented (right of LEFT, left of RIGHT); empty for an inner join. */
  weak: readonly GroupSource[];
  /** Whether the join is itself inside the NULL-complemented side of an outer join. */
  weakUpwards: boolean;
}

export type SelectedItem = { expr: Expr } | { column: GroupColumn };

/** One SELECT as the renderer read it: enough to check it and, from a query around it, to look under it. */
export interface CoreFacts {
  core: SelectCore;
  sources: readonly GroupSource[];
  joins: readonly JoinFacts[];
  /** The select list with `*` expanded. */
  items: readonly SelectedItem[];
  /** GROUP BY, an alias or a position replaced by its select item. */
  groupBy: readonly SelectedItem[];
  orderBy: readonly OrderItem[];
}

export interface GroupCheckContext {
  resolve(expr: Expr): Resolution | undefined;
  /** The facts of a statement's SELECT, when it is a single one the renderer read. */
  factsOf(statement: SelectStatement): CoreFacts | undefined;
}

const AGGREGATED_SUFFIX = 'this is incompatible with sql_mode=only_full_group_by';

/** Throws MySQL 8's refusal when the SELECT groups and names a column that is neither grouped nor determined. */
export function checkGroupBy(facts: CoreFacts, context: GroupCheckContext): void {
  const explicit = facts.core.groupBy.length > 0;
  if (!explicit && !aggregates(facts)) return;
  const check = new GroupCheck(facts, context, undefined);
  const fail = (number: number, place: string, failed: { column: GroupColumn; position?: number }) => {
    const name = `'${identity(failed.column).source?.alias ?? ''}.${failed.column.name}'`;
    const message = explicit
      ? `Expression #${number} of ${place} is not in GROUP BY clause and contains nonaggregated column ${name} which is not functionally dependent on columns in GROUP BY clause; ${AGGREGATED_SUFFIX}`
      : `In aggregated query without GROUP BY, expression #${number} of ${place} contains nonaggregated column ${name}; ${AGGREGATED_SUFFIX}`;
    throw new DialectError(message, failed.position, 'mysql');
  };
  facts.items.forEach((item, i) => {
    const failed = check.firstUndetermined(item, true);
    if (failed) fail(i + 1, 'SELECT list', failed);
  });
  // A query grouped without GROUP BY answers one row: MySQL drops its ORDER BY before checking.
  if (explicit) {
    facts.orderBy.forEach((order, i) => {
      if (isPosition(order.expr)) return;
      const failed = check.firstUndetermined({ expr: order.expr }, false);
      if (failed) fail(i + 1, 'ORDER BY clause', failed);
    });
  }
  if (facts.core.having) {
    const failed = check.firstUndetermined({ expr: facts.core.having }, false);
    if (failed) fail(1, 'HAVING clause', failed);
  }
  const windows: { name: string; spec: WindowSpec }[] = [
    ...facts.core.windows,
    ...inlineWindows(facts.items).map((spec) => ({ name: '<unnamed window>', spec })),
  ];
  for (const { name, spec } of windows) {
    [...spec.partitionBy, ...spec.orderBy.map((order) => order.expr)].forEach((expr, i) => {
      const failed = check.firstUndetermined({ expr }, false);
      if (failed) fail(i + 1, `PARTITION BY or ORDER BY clause of window '${name}'`, failed);
    });
  }
}

const identity = (column: GroupColumn): GroupColumn => (column.origin ? identity(column.origin) : column);

const isPosition = (expr: Expr) => expr.kind === 'number' && /^\d+$/.test(expr.text);

/** Whether the SELECT aggregates (outside subqueries and OVER): then it is grouped, with or without GROUP BY. */
function aggregates(facts: CoreFacts): boolean {
  return (
    facts.items.some((item) => 'expr' in item && aggregating(item.expr)) ||
    aggregating(facts.core.having) ||
    facts.orderBy.some((order) => aggregating(order.expr))
  );
}

/** Whether an expression holds an aggregate of its own SELECT (one outside subqueries and not with OVER). */
function aggregating(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(aggregating);
  if (!node || typeof node !== 'object') return false;
  const kind = (node as { kind?: string }).kind;
  if (kind === 'aggregate' && !(node as { over?: unknown }).over) return true;
  if (kind === 'subquery' || kind === 'exists' || kind === 'in-select' || kind === 'statement') return false;
  return Object.entries(node).some(([key, value]) => key !== 'over' && aggregating(value));
}

function inlineWindows(items: readonly SelectedItem[]): WindowSpec[] {
  const specs: WindowSpec[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      const kind = (node as { kind?: string }).kind;
      if (kind === 'subquery' || kind === 'exists' || kind === 'statement') return;
      const over = (node as { over?: WindowSpec }).over;
      if (over && (over.partitionBy.length > 0 || over.orderBy.length > 0)) specs.push(over);
      for (const value of Object.values(node)) visit(value);
    }
  };
  for (const item of items) if ('expr' in item) visit(item.expr);
  return specs;
}

interface Operand {
  column?: GroupColumn;
  constant: boolean;
  outer: boolean;
}

/**
 * The dependence of one SELECT's columns on what it groups by (or, looking under a derived table, on what the
 * query around it determines of that table's columns: `seeds`).
 */
class GroupCheck {
  private readonly determined = new Set<GroupColumn>();
  private readonly whole = new Set<GroupSource>();
  /** Keys of determined expressions that are not columns (GROUP BY YEAR(d), or a derived item). */
  private readonly expressionKeys = new Set<string>();
  private readonly sources: Set<GroupSource>;
  private readonly children = new Map<GroupSource, GroupCheck | null>();
  private closed = false;

  constructor(
    private readonly facts: CoreFacts,
    private readonly context: GroupCheckContext,
    seeds: readonly SelectedItem[] | undefined,
  ) {
    this.sources = new Set(facts.sources);
    for (const seed of seeds ?? facts.groupBy) this.addSeed(seed);
  }

  private addSeed(seed: SelectedItem): void {
    const column = 'column' in seed ? seed.column : this.columnOf(seed.expr);
    if (column && this.isLocal(column)) this.determined.add(identity(column));
    else if ('expr' in seed) this.expressionKeys.add(this.key(seed.expr));
  }

  /** The first column of `item` that is neither grouped nor determined, with where it is written. */
  firstUndetermined(item: SelectedItem, inSelectList: boolean): { column: GroupColumn; position?: number } | undefined {
    if ('column' in item) return this.isDetermined(item.column) ? undefined : { column: item.column };
    const key = this.key(item.expr);
    if (!inSelectList && this.facts.items.some((selected) => 'expr' in selected && this.key(selected.expr) === key))
      return undefined;
    if (this.expressionKeys.has(key)) return undefined;
    return this.walk(item.expr, false);
  }

  /** Whether every aggregate of this SELECT has one value per row of what determines it. */
  groupsDetermined(): boolean {
    const grouped = this.facts.core.groupBy.length > 0 || aggregates(this.facts);
    if (!grouped) return false;
    return this.facts.groupBy.every((group) =>
      'column' in group
        ? this.isDetermined(group.column)
        : this.expressionKeys.has(this.key(group.expr)) ||
          (this.columnOf(group.expr) !== undefined && this.isDetermined(this.columnOf(group.expr) as GroupColumn)),
    );
  }

  private walk(node: unknown, inSubquery: boolean): { column: GroupColumn; position?: number } | undefined {
    if (Array.isArray(node)) {
      for (const child of node) {
        const failed = this.walk(child, inSubquery);
        if (failed) return failed;
      }
      return undefined;
    }
    if (!node || typeof node !== 'object') return undefined;
    const expr = node as Expr;
    if (expr.kind === 'column') {
      const resolved = this.context.resolve(expr);
      if (!resolved || 'item' in resolved) return undefined;
      if (!this.isLocal(resolved.column) || this.isDetermined(resolved.column)) return undefined;
      return { column: resolved.column, position: expr.position };
    }
    if (expr.kind === 'aggregate' && !expr.over && !inSubquery) return undefined;
    const nested =
      expr.kind === 'subquery' || expr.kind === 'exists' || (node as { kind?: string }).kind === 'statement';
    for (const [key, value] of Object.entries(node)) {
      if (key === 'over' && !inSubquery) continue;
      const failed = this.walk(value, inSubquery || nested);
      if (failed) return failed;
    }
    return undefined;
  }

  private isLocal(column: GroupColumn): boolean {
    const source = identity(column).source;
    return source !== undefined && this.sources.has(source);
  }

  private isDetermined(column: GroupColumn): boolean {
    this.close();
    const id = identity(column);
    if (this.determined.has(id) || (id.source && this.whole.has(id.source))) return true;
    return id.source !== undefined && this.determinedUnder(id.source, id);
  }

  /** A derived table's column: determined when its select item depends only on what is determined of the table. */
  private determinedUnder(source: GroupSource, column: GroupColumn): boolean {
    const child = this.child(source);
    if (!child) return false;
    const index = source.columns.indexOf(column);
    const item = child.facts.items[index];
    if (!item) return false;
    if (child.groupsDetermined()) return true;
    if ('column' in item) return child.isLocal(item.column) && child.isDetermined(item.column);
    if (child.expressionKeys.has(child.key(item.expr))) return true;
    return child.walk(item.expr, false) === undefined && !aggregating(item.expr);
  }

  private child(source: GroupSource): GroupCheck | undefined {
    if (this.children.has(source)) return this.children.get(source) ?? undefined;
    const facts = source.statement && this.context.factsOf(source.statement);
    const onWeakSide = this.facts.joins.some((join) => join.weak.includes(source));
    let check: GroupCheck | null = null;
    if (facts && !onWeakSide) {
      const seeds = source.columns.flatMap((column, i) =>
        this.determined.has(column) && facts.items[i] ? [facts.items[i] as SelectedItem] : [],
      );
      check = new GroupCheck(facts, this.context, seeds);
    }
    this.children.set(source, check);
    return check ?? undefined;
  }

  /** Builds the determined set to its fixed point: keys, then equalities, until nothing more is found. */
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (let changed = true; changed; ) {
      changed = false;
      const before = this.determined.size + this.whole.size;
      for (const source of this.facts.sources) {
        if (this.whole.has(source)) continue;
        const key = source.dataset ? source.columns.find((column) => column.name === 'id') : undefined;
        if (key && this.determined.has(key)) this.whole.add(source);
        else if (source.statement) {
          this.children.delete(source);
          if (this.child(source)?.groupsDetermined()) this.whole.add(source);
        }
      }
      for (const conjunct of conjuncts(this.facts.core.where)) this.equality(conjunct, []);
      for (const join of this.facts.joins) {
        if (join.weakUpwards) continue;
        const weak = join.weak;
        const condition = [...conjuncts(join.on)];
        for (const conjunct of condition) this.equality(conjunct, weak, join);
        for (const [a, b] of join.pairs) this.pair(a, b, weak, join);
      }
      changed = this.determined.size + this.whole.size !== before;
    }
  }

  private equality(conjunct: Expr, weak: readonly GroupSource[], join?: JoinFacts): void {
    if (conjunct.kind !== 'binary' || conjunct.op !== '=') return;
    this.scalarEquality(this.operand(conjunct.left), this.operand(conjunct.right), weak, join);
  }

  private pair(a: GroupColumn, b: GroupColumn, weak: readonly GroupSource[], join: JoinFacts): void {
    const operand = (column: GroupColumn): Operand => ({ column, constant: false, outer: false });
    this.scalarEquality(operand(a), operand(b), weak, join);
  }

  /** MySQL's analysis of one `left = right`: which side it may add to the determined columns. */
  private scalarEquality(left: Operand, right: Operand, weak: readonly GroupSource[], join?: JoinFacts): void {
    const onWeak = (operand: Operand) =>
      weak.length === 0 ||
      (operand.column !== undefined && weak.includes(identity(operand.column).source as GroupSource));
    const open = (operand: Operand) =>
      operand.column !== undefined && this.isLocal(operand.column) && onWeak(operand) && !this.known(operand.column);
    let [from, to] = [left, right];
    if (!open(to)) {
      if (!open(from)) return;
      [from, to] = [to, from];
    }
    const target = to.column as GroupColumn;
    if (from.column && this.isLocal(from.column) && weak.length > 0 && onWeak(from) && this.known(from.column)) {
      this.determined.add(identity(target));
      return;
    }
    const strongKnown =
      from.column !== undefined &&
      this.isLocal(from.column) &&
      !(weak.length > 0 && onWeak(from)) &&
      this.known(from.column);
    if (!strongKnown && !from.constant && !from.outer) return;
    if (weak.length === 0 || !join) {
      this.determined.add(identity(target));
      return;
    }
    // An outer join: every column of the condition on the other side must be determined.
    const strongColumns = [...this.columnsIn(join.on), ...join.pairs.flat()].filter(
      (column) => this.isLocal(column) && !weak.includes(identity(column).source as GroupSource),
    );
    if (strongColumns.every((column) => this.known(column))) this.determined.add(identity(target));
  }

  /** Determined by what is found so far (no closing: used while closing). */
  private known(column: GroupColumn): boolean {
    const id = identity(column);
    return this.determined.has(id) || (id.source !== undefined && this.whole.has(id.source));
  }

  private operand(expr: Expr): Operand {
    const column = this.columnOf(expr);
    if (column) return { column, constant: false, outer: !this.isLocal(column) };
    let constant = true;
    let outer = false;
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(visit);
      else if (node && typeof node === 'object') {
        const kind = (node as { kind?: string }).kind;
        if (kind === 'column') {
          const resolved = this.context.resolve(node as Expr);
          if (resolved && 'column' in resolved && !this.isLocal(resolved.column)) outer = true;
          else constant = false;
          return;
        }
        if (
          kind === 'subquery' ||
          kind === 'exists' ||
          kind === 'in-select' ||
          kind === 'aggregate' ||
          kind === 'window'
        )
          constant = false;
        for (const value of Object.values(node)) visit(value);
      }
    };
    visit(expr);
    return { constant: constant && !outer, outer };
  }

  private columnOf(expr: Expr): GroupColumn | undefined {
    if (expr.kind !== 'column') return undefined;
    const resolved = this.context.resolve(expr);
    if (!resolved) return undefined;
    if ('column' in resolved) return resolved.column;
    const item = this.facts.items[resolved.item];
    if (!item) return undefined;
    return 'column' in item ? item.column : this.columnOf(item.expr);
  }

  private columnsIn(expr: Expr | undefined): GroupColumn[] {
    const found: GroupColumn[] = [];
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(visit);
      else if (node && typeof node === 'object') {
        if ((node as { kind?: string }).kind === 'column') {
          const resolved = this.context.resolve(node as Expr);
          if (resolved && 'column' in resolved) found.push(resolved.column);
          return;
        }
        for (const value of Object.values(node)) visit(value);
      }
    };
    visit(expr);
    return found;
  }

  /** An expression's key for "the same expression": columns by what they resolved to, positions left out. */
  private key(expr: Expr): string {
    return JSON.stringify(expr, (name, value: unknown) => {
      if (name === 'position') return undefined;
      if (value && typeof value === 'object' && (value as { kind?: string }).kind === 'column') {
        const resolved = this.context.resolve(value as Expr);
        if (resolved && 'item' in resolved) {
          const item = this.facts.items[resolved.item];
          if (item && 'expr' in item) return JSON.parse(this.key(item.expr));
          return { column: item ? idOf(item.column) : -1 };
        }
        return { column: resolved ? idOf(resolved.column) : (value as { column: string }).column.toLowerCase() };
      }
      return value;
    });
  }
}

/** A number per column, so that two references to one column have one key. */
const columnIds = new WeakMap<GroupColumn, number>();
let nextColumnId = 0;

function idOf(column: GroupColumn): number {
  const id = identity(column);
  let n = columnIds.get(id);
  if (n === undefined) {
    n = nextColumnId++;
    columnIds.set(id, n);
  }
  return n;
}

function* conjuncts(expr: Expr | undefined): Generator<Expr> {
  if (!expr) return;
  if (expr.kind === 'binary' && expr.op === 'AND') {
    yield* conjuncts(expr.left);
    yield* conjuncts(expr.right);
  } else yield expr;
}
