/**
 * Checks the caller's `params` against the parameters a registered query declares (docs/interface.md §8) and coerces
 * them to the declared types, so the engine binds values of the type the query's author expected. Every
 * problem is 1001 naming the parameter; a declared optional parameter that is absent binds as NULL.
 */
import type { QueryParamConfig } from '../catalog/schema';
import { InvalidParameterError } from '../contract/errors';
import type { SqlParamValue } from './query-engine';

/** Decimal numbers as people write them: `12`, `-3.5`, `.5`, `1e3`; not `0x10`, `Infinity` or ''. */
const NUMERIC_TEXT = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

const ARTICLE: Record<QueryParamConfig['type'], string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
};

/**
 * The values to bind, one per declared parameter (absent optional ones as null).
 *
 * @param declared the query's `params` from the configuration
 * @param given the request's `params`: absent, or an object of string, number, boolean or null values
 * @throws InvalidParameterError when `given` is not an object, names an undeclared parameter, misses a required
 *   one or holds a value of the wrong type
 */
export function checkQueryParams(
  declared: Readonly<Record<string, QueryParamConfig>> | undefined,
  given: unknown,
): Record<string, SqlParamValue> {
  if (given !== undefined && (given === null || typeof given !== 'object' || Array.isArray(given))) {
    throw new InvalidParameterError('params must be an object of parameter names to values');
  }
  const supplied = (given ?? {}) as Record<string, unknown>;
  const specs = declared ?? {};
  for (const name of Object.keys(supplied)) {
    if (!Object.hasOwn(specs, name))
      throw new InvalidParameterError(`parameter '${name}' is not declared by this query`);
  }
  const values: Record<string, SqlParamValue> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = Object.hasOwn(supplied, name) ? supplied[name] : undefined;
    if (value === undefined || value === null) {
      if (spec.required) throw new InvalidParameterError(`parameter '${name}' is required`);
      values[name] = null;
      continue;
    }
    values[name] = coerce(name, spec.type, value);
  }
  return values;
}

function coerce(name: string, type: QueryParamConfig['type'], value: unknown): SqlParamValue {
  const wrongType = () => new InvalidParameterError(`parameter '${name}' expects ${ARTICLE[type]}`);
  switch (type) {
    case 'string':
      if (typeof value !== 'string') throw wrongType();
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw wrongType();
      return value;
    case 'number':
    case 'integer': {
      const number = toNumber(value);
      if (number === undefined) throw wrongType();
      if (type === 'integer' && !Number.isSafeInteger(number)) throw wrongType();
      return number;
    }
  }
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && NUMERIC_TEXT.test(value)) {
    const number = Number(value);
    return Number.isFinite(number) ? number : undefined;
  }
  return undefined;
}
