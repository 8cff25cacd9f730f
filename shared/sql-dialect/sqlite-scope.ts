/** The names a rendered SELECT resolves: its sources and their columns, select-list aliases, WITH queries. */

import type { JoinFacts, SelectedItem } from './group-check';
import type { BinaryOp, Expr, SelectCore, SelectStatement } from './mysql-ast';
import type { ColumnKind, RenderContext } from './sqlite-render-context';
import type { R, Ty } from './sqlite-types';

export interface ScopeColumn {
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

export interface Source {
  alias: string;
  columns: ScopeColumn[];
  /** A dataset: `id` is its primary key. */
  dataset?: boolean;
  /** A derived table or non-recursive WITH query: the statement it is the result of. */
  statement?: SelectStatement;
}

/** A FROM clause rendered: its SQL, and its columns in the order `*` lists them (hidden ones too). */
export interface RenderedFrom {
  sql: string;
  star: ScopeColumn[];
}

export interface Scope {
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

export interface Output {
  name: string;
  ty: Ty;
}

export interface RenderedBody {
  sql: string;
  outputs: Output[];
  /** Of a single SELECT: the column each output is, when it is one (a recursive WITH query checks them). */
  columns?: (ScopeColumn | undefined)[];
}

export interface Cte {
  name: string;
  outputs: Output[];
  /** The statement, for the GROUP BY check to look under (not for a recursive one). */
  statement?: SelectStatement;
}

/** A column of a select list as rendered: its value, its name, the column it is (if it is one), what it reads. */
export interface SelectedColumn {
  sql: string;
  name: string;
  ty: Ty;
  r: R;
  column?: ScopeColumn;
  /** The expression written, for the GROUP BY check (none for a column of `*`). */
  expr?: Expr;
}

/** A select-list column as the GROUP BY check sees it. */
export const selectedItem = (item: SelectedColumn): SelectedItem =>
  item.expr ? { expr: item.expr } : { column: item.column as ScopeColumn };

/** A select-list item named by its alias: its value and its index in the list. */
export interface AliasItem {
  r: R;
  item: number;
}

/** The recursive SELECT being rendered: the WITH query it reads, and where it reads it. */
export interface Recursion {
  name: string;
  /** The scope of the recursive SELECT: a reference from any other (a subquery, a derived table) is refused. */
  scope?: Scope;
  alias?: string;
  references: number;
}

/** What the function, aggregate and window renderings ask of the renderer: an argument's value, a comparison. */
export interface ExprRenderer {
  readonly context: RenderContext;
  expr(expr: Expr, scope: Scope, windows: SelectCore['windows']): R;
  compare(op: BinaryOp, left: R, right: R): string;
}
