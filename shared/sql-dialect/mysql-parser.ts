/**
 * Reads one registered query as MySQL 8 reads it (operator precedence, keywords, literals) into the syntax tree of
 * mysql-ast.ts. Only what docs/interface.md §19 accepts is read: a statement other than SELECT/WITH, a function
 * outside the list or a construct MySQL has but the list does not (variables, bit operators, `STRAIGHT_JOIN`,
 * `GROUP BY ... WITH ROLLUP`, locking clauses, ...) stops the reading with a DialectError that names it.
 *
 * This file reads statements (WITH, UNION, SELECT, FROM and JOIN); expressions are read by mysql-expression-parser.ts,
 * over the token cursor of token-cursor.ts, with the names of mysql-names.ts.
 */
import type { Expr, FromItem, QueryBody, SelectCore, SelectItem, SelectStatement } from './mysql-ast';
import { ExpressionParser } from './mysql-expression-parser';
import { tokenize } from './mysql-lexer';
import { RESERVED } from './mysql-names';

/** Parses the text of one registered query. */
export function parseQuery(sql: string): SelectStatement {
  const parser = new Parser(sql, tokenize(sql));
  const statement = parser.statement();
  parser.finish();
  return statement;
}

class Parser extends ExpressionParser {
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

  protected override selectStatement(): SelectStatement {
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
}
