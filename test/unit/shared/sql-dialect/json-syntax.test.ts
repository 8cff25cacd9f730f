/**
 * Why a text is not JSON, as MySQL 8 says it in error 3141 (docs/interface.md §20): RapidJSON's message for the
 * first error and its byte offset. A text is refused exactly when JSON.parse refuses it (or reads a number too big
 * for a double, or a high surrogate escape with no low one after it, which RapidJSON refuses and JSON.parse lets by).
 */
import fc from 'fast-check';
import { jsonSyntaxError } from '../../../../shared/sql-dialect/sqlite-functions';

function oracleAccepts(text: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  const fine = (v: unknown): boolean => {
    if (typeof v === 'number') return Number.isFinite(v);
    if (typeof v === 'string') return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(v);
    if (Array.isArray(v)) return v.every(fine);
    if (v && typeof v === 'object') return Object.entries(v).every(([key, item]) => fine(key) && fine(item));
    return true;
  };
  return fine(value);
}

it('accepts every JSON text, however it is spaced', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(undefined, 1, '\t', ' \n'), (value, space) => {
      expect(jsonSyntaxError(JSON.stringify(value, null, space))).toBeUndefined();
    }),
  );
});

it('refuses a text exactly when a JSON parser does', () => {
  const piece = fc.constantFrom(
    ...'{}[],:" 0123456789.eE-+\\/ntfalrsbxé'.split(''),
    'true',
    'null',
    'false',
    '\\u00e9',
    '\\uD83D\\uDE00',
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const text = pieces.join('');
      expect(jsonSyntaxError(text) === undefined).toBe(oracleAccepts(text));
    }),
    { numRuns: 2_000 },
  );
});

it.each([
  ['', 'The document is empty.', 0],
  ['  ', 'The document is empty.', 2],
  ['abc', 'Invalid value.', 0],
  ['not json', 'Invalid value.', 1],
  ['tru', 'Invalid value.', 3],
  ['{"a": 1', "Missing a comma or '}' after an object member.", 7],
  ['{a}', 'Missing a name for object member.', 1],
  ['{"a" 1}', 'Missing a colon after a name of object member.', 5],
  ['[1, 2', "Missing a comma or ']' after an array element.", 5],
  ['[1,]', 'Invalid value.', 3],
  ['{"a": 1} x', 'The document root must not be followed by other values.', 9],
  ['01', 'The document root must not be followed by other values.', 1],
  ['"abc', 'Missing a closing quotation mark in string.', 4],
  ['"a\\x"', 'Invalid escape character in string.', 2],
  ['"\\u12g4"', 'Incorrect hex digit after \\u escape in string.', 1],
  ['"\\uD800"', 'The surrogate pair in string is invalid.', 1],
  ['"a\tb"', 'Invalid encoding in string.', 2],
  ['1.', 'Miss fraction part in number.', 2],
  ['1e', 'Miss exponent in number.', 2],
  ['-', 'Invalid value.', 1],
  ['[1e400]', 'Number too big to be stored in double.', 1],
  ['"é" x', 'The document root must not be followed by other values.', 5],
])('%j: %s at byte %d', (text, reason, position) => {
  expect(jsonSyntaxError(text)).toEqual({ reason, position });
});
