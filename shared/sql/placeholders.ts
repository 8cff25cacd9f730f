/**
 * Turns the MyBatis-style `#{name}` placeholders of a registered query into SQLite's numbered parameters
 * (`?1`, `?2`, ...) so that every value is bound by the engine and never spliced into the text (docs/interface.md §8).
 * Only code is rewritten: a `#{x}` inside a string literal, a quoted identifier or a comment stays as written.
 * The engine's own parameter markers (`?`, `:x`, `@x`, `$x`, `#x`) are refused in the registered text,
 * because a value for them could never be supplied and SQLite would quietly bind NULL.
 */
import { SqlStatementError } from './query-engine';
import { splitSql } from './sql-lexer';

export interface CompiledSql {
  /** The statement with `?N` in place of each placeholder. */
  text: string;
  /** Parameter names in the order of their numbers: `names[0]` is bound to `?1`. */
  names: readonly string[];
}

const PLACEHOLDER = /#\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}/y;
/** A parameter marker of the engine's own syntax, at a position where SQLite would read one. */
const NATIVE_MARKER = /\?\d*|[:@$#][A-Za-z0-9_]+/y;

/**
 * Rewrites `#{name}` placeholders into numbered parameters; the same name used twice gets the same number.
 * Throws `SqlStatementError` for a malformed placeholder or a native parameter marker.
 */
export function compilePlaceholders(sql: string): CompiledSql {
  const names: string[] = [];
  let text = '';
  for (const segment of splitSql(sql)) {
    text += segment.kind === 'code' ? rewriteCode(segment.text, names) : segment.text;
  }
  return { text, names };
}

function rewriteCode(code: string, names: string[]): string {
  let out = '';
  let i = 0;
  while (i < code.length) {
    const ch = code[i] ?? '';
    if (ch === '#' && code[i + 1] === '{') {
      PLACEHOLDER.lastIndex = i;
      const match = PLACEHOLDER.exec(code);
      if (!match) {
        const shown = code.slice(i, code.indexOf('}', i) === -1 ? i + 20 : code.indexOf('}', i) + 1);
        throw new SqlStatementError(`malformed placeholder '${shown}': write #{name} with a declared parameter name`);
      }
      const name = match[1] ?? '';
      let index = names.indexOf(name);
      if (index === -1) index = names.push(name) - 1;
      out += `?${index + 1}`;
      i += match[0].length;
      continue;
    }
    // `$` may sit inside an identifier (`a$b`); it only starts a marker where a token starts.
    const previous = code[i - 1] ?? ' ';
    if (!(ch === '$' && /[A-Za-z0-9_$]/.test(previous))) {
      NATIVE_MARKER.lastIndex = i;
      const marker = NATIVE_MARKER.exec(code);
      if (marker) {
        throw new SqlStatementError(
          `parameter marker '${marker[0]}' is not supported: registered queries use #{name} placeholders`,
        );
      }
    }
    out += ch;
    i += 1;
  }
  return out;
}

/** Binds named values to the numbered parameters of `compiled`, in number order. */
export function orderParams<T>(compiled: CompiledSql, values: Readonly<Record<string, T>>): T[] {
  return compiled.names.map((name) => {
    if (!Object.hasOwn(values, name)) {
      throw new SqlStatementError(`placeholder #{${name}} has no declared parameter`);
    }
    return values[name] as T;
  });
}
