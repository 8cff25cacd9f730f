/**
 * Expressions as MySQL 8 reads them, lowest precedence first (MySQL 8 manual, "Operator Precedence"): the part of
 * the parser (mysql-parser.ts) that statements, subqueries aside, hand every value to.
 */

import {
  type BinaryOp,
  type CastType,
  type Expr,
  INTERVAL_UNITS,
  type IntervalUnit,
  type OrderItem,
  type SelectStatement,
  type WindowSpec,
} from './mysql-ast';
import { AGGREGATES, RESERVED, SCALAR_FUNCTIONS, WINDOW_FUNCTIONS } from './mysql-names';
import { TokenCursor } from './token-cursor';

export abstract class ExpressionParser extends TokenCursor {
  /** A subquery: the statement parser reads it (mysql-parser.ts). */
  protected abstract selectStatement(): SelectStatement;

  protected orderList(): OrderItem[] {
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

  expr(): Expr {
    let left = this.xorExpr();
    while (this.acceptWord('OR')) left = { kind: 'binary', op: 'OR', left, right: this.xorExpr() };
    if (this.isOp('||')) throw this.refuse("'||' (write OR, or CONCAT() to join text)");
    return left;
  }

  protected xorExpr(): Expr {
    let left = this.andExpr();
    while (this.acceptWord('XOR')) left = { kind: 'binary', op: 'XOR', left, right: this.andExpr() };
    return left;
  }

  protected andExpr(): Expr {
    let left = this.notExpr();
    for (;;) {
      if (this.isOp('&&')) throw this.refuse("'&&' (write AND)");
      if (!this.acceptWord('AND')) return left;
      left = { kind: 'binary', op: 'AND', left, right: this.notExpr() };
    }
  }

  protected notExpr(): Expr {
    if (this.acceptWord('NOT')) return { kind: 'unary', op: 'NOT', expr: this.notExpr() };
    return this.predicate();
  }

  protected predicate(): Expr {
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

  protected bitOr(): Expr {
    const left = this.additive();
    if (this.isOp('|', '&', '<<', '>>', '^')) throw this.refuse(`the bit operator '${this.token.value}'`);
    return left;
  }

  protected additive(): Expr {
    let left = this.multiplicative();
    for (;;) {
      if (this.isOp('+', '-')) {
        const op = this.next().value as '+' | '-';
        left = { kind: 'binary', op, left, right: this.multiplicative() };
      } else return left;
    }
  }

  protected multiplicative(): Expr {
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

  protected unary(): Expr {
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

  protected primary(): Expr {
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

  protected wordPrimary(): Expr {
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

  protected argList(): Expr[] {
    const args: Expr[] = [];
    do args.push(this.expr());
    while (this.acceptOp(','));
    return args;
  }

  protected columnOrCall(): Expr {
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

  protected aggregate(name: string, position: number): Expr {
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

  protected overClause(): WindowSpec {
    if (!this.isOp('(')) return { name: this.identifier('a window name'), partitionBy: [], orderBy: [] };
    this.i += 1;
    return this.windowBody();
  }

  /** After the opening parenthesis of a window specification, through its closing one. */
  protected windowBody(): WindowSpec {
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

  protected caseExpr(): Expr {
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

  protected castExpr(): Expr {
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

  protected wholeNumber(): number {
    const token = this.token;
    if (token.kind !== 'number' || !/^\d+$/.test(token.value)) throw this.unexpected('a whole number expected');
    this.i += 1;
    return Number(token.value);
  }

  protected trimExpr(): Expr {
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

  protected intervalUnit(): IntervalUnit {
    const token = this.token;
    if (token.kind === 'word' && (INTERVAL_UNITS as readonly string[]).includes(token.value)) {
      this.i += 1;
      return token.value as IntervalUnit;
    }
    throw this.refuse(`the interval unit ${token.value || '?'} (one of ${INTERVAL_UNITS.join(', ')})`);
  }
}
