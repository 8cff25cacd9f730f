/**
 * Reads one registered query as MySQL 8 reads it (operator precedence, keywords, literals) into the syntax tree of
 * mysql-ast.ts. Only what docs/interface.md §19 accepts is read: a statement other than SELECT/WITH, a function
 * outside the list or a construct MySQL has but the list does not (variables, bit operators, `STRAIGHT_JOIN`,
 * `GROUP BY ... WITH ROLLUP`, locking clauses, ...) stops the reading with a DialectError that names it.
 */
import { DialectError } from './dialect-error';
import type {
  BinaryOp,
  CastType,
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
import { INTERVAL_UNITS } from './mysql-ast';
import { type Token, tokenize } from './mysql-lexer';

/** Aggregate functions: with OVER they run as window functions too (but GROUP_CONCAT and the JSON ones). */
export const AGGREGATES = new Set([
  'COUNT',
  'SUM',
  'AVG',
  'MIN',
  'MAX',
  'GROUP_CONCAT',
  'JSON_ARRAYAGG',
  'JSON_OBJECTAGG',
]);
/** Functions that exist only with OVER. */
export const WINDOW_FUNCTIONS = new Set([
  'ROW_NUMBER',
  'RANK',
  'DENSE_RANK',
  'PERCENT_RANK',
  'CUME_DIST',
  'NTILE',
  'LAG',
  'LEAD',
  'FIRST_VALUE',
  'LAST_VALUE',
  'NTH_VALUE',
]);

/** Scalar functions of the list, with the number of arguments each takes (least, most). */
export const SCALAR_FUNCTIONS: ReadonlyMap<string, readonly [number, number]> = new Map([
  ['DATE', [1, 1]],
  ['TIME', [1, 1]],
  ['YEAR', [1, 1]],
  ['QUARTER', [1, 1]],
  ['MONTH', [1, 1]],
  ['DAY', [1, 1]],
  ['DAYOFMONTH', [1, 1]],
  ['HOUR', [1, 1]],
  ['MINUTE', [1, 1]],
  ['SECOND', [1, 1]],
  ['DAYOFWEEK', [1, 1]],
  ['WEEKDAY', [1, 1]],
  ['WEEK', [1, 2]],
  ['LAST_DAY', [1, 1]],
  ['DATE_FORMAT', [2, 2]],
  ['STR_TO_DATE', [2, 2]],
  ['DATE_ADD', [2, 2]],
  ['DATE_SUB', [2, 2]],
  ['ADDDATE', [2, 2]],
  ['SUBDATE', [2, 2]],
  ['DATEDIFF', [2, 2]],
  ['UNIX_TIMESTAMP', [0, 1]],
  ['FROM_UNIXTIME', [1, 2]],
  ['CONCAT', [1, 255]],
  ['CONCAT_WS', [2, 255]],
  ['SUBSTRING', [2, 3]],
  ['SUBSTR', [2, 3]],
  ['MID', [3, 3]],
  ['LEFT', [2, 2]],
  ['RIGHT', [2, 2]],
  ['LENGTH', [1, 1]],
  ['CHAR_LENGTH', [1, 1]],
  ['UPPER', [1, 1]],
  ['LOWER', [1, 1]],
  ['LTRIM', [1, 1]],
  ['RTRIM', [1, 1]],
  ['LPAD', [3, 3]],
  ['RPAD', [3, 3]],
  ['REPLACE', [3, 3]],
  ['LOCATE', [2, 3]],
  ['INSTR', [2, 2]],
  ['REPEAT', [2, 2]],
  ['REVERSE', [1, 1]],
  ['FORMAT', [2, 2]],
  ['ROUND', [1, 2]],
  ['TRUNCATE', [2, 2]],
  ['FLOOR', [1, 1]],
  ['CEIL', [1, 1]],
  ['CEILING', [1, 1]],
  ['ABS', [1, 1]],
  ['MOD', [2, 2]],
  ['POW', [2, 2]],
  ['GREATEST', [2, 255]],
  ['LEAST', [2, 255]],
  ['IF', [3, 3]],
  ['IFNULL', [2, 2]],
  ['NULLIF', [2, 2]],
  ['COALESCE', [1, 255]],
  ['JSON_EXTRACT', [2, 255]],
  ['JSON_UNQUOTE', [1, 1]],
]);

/** Words that end an expression or a select item: never read as a column name or an alias without AS. */
const RESERVED = new Set(
  (
    'SELECT FROM WHERE GROUP HAVING ORDER LIMIT OFFSET UNION ALL DISTINCT AS ON USING JOIN INNER LEFT RIGHT CROSS ' +
    'OUTER NATURAL FULL STRAIGHT_JOIN AND OR XOR NOT IS NULL IN BETWEEN LIKE REGEXP RLIKE CASE WHEN THEN ELSE END ' +
    'WITH WINDOW OVER PARTITION BY ASC DESC DIV MOD EXISTS INTERVAL FOR INTO LOCK SEPARATOR ESCAPE TRUE FALSE ' +
    'COLLATE SOUNDS MEMBER BINARY ROWS RANGE INTERSECT EXCEPT'
  ).split(' '),
);

/** Parses the text of one registered query. */
export function parseQuery(sql: string): SelectStatement {
  const parser = new Parser(sql, tokenize(sql));
  const statement = parser.statement();
  parser.finish();
  return statement;
}

class Parser {
  private i = 0;

  constructor(
    private readonly sql: string,
    private readonly tokens: Token[],
  ) {}

  private get token(): Token {
    return this.tokens[this.i] as Token;
  }

  private peek(offset = 1): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)] as Token;
  }

  private isWord(...words: string[]): boolean {
    return this.token.kind === 'word' && words.includes(this.token.value);
  }

  private isOp(...ops: string[]): boolean {
    return this.token.kind === 'op' && ops.includes(this.token.value);
  }

  private next(): Token {
    const token = this.token;
    if (token.kind !== 'end') this.i += 1;
    return token;
  }

  private acceptWord(...words: string[]): boolean {
    if (!this.isWord(...words)) return false;
    this.i += 1;
    return true;
  }

  private acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i += 1;
    return true;
  }

  private expectWord(word: string): void {
    if (!this.acceptWord(word)) throw this.unexpected(`${word} expected`);
  }

  private expectOp(op: string): void {
    if (!this.acceptOp(op)) throw this.unexpected(`'${op}' expected`);
  }

  private unexpected(why?: string): DialectError {
    const token = this.token;
    const shown = token.kind === 'end' ? 'the end of the query' : `'${this.sql.slice(token.start, token.end)}'`;
    return new DialectError(`syntax error at ${shown}${why ? ` (${why})` : ''}`, token.start, 'syntax');
  }

  private refuse(construct: string, at = this.token.start): DialectError {
    return new DialectError(construct, at);
  }

  finish(): void {
    while (this.acceptOp(';')) {
      if (this.token.kind !== 'end') throw this.refuse('more than one statement (only one SELECT is allowed)');
    }
    if (this.token.kind !== 'end') throw this.unexpected();
  }

  /** A name: a backtick-quoted one, or a word that is not reserved. */
  private identifier(what: string): string {
    const token = this.token;
    if (token.kind === 'name') {
      this.i += 1;
      return token.value;
    }
    if (token.kind === 'word' && !RESERVED.has(token.value)) {
      this.i += 1;
      return this.sql.slice(token.start, token.end);
    }
    throw this.unexpected(`${what} expected`);
  }

  statement(): SelectStatement {
    if (this.token.kind === 'word' && !['SELECT', 'WITH'].includes(this.token.value) && this.token.value !== '(') {
      const word = this.token.value;
      throw this.refuse(
        [
          'INSERT',
          'UPDATE',
          'DELETE',
          'REPLACE',
          'CREATE',
          'DROP',
          'ALTER',
          'TRUNCATE',
          'SET',
          'CALL',
          'LOAD',
        ].includes(word)
          ? `the statement ${word} (queries are read-only: SELECT or WITH ... SELECT)`
          : `the statement ${word} (only SELECT or WITH ... SELECT is allowed)`,
      );
    }
    return this.selectStatement();
  }

  private selectStatement(): SelectStatement {
    const withs: SelectStatement['with'] = [];
    let recursive = false;
    if (this.acceptWord('WITH')) {
      recursive = this.acceptWord('RECURSIVE');
      do {
        const position = this.token.start;
        const name = this.identifier('a name for the WITH query');
        let columns: string[] | undefined;
        if (this.acceptOp('(')) {
          columns = [];
          do columns.push(this.identifier('a column name'));
          while (this.acceptOp(','));
          this.expectOp(')');
        }
        this.expectWord('AS');
        this.expectOp('(');
        const select = this.selectStatement();
        this.expectOp(')');
        withs.push({ name, ...(columns ? { columns } : {}), select, position });
      } while (this.acceptOp(','));
    }
    const body = this.unionBody();
    const statement: SelectStatement = {
      kind: 'statement',
      ...(recursive ? { recursive } : {}),
      with: withs,
      body,
      orderBy: [],
    };
    if (this.acceptWord('ORDER')) {
      this.expectWord('BY');
      statement.orderBy = this.orderList();
    }
    if (this.acceptWord('LIMIT')) {
      const first = this.limitValue();
      if (this.acceptOp(',')) statement.limit = { count: this.limitValue(), offset: first };
      else if (this.acceptWord('OFFSET')) statement.limit = { count: first, offset: this.limitValue() };
      else statement.limit = { count: first };
    }
    if (this.isWord('FOR', 'LOCK')) throw this.refuse('locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)');
    if (this.isWord('INTO')) throw this.refuse('SELECT ... INTO');
    return statement;
  }

  private limitValue(): Expr {
    const token = this.token;
    if (token.kind === 'number' && /^\d+$/.test(token.value)) {
      this.i += 1;
      return { kind: 'number', text: token.value };
    }
    if (token.kind === 'param') {
      this.i += 1;
      return { kind: 'param', name: token.value };
    }
    throw this.refuse('a LIMIT that is not a whole number or a #{parameter}');
  }

  private unionBody(): QueryBody {
    let body = this.queryTerm();
    for (;;) {
      if (this.isWord('INTERSECT', 'EXCEPT')) throw this.refuse(this.token.value);
      if (!this.acceptWord('UNION')) return body;
      const all = this.acceptWord('ALL');
      if (!all) this.acceptWord('DISTINCT');
      body = { kind: 'union', all, left: body, right: this.queryTerm() };
    }
  }

  private queryTerm(): QueryBody {
    if (this.acceptOp('(')) {
      const inner = this.selectStatement();
      this.expectOp(')');
      return inner;
    }
    if (this.isWord('VALUES', 'TABLE')) throw this.refuse(`${this.token.value} statements`);
    this.expectWord('SELECT');
    return this.selectCore();
  }

  private selectCore(): SelectCore {
    let distinct = false;
    for (;;) {
      if (this.acceptWord('DISTINCT', 'DISTINCTROW')) distinct = true;
      else if (this.acceptWord('ALL')) continue;
      else if (
        this.isWord('SQL_CALC_FOUND_ROWS', 'HIGH_PRIORITY', 'STRAIGHT_JOIN', 'SQL_NO_CACHE', 'SQL_BUFFER_RESULT')
      )
        throw this.refuse(`the select option ${this.token.value}`);
      else break;
    }
    const items: SelectItem[] = [];
    do items.push(this.selectItem());
    while (this.acceptOp(','));
    const core: SelectCore = { kind: 'select', distinct, items, groupBy: [], windows: [] };
    if (this.isWord('INTO')) throw this.refuse('SELECT ... INTO');
    if (this.acceptWord('FROM')) core.from = this.fromList();
    if (this.acceptWord('WHERE')) core.where = this.expr();
    if (this.acceptWord('GROUP')) {
      this.expectWord('BY');
      do {
        core.groupBy.push(this.expr());
        if (this.isWord('ASC', 'DESC')) throw this.refuse('ASC/DESC in GROUP BY');
      } while (this.acceptOp(','));
      if (this.isWord('WITH')) throw this.refuse('GROUP BY ... WITH ROLLUP');
    }
    if (this.acceptWord('HAVING')) core.having = this.expr();
    if (this.acceptWord('WINDOW')) {
      do {
        const name = this.identifier('a window name');
        this.expectWord('AS');
        this.expectOp('(');
        core.windows.push({ name, spec: this.windowBody() });
      } while (this.acceptOp(','));
    }
    return core;
  }

  private selectItem(): SelectItem {
    const start = this.token.start;
    if (this.isOp('*')) {
      this.i += 1;
      return { expr: { kind: 'star' }, text: '*' };
    }
    if (
      (this.token.kind === 'word' || this.token.kind === 'name') &&
      this.peek().value === '.' &&
      this.peek(2).value === '*'
    ) {
      const table = this.identifier('a table name');
      this.i += 2;
      return { expr: { kind: 'star', table }, text: this.sql.slice(start, this.tokens[this.i - 1]?.end) };
    }
    const expr = this.expr();
    const text = this.sql.slice(start, this.tokens[this.i - 1]?.end).trim();
    let alias: string | undefined;
    if (this.acceptWord('AS')) alias = this.aliasName();
    else if (
      this.token.kind === 'name' ||
      this.token.kind === 'string' ||
      (this.token.kind === 'word' && !RESERVED.has(this.token.value))
    )
      alias = this.aliasName();
    return { expr, text, ...(alias !== undefined ? { alias } : {}) };
  }

  private aliasName(): string {
    if (this.token.kind === 'string') return this.next().value;
    return this.identifier('an alias');
  }

  private fromList(): FromItem {
    let item = this.joined();
    while (this.acceptOp(',')) item = { kind: 'join', type: 'CROSS', left: item, right: this.joined() };
    return item;
  }

  private joined(): FromItem {
    let left = this.tableFactor();
    for (;;) {
      let type: 'INNER' | 'LEFT' | 'RIGHT' | 'CROSS';
      if (this.isWord('STRAIGHT_JOIN', 'FULL')) throw this.refuse(`${this.token.value} JOIN`);
      const natural = this.acceptWord('NATURAL');
      if (this.acceptWord('JOIN')) type = 'INNER';
      else if (this.acceptWord('INNER')) {
        this.expectWord('JOIN');
        type = 'INNER';
      } else if (!natural && this.acceptWord('CROSS')) {
        this.expectWord('JOIN');
        type = 'CROSS';
      } else if (this.isWord('LEFT', 'RIGHT')) {
        type = this.next().value as 'LEFT' | 'RIGHT';
        this.acceptWord('OUTER');
        this.expectWord('JOIN');
      } else if (natural) throw this.unexpected('JOIN expected after NATURAL');
      else return left;
      const right = this.tableFactor();
      const join: FromItem = { kind: 'join', type, left, right, ...(natural ? { natural } : {}) };
      if (natural) {
        if (this.isWord('ON', 'USING')) throw this.unexpected(`NATURAL JOIN takes no ${this.token.value}`);
      } else if (this.acceptWord('ON')) join.on = this.expr();
      else if (this.isWord('USING')) {
        const position = this.next().start;
        this.expectOp('(');
        const names: string[] = [];
        do names.push(this.identifier('a column name'));
        while (this.acceptOp(','));
        this.expectOp(')');
        join.using = { names, position };
      } else if (type === 'LEFT' || type === 'RIGHT') throw this.unexpected(`${type} JOIN needs ON or USING`);
      left = join;
    }
  }

  private tableFactor(): FromItem {
    if (this.acceptOp('(')) {
      if (this.isWord('SELECT', 'WITH')) {
        const select = this.selectStatement();
        this.expectOp(')');
        this.acceptWord('AS');
        return { kind: 'derived', select, alias: this.identifier('an alias for the derived table') };
      }
      const inner = this.fromList();
      this.expectOp(')');
      return inner;
    }
    if (this.isWord('LATERAL', 'JSON_TABLE', 'DUAL')) throw this.refuse(this.token.value);
    const position = this.token.start;
    const name = this.identifier('a table name');
    if (this.isOp('.')) throw this.refuse('a table named with its database (db.table)', position);
    let alias: string | undefined;
    if (this.acceptWord('AS')) alias = this.identifier('an alias');
    else if (this.token.kind === 'name' || (this.token.kind === 'word' && !RESERVED.has(this.token.value)))
      alias = this.identifier('an alias');
    if (this.isWord('USE', 'FORCE', 'IGNORE')) throw this.refuse('index hints');
    return { kind: 'table', name, position, ...(alias !== undefined ? { alias } : {}) };
  }

  private orderList(): OrderItem[] {
    const items: OrderItem[] = [];
    do {
      const expr = this.expr();
      let desc = false;
      if (this.acceptWord('DESC')) desc = true;
      else this.acceptWord('ASC');
      items.push({ expr, desc });
    } while (this.acceptOp(','));
    return items;
  }

  // Expressions, lowest precedence first (MySQL 8 manual, "Operator Precedence").

  expr(): Expr {
    let left = this.xorExpr();
    while (this.acceptWord('OR')) left = { kind: 'binary', op: 'OR', left, right: this.xorExpr() };
    if (this.isOp('||')) throw this.refuse("'||' (write OR, or CONCAT() to join text)");
    return left;
  }

  private xorExpr(): Expr {
    let left = this.andExpr();
    while (this.acceptWord('XOR')) left = { kind: 'binary', op: 'XOR', left, right: this.andExpr() };
    return left;
  }

  private andExpr(): Expr {
    let left = this.notExpr();
    for (;;) {
      if (this.isOp('&&')) throw this.refuse("'&&' (write AND)");
      if (!this.acceptWord('AND')) return left;
      left = { kind: 'binary', op: 'AND', left, right: this.notExpr() };
    }
  }

  private notExpr(): Expr {
    if (this.acceptWord('NOT')) return { kind: 'unary', op: 'NOT', expr: this.notExpr() };
    return this.predicate();
  }

  private predicate(): Expr {
    let left = this.bitOr();
    for (;;) {
      if (this.isOp('=', '<>', '!=', '<', '<=', '>', '>=', '<=>')) {
        const written = this.next().value;
        const op = (written === '!=' ? '<>' : written) as BinaryOp;
        if (this.isWord('ANY', 'SOME', 'ALL') && this.peek().value === '(')
          throw this.refuse(`${this.token.value} (subquery)`);
        left = { kind: 'binary', op, left, right: this.bitOr() };
        continue;
      }
      if (this.acceptWord('IS')) {
        const not = this.acceptWord('NOT');
        if (this.acceptWord('NULL')) left = { kind: 'is', expr: left, not, value: 'NULL' };
        else if (this.acceptWord('TRUE')) left = { kind: 'is', expr: left, not, value: 'TRUE' };
        else if (this.acceptWord('FALSE')) left = { kind: 'is', expr: left, not, value: 'FALSE' };
        else throw this.refuse(`IS ${not ? 'NOT ' : ''}${this.token.value || '...'}`);
        continue;
      }
      const not =
        this.isWord('NOT') &&
        this.peek().kind === 'word' &&
        ['IN', 'BETWEEN', 'LIKE', 'REGEXP', 'RLIKE'].includes(this.peek().value);
      if (not) this.i += 1;
      if (this.acceptWord('IN')) {
        this.expectOp('(');
        if (this.isWord('SELECT', 'WITH')) {
          const select = this.selectStatement();
          this.expectOp(')');
          left = { kind: 'in-select', expr: left, not, select };
        } else {
          const list: Expr[] = [];
          do list.push(this.expr());
          while (this.acceptOp(','));
          this.expectOp(')');
          left = { kind: 'in', expr: left, not, list };
        }
        continue;
      }
      if (this.acceptWord('BETWEEN')) {
        const low = this.bitOr();
        this.expectWord('AND');
        left = { kind: 'between', expr: left, not, low, high: this.predicate() };
        continue;
      }
      if (this.acceptWord('LIKE')) {
        const pattern = this.bitOr();
        const like: Expr = { kind: 'like', expr: left, not, pattern };
        if (this.acceptWord('ESCAPE')) like.escape = this.bitOr();
        left = like;
        continue;
      }
      if (this.acceptWord('REGEXP', 'RLIKE')) {
        left = { kind: 'regexp', expr: left, not, pattern: this.bitOr() };
        continue;
      }
      if (not) throw this.unexpected();
      if (this.isWord('SOUNDS', 'MEMBER')) throw this.refuse(`${this.token.value} ${this.peek().value}`);
      return left;
    }
  }

  private bitOr(): Expr {
    const left = this.additive();
    if (this.isOp('|', '&', '<<', '>>', '^')) throw this.refuse(`the bit operator '${this.token.value}'`);
    return left;
  }

  private additive(): Expr {
    let left = this.multiplicative();
    for (;;) {
      if (this.isOp('+', '-')) {
        const op = this.next().value as '+' | '-';
        left = { kind: 'binary', op, left, right: this.multiplicative() };
      } else return left;
    }
  }

  private multiplicative(): Expr {
    let left = this.unary();
    for (;;) {
      if (this.isOp('*', '/', '%')) {
        const written = this.next().value;
        left = { kind: 'binary', op: written === '%' ? 'MOD' : (written as '*' | '/'), left, right: this.unary() };
      } else if (this.isWord('DIV', 'MOD')) {
        const op = this.next().value as 'DIV' | 'MOD';
        left = { kind: 'binary', op, left, right: this.unary() };
      } else return left;
    }
  }

  private unary(): Expr {
    if (this.isOp('-', '+')) {
      const op = this.next().value as '-' | '+';
      const operand = this.unary();
      if (op === '-' && operand.kind === 'number' && !operand.text.startsWith('-'))
        return { kind: 'number', text: `-${operand.text}` };
      return { kind: 'unary', op, expr: operand };
    }
    if (this.isOp('!')) throw this.refuse("'!' (write NOT)");
    if (this.isOp('~')) throw this.refuse("the bit operator '~'");
    if (this.isWord('BINARY')) throw this.refuse('BINARY');
    const primary = this.primary();
    if (this.isWord('COLLATE')) throw this.refuse('COLLATE');
    return primary;
  }

  private primary(): Expr {
    const token = this.token;
    switch (token.kind) {
      case 'string':
        this.i += 1;
        if (this.token.kind === 'string') throw this.refuse('adjacent string literals');
        return { kind: 'string', value: token.value };
      case 'number':
        this.i += 1;
        return { kind: 'number', text: token.value };
      case 'param':
        this.i += 1;
        return { kind: 'param', name: token.value };
      case 'name':
        return this.columnOrCall();
      case 'op':
        if (token.value === '(') {
          this.i += 1;
          if (this.isWord('SELECT', 'WITH')) {
            const select = this.selectStatement();
            this.expectOp(')');
            return { kind: 'subquery', select };
          }
          const inner = this.expr();
          if (this.isOp(',')) throw this.refuse('row constructors ((a, b))');
          this.expectOp(')');
          return inner;
        }
        if (token.value === '@') throw this.refuse('variables (@name)');
        if (token.value === '?') throw this.refuse("the parameter marker '?' (registered queries use #{name})");
        if (token.value === ':') throw this.refuse("the parameter marker ':name' (registered queries use #{name})");
        throw this.unexpected();
      case 'word':
        return this.wordPrimary();
      default:
        throw this.unexpected();
    }
  }

  private wordPrimary(): Expr {
    const word = this.token.value;
    const position = this.token.start;
    const called = this.peek().value === '(' && this.peek().kind === 'op';
    switch (word) {
      case 'NULL':
        this.i += 1;
        return { kind: 'null' };
      case 'TRUE':
      case 'FALSE':
        this.i += 1;
        return { kind: 'bool', value: word === 'TRUE' };
      case 'CASE':
        return this.caseExpr();
      case 'CAST':
        return this.castExpr();
      case 'EXISTS': {
        this.i += 1;
        this.expectOp('(');
        const select = this.selectStatement();
        this.expectOp(')');
        return { kind: 'exists', select };
      }
      case 'INTERVAL': {
        this.i += 1;
        const value = this.expr();
        return { kind: 'interval', value, unit: this.intervalUnit() };
      }
      case 'CURRENT_TIMESTAMP':
      case 'CURRENT_DATE':
        this.i += 1;
        if (this.acceptOp('(')) this.expectOp(')');
        return { kind: 'now', name: word === 'CURRENT_DATE' ? 'CURDATE' : 'NOW' };
      case 'DATE':
      case 'TIMESTAMP':
      case 'TIME':
        if (this.peek().kind === 'string') throw this.refuse(`the ${word} '...' literal (write the text alone)`);
        break;
    }
    if (!called) {
      if (RESERVED.has(word)) throw this.unexpected();
      return this.columnOrCall();
    }
    if (word === 'NOW' || word === 'CURDATE') {
      this.i += 2;
      this.expectOp(')');
      return { kind: 'now', name: word };
    }
    if (word === 'TRIM') return this.trimExpr();
    if (word === 'TIMESTAMPDIFF') {
      this.i += 2;
      const unit = this.intervalUnit();
      const args: Expr[] = [];
      while (this.acceptOp(',')) args.push(this.expr());
      this.expectOp(')');
      if (args.length !== 2) throw this.refuse('TIMESTAMPDIFF takes a unit and two values', position);
      return { kind: 'unit-call', name: 'TIMESTAMPDIFF', unit, args };
    }
    if (AGGREGATES.has(word)) return this.aggregate(word, position);
    if (WINDOW_FUNCTIONS.has(word)) {
      this.i += 2;
      const args = this.isOp(')') ? [] : this.argList();
      this.expectOp(')');
      if (!this.acceptWord('OVER')) throw this.refuse(`${word}() without OVER`, position);
      return { kind: 'window', name: word, args, over: this.overClause(), position };
    }
    const arity = SCALAR_FUNCTIONS.get(word);
    if (!arity) {
      throw this.refuse(`the function ${word}()`, position);
    }
    this.i += 2;
    let args: Expr[] = [];
    if (!this.isOp(')')) {
      args = this.argList();
      if ((word === 'SUBSTRING' || word === 'SUBSTR') && args.length === 1 && this.acceptWord('FROM')) {
        args.push(this.expr());
        if (this.acceptWord('FOR')) args.push(this.expr());
      }
    }
    this.expectOp(')');
    if (args.length < arity[0] || args.length > arity[1]) {
      const count =
        arity[0] === arity[1]
          ? `${arity[0]}`
          : arity[1] === 255
            ? `at least ${arity[0]}`
            : `${arity[0]} or ${arity[1]}`;
      throw this.refuse(
        `${word}() with ${args.length} argument${args.length === 1 ? '' : 's'} (it takes ${count})`,
        position,
      );
    }
    if (this.isWord('OVER')) throw this.refuse(`${word}() with OVER`, position);
    return {
      kind: 'call',
      name:
        word === 'SUBSTR' || word === 'MID'
          ? 'SUBSTRING'
          : word === 'DAYOFMONTH'
            ? 'DAY'
            : word === 'CEILING'
              ? 'CEIL'
              : word,
      args,
      position,
    };
  }

  private argList(): Expr[] {
    const args: Expr[] = [];
    do args.push(this.expr());
    while (this.acceptOp(','));
    return args;
  }

  private columnOrCall(): Expr {
    const position = this.token.start;
    const first = this.identifier('a column name');
    let column: Expr;
    if (this.acceptOp('.')) {
      const second = this.identifier('a column name');
      if (this.isOp('.')) throw this.refuse('a column named with its database (db.table.column)', position);
      column = { kind: 'column', table: first, column: second, position };
    } else {
      if (this.isOp('(')) throw this.refuse(`the function ${first.toUpperCase()}()`, position);
      column = { kind: 'column', column: first, position };
    }
    if (this.isOp('->', '->>')) {
      const op = this.next().value as '->' | '->>';
      if (this.token.kind !== 'string') throw this.unexpected(`a JSON path in quotes expected after ${op}`);
      return { kind: 'json', op, column, path: this.next().value };
    }
    return column;
  }

  private aggregate(name: string, position: number): Expr {
    this.i += 2;
    const node: Extract<Expr, { kind: 'aggregate' }> = { kind: 'aggregate', name, args: [], distinct: false, position };
    if (this.acceptWord('DISTINCT')) node.distinct = true;
    else this.acceptWord('ALL');
    if (name === 'COUNT' && !node.distinct && this.acceptOp('*')) node.star = true;
    else node.args = this.argList();
    if (name === 'GROUP_CONCAT') {
      if (this.acceptWord('ORDER')) {
        this.expectWord('BY');
        node.orderBy = this.orderList();
      }
      if (this.acceptWord('SEPARATOR')) {
        if (this.token.kind !== 'string') throw this.unexpected('a separator in quotes expected');
        node.separator = this.next().value;
      }
    }
    this.expectOp(')');
    const expected = name === 'JSON_OBJECTAGG' ? 2 : 1;
    if (
      !node.star &&
      node.args.length !== expected &&
      !(name === 'GROUP_CONCAT' && node.args.length > 1 && !node.distinct)
    ) {
      throw this.refuse(
        name === 'COUNT' && node.distinct
          ? 'COUNT(DISTINCT ...) of several expressions'
          : `${name}() with ${node.args.length} arguments`,
        position,
      );
    }
    if (node.distinct && !['COUNT', 'GROUP_CONCAT'].includes(name))
      throw this.refuse(`${name}(DISTINCT ...)`, position);
    if (this.acceptWord('OVER')) {
      if (['GROUP_CONCAT', 'JSON_ARRAYAGG', 'JSON_OBJECTAGG'].includes(name) || node.distinct)
        throw this.refuse(`${name}(${node.distinct ? 'DISTINCT ' : ''}...) OVER (...)`, position);
      node.over = this.overClause();
    }
    return node;
  }

  private overClause(): WindowSpec {
    if (!this.isOp('(')) return { name: this.identifier('a window name'), partitionBy: [], orderBy: [] };
    this.i += 1;
    return this.windowBody();
  }

  /** After the opening parenthesis of a window specification, through its closing one. */
  private windowBody(): WindowSpec {
    const spec: WindowSpec = { partitionBy: [], orderBy: [] };
    if (this.token.kind === 'name' || (this.token.kind === 'word' && !RESERVED.has(this.token.value)))
      throw this.refuse('a window that extends a named window');
    if (this.acceptWord('PARTITION')) {
      this.expectWord('BY');
      spec.partitionBy = this.argList();
    }
    if (this.acceptWord('ORDER')) {
      this.expectWord('BY');
      spec.orderBy = this.orderList();
    }
    if (this.isWord('ROWS', 'RANGE')) {
      const start = this.token.start;
      const unit = this.next().value;
      const bound = () => {
        if (this.acceptWord('UNBOUNDED')) {
          if (!this.acceptWord('PRECEDING')) this.expectWord('FOLLOWING');
        } else if (this.acceptWord('CURRENT')) this.expectWord('ROW');
        else {
          const token = this.token;
          if (token.kind !== 'number' || !/^\d+$/.test(token.value) || unit === 'RANGE')
            throw this.refuse(
              `a ${unit} frame bound other than UNBOUNDED or CURRENT ROW${unit === 'ROWS' ? ' or a whole number' : ''}`,
            );
          this.i += 1;
          if (!this.acceptWord('PRECEDING')) this.expectWord('FOLLOWING');
        }
      };
      if (this.acceptWord('BETWEEN')) {
        bound();
        this.expectWord('AND');
        bound();
      } else bound();
      if (this.isWord('EXCLUDE')) throw this.refuse('EXCLUDE in a window frame');
      spec.frame = this.sql.slice(start, this.tokens[this.i - 1]?.end);
    }
    this.expectOp(')');
    return spec;
  }

  private caseExpr(): Expr {
    this.i += 1;
    const node: Extract<Expr, { kind: 'case' }> = { kind: 'case', whens: [] };
    if (!this.isWord('WHEN')) node.operand = this.expr();
    while (this.acceptWord('WHEN')) {
      const when = this.expr();
      this.expectWord('THEN');
      node.whens.push({ when, result: this.expr() });
    }
    if (node.whens.length === 0) throw this.unexpected('WHEN expected');
    if (this.acceptWord('ELSE')) node.else = this.expr();
    this.expectWord('END');
    return node;
  }

  private castExpr(): Expr {
    const position = this.token.start;
    this.i += 1;
    this.expectOp('(');
    const expr = this.expr();
    this.expectWord('AS');
    const typeToken = this.next();
    let to: CastType;
    switch (typeToken.value) {
      case 'SIGNED':
      case 'UNSIGNED':
        this.acceptWord('INTEGER') || this.acceptWord('INT');
        to = { type: typeToken.value };
        break;
      case 'CHAR':
        if (this.isOp('(')) throw this.refuse('CAST(... AS CHAR(n))', position);
        if (this.isWord('CHARACTER', 'CHARSET')) throw this.refuse('CAST with a character set', position);
        to = { type: 'CHAR' };
        break;
      case 'DATE':
      case 'DATETIME':
        if (this.isOp('(')) throw this.refuse(`CAST(... AS ${typeToken.value}(n))`, position);
        to = { type: typeToken.value };
        break;
      case 'DECIMAL': {
        let precision = 10;
        let scale = 0;
        if (this.acceptOp('(')) {
          precision = this.wholeNumber();
          if (this.acceptOp(',')) scale = this.wholeNumber();
          this.expectOp(')');
        }
        if (precision < 1 || precision > 65 || scale > 30 || scale > precision)
          throw this.refuse(
            `DECIMAL(${precision},${scale}) (precision 1 to 65, scale at most 30 and at most the precision)`,
            position,
          );
        to = { type: 'DECIMAL', precision, scale };
        break;
      }
      default:
        throw this.refuse(`CAST(... AS ${typeToken.value || '?'})`, position);
    }
    this.expectOp(')');
    return { kind: 'cast', expr, to };
  }

  private wholeNumber(): number {
    const token = this.token;
    if (token.kind !== 'number' || !/^\d+$/.test(token.value)) throw this.unexpected('a whole number expected');
    this.i += 1;
    return Number(token.value);
  }

  private trimExpr(): Expr {
    this.i += 2;
    let mode: 'BOTH' | 'LEADING' | 'TRAILING' = 'BOTH';
    let explicit = false;
    if (this.isWord('BOTH', 'LEADING', 'TRAILING')) {
      mode = this.next().value as typeof mode;
      explicit = true;
    }
    let remove: Expr | undefined;
    let expr: Expr;
    if (explicit && this.acceptWord('FROM')) expr = this.expr();
    else {
      const first = this.expr();
      if (this.acceptWord('FROM')) {
        remove = first;
        expr = this.expr();
      } else {
        if (explicit) throw this.unexpected('FROM expected');
        expr = first;
      }
    }
    this.expectOp(')');
    return { kind: 'trim', mode, expr, ...(remove ? { remove } : {}) };
  }

  private intervalUnit(): IntervalUnit {
    const token = this.token;
    if (token.kind === 'word' && (INTERVAL_UNITS as readonly string[]).includes(token.value)) {
      this.i += 1;
      return token.value as IntervalUnit;
    }
    throw this.refuse(`the interval unit ${token.value || '?'} (one of ${INTERVAL_UNITS.join(', ')})`);
  }
}
