/**
 * The syntax tree of a registered query, as the MySQL 8 reader (mysql-parser.ts) builds it. It holds only the
 * constructs docs/interface.md §19 accepts: anything else never becomes a node, it is refused while reading.
 */

export type Expr =
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'param'; name: string }
  | { kind: 'column'; table?: string; column: string; position: number }
  | { kind: 'unary'; op: '-' | '+' | 'NOT'; expr: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'json'; op: '->' | '->>'; column: Expr; path: string }
  | { kind: 'is'; expr: Expr; not: boolean; value: 'NULL' | 'TRUE' | 'FALSE' }
  | { kind: 'in'; expr: Expr; not: boolean; list: Expr[] }
  | { kind: 'in-select'; expr: Expr; not: boolean; select: SelectStatement }
  | { kind: 'between'; expr: Expr; not: boolean; low: Expr; high: Expr }
  | { kind: 'like'; expr: Expr; not: boolean; pattern: Expr; escape?: Expr }
  | { kind: 'regexp'; expr: Expr; not: boolean; pattern: Expr }
  | { kind: 'case'; operand?: Expr; whens: { when: Expr; result: Expr }[]; else?: Expr }
  | { kind: 'call'; name: string; args: Expr[]; position: number }
  | {
      kind: 'aggregate';
      name: string;
      args: Expr[];
      star?: boolean;
      distinct: boolean;
      orderBy?: OrderItem[];
      separator?: string;
      over?: WindowSpec;
      position: number;
    }
  | { kind: 'window'; name: string; args: Expr[]; over: WindowSpec; position: number }
  | { kind: 'cast'; expr: Expr; to: CastType }
  | { kind: 'interval'; value: Expr; unit: IntervalUnit }
  | { kind: 'trim'; mode: 'BOTH' | 'LEADING' | 'TRAILING'; remove?: Expr; expr: Expr }
  | { kind: 'unit-call'; name: 'TIMESTAMPDIFF'; unit: IntervalUnit; args: Expr[] }
  | { kind: 'now'; name: 'NOW' | 'CURDATE' }
  | { kind: 'subquery'; select: SelectStatement }
  | { kind: 'exists'; select: SelectStatement };

export type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | 'DIV'
  | 'MOD'
  | '='
  | '<>'
  | '<'
  | '<='
  | '>'
  | '>='
  | '<=>'
  | 'AND'
  | 'OR'
  | 'XOR';

export const INTERVAL_UNITS = ['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

export type CastType =
  | { type: 'SIGNED' | 'UNSIGNED' | 'CHAR' | 'DATE' | 'DATETIME' }
  | { type: 'DECIMAL'; precision: number; scale: number };

export interface OrderItem {
  expr: Expr;
  desc: boolean;
}

export interface WindowSpec {
  /** A named window of the WINDOW clause (`OVER w`), or the window written in place. */
  name?: string;
  partitionBy: Expr[];
  orderBy: OrderItem[];
  /** The frame clause as written (`ROWS BETWEEN 1 PRECEDING AND CURRENT ROW`): the same in SQLite. */
  frame?: string;
}

export interface SelectItem {
  expr: Expr | { kind: 'star'; table?: string };
  alias?: string;
  /** The expression's text as written: MySQL's name for a column without an alias. */
  text: string;
}

export type FromItem =
  | { kind: 'table'; name: string; alias?: string; position: number }
  | { kind: 'derived'; select: SelectStatement; alias: string }
  | {
      kind: 'join';
      type: 'INNER' | 'LEFT' | 'RIGHT' | 'CROSS';
      left: FromItem;
      right: FromItem;
      on?: Expr;
      /** `USING (a, b)`: the columns both sides share, merged into one each (names as written). */
      using?: { names: string[]; position: number };
      /** `NATURAL JOIN`: USING every column name the two sides have in common. */
      natural?: boolean;
    };

export interface SelectCore {
  kind: 'select';
  distinct: boolean;
  items: SelectItem[];
  from?: FromItem;
  where?: Expr;
  groupBy: Expr[];
  having?: Expr;
  windows: { name: string; spec: WindowSpec }[];
}

export interface SetOperation {
  kind: 'union';
  all: boolean;
  left: QueryBody;
  right: QueryBody;
}

export type QueryBody = SelectCore | SetOperation | SelectStatement;

export interface SelectStatement {
  kind: 'statement';
  /** `WITH RECURSIVE`: each WITH query may read itself. */
  recursive?: boolean;
  with: { name: string; columns?: string[]; select: SelectStatement; position: number }[];
  body: QueryBody;
  orderBy: OrderItem[];
  limit?: { count: Expr; offset?: Expr };
}
