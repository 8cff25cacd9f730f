/** A cursor over a query's tokens (mysql-lexer.ts), with the errors a parser throws at the token it stopped at. */
import { DialectError } from './dialect-error';
import type { Token } from './mysql-lexer';
import { RESERVED } from './mysql-names';

export class TokenCursor {
  protected i = 0;

  constructor(
    protected readonly sql: string,
    protected readonly tokens: Token[],
  ) {}

  protected get token(): Token {
    return this.tokens[this.i] as Token;
  }

  protected peek(offset = 1): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)] as Token;
  }

  protected isWord(...words: string[]): boolean {
    return this.token.kind === 'word' && words.includes(this.token.value);
  }

  protected isOp(...ops: string[]): boolean {
    return this.token.kind === 'op' && ops.includes(this.token.value);
  }

  protected next(): Token {
    const token = this.token;
    if (token.kind !== 'end') this.i += 1;
    return token;
  }

  protected acceptWord(...words: string[]): boolean {
    if (!this.isWord(...words)) return false;
    this.i += 1;
    return true;
  }

  protected acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i += 1;
    return true;
  }

  protected expectWord(word: string): void {
    if (!this.acceptWord(word)) throw this.unexpected(`${word} expected`);
  }

  protected expectOp(op: string): void {
    if (!this.acceptOp(op)) throw this.unexpected(`'${op}' expected`);
  }

  protected unexpected(why?: string): DialectError {
    const token = this.token;
    const shown = token.kind === 'end' ? 'the end of the query' : `'${this.sql.slice(token.start, token.end)}'`;
    return new DialectError(`syntax error at ${shown}${why ? ` (${why})` : ''}`, token.start, 'syntax');
  }

  protected refuse(construct: string, at = this.token.start): DialectError {
    return new DialectError(construct, at);
  }

  finish(): void {
    while (this.acceptOp(';')) {
      if (this.token.kind !== 'end') throw this.refuse('more than one statement (only one SELECT is allowed)');
    }
    if (this.token.kind !== 'end') throw this.unexpected();
  }

  /** A name: a backtick-quoted one, or a word that is not reserved. */
  protected identifier(what: string): string {
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
}
