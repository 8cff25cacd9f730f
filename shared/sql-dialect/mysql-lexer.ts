/**
 * Reads a registered query's text as MySQL 8 reads it, into tokens: strings in single or double quotes with
 * MySQL's backslash escapes, backtick-quoted names, numbers, words, operators, comments (`#`, `-- `, `/* *\/`)
 * and the MyBatis placeholders `#{name}` that stand for bound values. Every token keeps its position, so that a
 * refusal can point at the construct and an unaliased result column is named by the text that was written.
 */
import { DialectError } from './dialect-error';

export type TokenKind = 'word' | 'name' | 'string' | 'number' | 'param' | 'op' | 'end';

export interface Token {
  kind: TokenKind;
  /** A word upper-cased; a quoted name or string unescaped; a number or operator as written; a param's name. */
  value: string;
  /** The text as written, from `start` to `end`. */
  start: number;
  end: number;
}

const OPERATORS = ['<=>', '->>', '<=', '>=', '<>', '!=', '->', ':=', '||', '&&', '<<', '>>'];
const SINGLE = '()<>=,.;+-*/%!~&|^@?:[]{}';

/** The tokens of `sql`, ending with one `end` token. Comments are dropped. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const at = (offset = 0) => sql[i + offset] ?? '';
  while (i < sql.length) {
    const ch = at();
    const start = i;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (ch === '#' && at(1) === '{') {
      const close = sql.indexOf('}', i);
      const inner = close === -1 ? '' : sql.slice(i + 2, close).trim();
      if (close === -1 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(inner)) {
        throw new DialectError(
          `malformed placeholder '${sql.slice(i, close === -1 ? i + 20 : close + 1)}': write #{name}`,
          start,
          'syntax',
        );
      }
      i = close + 1;
      tokens.push({ kind: 'param', value: inner, start, end: i });
      continue;
    }
    if (ch === '#' || (ch === '-' && at(1) === '-' && (at(2) === '' || /\s/.test(at(2))))) {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline + 1;
      continue;
    }
    if (ch === '/' && at(1) === '*') {
      if (at(2) === '!' || at(2) === '+') {
        throw new DialectError(`the comment form '/*${at(2)}' (its content runs as SQL in MySQL)`, start);
      }
      const close = sql.indexOf('*/', i + 2);
      if (close === -1) throw new DialectError('a comment that is never closed', start, 'syntax');
      i = close + 2;
      continue;
    }
    if (ch === "'" || ch === '"') {
      const { value, end } = readString(sql, i, ch);
      i = end;
      tokens.push({ kind: 'string', value, start, end });
      continue;
    }
    if (ch === '`') {
      let value = '';
      i += 1;
      for (;;) {
        if (i >= sql.length) throw new DialectError('a `name` that is never closed', start, 'syntax');
        if (sql[i] === '`') {
          if (sql[i + 1] === '`') {
            value += '`';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        value += sql[i];
        i += 1;
      }
      tokens.push({ kind: 'name', value, start, end: i });
      continue;
    }
    if (/^0[xXbB][0-9A-Fa-f]/.test(sql.slice(i, i + 3))) throw new DialectError('hexadecimal and bit literals', start);
    const number = /^(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(sql.slice(i, i + 400));
    if (number && !/[A-Za-z_$\u0080-\uffff]/.test(sql[i + number[0].length] ?? '')) {
      i += number[0].length;
      tokens.push({ kind: 'number', value: number[0], start, end: i });
      continue;
    }
    const word = /^[A-Za-z0-9_$\u0080-\uffff]+/.exec(sql.slice(i, i + 400));
    if (word) {
      i += word[0].length;
      if (/^[xXbB]$/.test(word[0]) && sql[i] === "'") throw new DialectError('hexadecimal and bit literals', start);
      if (word[0].startsWith('_') && sql[i] === "'") throw new DialectError('character set introducers', start);
      tokens.push({ kind: 'word', value: word[0].toUpperCase(), start, end: i });
      continue;
    }
    const op = OPERATORS.find((candidate) => sql.startsWith(candidate, i)) ?? (SINGLE.includes(ch) ? ch : undefined);
    if (!op) throw new DialectError(`the character '${ch}'`, start);
    i += op.length;
    tokens.push({ kind: 'op', value: op, start, end: i });
  }
  tokens.push({ kind: 'end', value: '', start: sql.length, end: sql.length });
  return tokens;
}

const ESCAPES: Record<string, string> = { '0': '\0', b: '\b', n: '\n', r: '\r', t: '\t', Z: '\x1a' };

/** A quoted string: a doubled quote or a backslash escape stands for one character (`\%`, `\_` keep the backslash). */
function readString(sql: string, open: number, quote: string): { value: string; end: number } {
  let value = '';
  let i = open + 1;
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (ch === '\\') {
      const next = sql[i + 1] ?? '';
      value += next === '%' || next === '_' ? `\\${next}` : (ESCAPES[next] ?? next);
      i += 2;
      continue;
    }
    if (ch === quote) {
      if (sql[i + 1] === quote) {
        value += quote;
        i += 2;
        continue;
      }
      return { value, end: i + 1 };
    }
    value += ch;
    i += 1;
  }
  throw new DialectError('a string that is never closed', open, 'syntax');
}
