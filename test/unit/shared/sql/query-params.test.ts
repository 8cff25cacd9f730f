import type { QueryParamConfig } from '../../../../shared/catalog/schema';
import { InvalidParameterError } from '../../../../shared/contract/errors';
import { checkQueryParams } from '../../../../shared/sql/query-params';

const declared: Record<string, QueryParamConfig> = {
  region: { type: 'string', required: true },
  minAmount: { type: 'number' },
  limit: { type: 'integer' },
  active: { type: 'boolean' },
};

function problem(given: unknown): string {
  try {
    checkQueryParams(declared, given);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).code).toBe(1001);
    return (error as Error).message;
  }
  throw new Error('expected an InvalidParameterError');
}

describe('checkQueryParams', () => {
  it('returns every declared parameter, absent optional ones as null', () => {
    expect(checkQueryParams(declared, { region: 'EU' })).toEqual({
      region: 'EU',
      minAmount: null,
      limit: null,
      active: null,
    });
  });

  it('coerces numeric strings for number and integer parameters', () => {
    expect(checkQueryParams(declared, { region: 'EU', minAmount: '12.5', limit: ' 10 ', active: true })).toEqual({
      region: 'EU',
      minAmount: 12.5,
      limit: 10,
      active: true,
    });
  });

  it('takes null for an optional parameter as absent', () => {
    expect(checkQueryParams(declared, { region: 'EU', limit: null })).toEqual({
      region: 'EU',
      minAmount: null,
      limit: null,
      active: null,
    });
  });

  it('accepts absent params when nothing is required', () => {
    expect(checkQueryParams({ a: { type: 'number' } }, undefined)).toEqual({ a: null });
    expect(checkQueryParams(undefined, undefined)).toEqual({});
  });

  it('names a missing required parameter', () => {
    expect(problem({})).toBe("parameter 'region' is required");
    expect(problem({ region: null })).toBe("parameter 'region' is required");
  });

  it('names an undeclared parameter', () => {
    expect(problem({ region: 'EU', secret: 1 })).toBe("parameter 'secret' is not declared by this query");
    expect(() => checkQueryParams(undefined, { a: 1 })).toThrow("parameter 'a' is not declared by this query");
  });

  it.each([
    [{ region: 5 }, "parameter 'region' expects a string"],
    [{ region: 'EU', minAmount: 'ten' }, "parameter 'minAmount' expects a number"],
    [{ region: 'EU', minAmount: '' }, "parameter 'minAmount' expects a number"],
    [{ region: 'EU', minAmount: '0x10' }, "parameter 'minAmount' expects a number"],
    [{ region: 'EU', minAmount: true }, "parameter 'minAmount' expects a number"],
    [{ region: 'EU', minAmount: '1e999' }, "parameter 'minAmount' expects a number"],
    [{ region: 'EU', limit: 1.5 }, "parameter 'limit' expects an integer"],
    [{ region: 'EU', limit: '2.5' }, "parameter 'limit' expects an integer"],
    [{ region: 'EU', active: 'true' }, "parameter 'active' expects a boolean (true or false)"],
    [{ region: 'EU', active: 1 }, "parameter 'active' expects a boolean (true or false)"],
    [{ region: ['EU'] }, "parameter 'region' expects a string"],
  ])('refuses a wrong type: %j', (given, message) => {
    expect(problem(given)).toBe(message);
  });

  it.each([[null], [[]], ['region=EU'], [3]])('refuses params that are not an object: %j', (given) => {
    expect(problem(given)).toBe('params must be an object of parameter names to values');
  });
});
