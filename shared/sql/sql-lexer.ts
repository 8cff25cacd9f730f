/**
 * Splits SQL text into code and the parts whose content is not SQL (string literals, quoted identifiers and
 * comments), following SQLite's lexical rules. Placeholder rewriting, the one-statement rule and the read-only
 * rule all look only at code, so a `#{x}`, a `;` or a keyword inside a literal or a comment means nothing.
 */

export type SegmentKind = 'code' | 'string' | 'identifier' | 'comment';

export interface SqlSegment {
  kind: SegmentKind;
  /** The segment's text exactly as written, quotes and comment markers included. */
  text: string;
}

/** Splits `sql` into consecutive segments; joining their texts gives `sql` back. */
export function splitSql(sql: string): SqlSegment[] {
  const segments: SqlSegment[] = [];
  let codeStart = 0;
  let i = 0;
  const push = (kind: SegmentKind, start: number, end: number) => {
    if (end > start) segments.push({ kind, text: sql.slice(start, end) });
  };
  while (i < sql.length) {
    const ch = sql[i];
    const next = sql[i + 1];
    let end = -1;
    let kind: SegmentKind = 'code';
    if (ch === "'") {
      kind = 'string';
      end = quotedEnd(sql, i, "'");
    } else if (ch === '"' || ch === '`') {
      kind = 'identifier';
      end = quotedEnd(sql, i, ch);
    } else if (ch === '[') {
      // SQLite's [identifier] form has no escape: it ends at the first ']'.
      kind = 'identifier';
      const close = sql.indexOf(']', i + 1);
      end = close === -1 ? sql.length : close + 1;
    } else if (ch === '-' && next === '-') {
      kind = 'comment';
      const newline = sql.indexOf('\n', i + 2);
      end = newline === -1 ? sql.length : newline + 1;
    } else if (ch === '/' && next === '*') {
      // An unterminated block comment runs to the end of the text, as in SQLite.
      kind = 'comment';
      const close = sql.indexOf('*/', i + 2);
      end = close === -1 ? sql.length : close + 2;
    }
    if (end === -1) {
      i += 1;
      continue;
    }
    push('code', codeStart, i);
    push(kind, i, end);
    i = end;
    codeStart = end;
  }
  push('code', codeStart, sql.length);
  return segments;
}

/** End (exclusive) of a literal opened by `quote` at `start`; a doubled quote is an escaped one. */
function quotedEnd(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i += 1;
  }
  // Unterminated: the engine reports it ("unrecognized token"); nothing after it is code.
  return sql.length;
}

/** The first keyword of the statement, upper-cased, skipping comments; '' when there is none. */
export function firstKeyword(sql: string): string {
  for (const segment of splitSql(sql)) {
    if (segment.kind === 'comment') continue;
    if (segment.kind !== 'code') return '';
    const trimmed = segment.text.trimStart();
    if (trimmed === '') continue;
    const word = /^[A-Za-z_]+/.exec(trimmed);
    return word ? word[0].toUpperCase() : '';
  }
  return '';
}

/**
 * Whether the text holds more than one statement: a `;` in code followed by anything but whitespace,
 * semicolons and comments. (In SQLite a `;` inside code only ever ends a statement, except in trigger bodies,
 * which are writes and refused anyway.)
 */
export function hasSeveralStatements(sql: string): boolean {
  let ended = false;
  for (const segment of splitSql(sql)) {
    if (segment.kind === 'comment') continue;
    if (segment.kind !== 'code') {
      if (ended) return true;
      continue;
    }
    for (const ch of segment.text) {
      if (ch === ';') ended = true;
      else if (ended && !/\s/.test(ch)) return true;
    }
  }
  return false;
}

/**
 * Every name the text might use for a table: bare words in code, the content of quoted identifiers, and the
 * content of string literals (SQLite accepts `FROM 'orders'`). A superset on purpose: it decides which
 * datasets to load, and loading one too many costs time, never correctness.
 */
export function referencedNames(sql: string): Set<string> {
  const names = new Set<string>();
  for (const segment of splitSql(sql)) {
    if (segment.kind === 'code') {
      for (const word of segment.text.matchAll(/[A-Za-z0-9_$-]+/g)) names.add(word[0]);
      // A code like `app-orders` is also seen as its parts when written unquoted.
      for (const word of segment.text.matchAll(/[A-Za-z0-9_$]+/g)) names.add(word[0]);
    } else if (segment.kind === 'identifier' || segment.kind === 'string') {
      names.add(unquote(segment.text));
    }
  }
  return names;
}

function unquote(text: string): string {
  const open = text[0];
  const close = open === '[' ? ']' : open;
  const body = text.endsWith(close ?? '') && text.length > 1 ? text.slice(1, -1) : text.slice(1);
  return open === '[' ? body : body.split(`${open}${open}`).join(open);
}
