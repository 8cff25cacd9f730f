/** The size check of `where` (docs/interface.md §7): counted as the parser counts, first, and stopping at the limit + 1. */
import fc from 'fast-check';
import { type Dataset, toDataset } from '../../../../shared/catalog/catalog';
import type { FieldConfig } from '../../../../shared/catalog/schema';
import { InvalidParameterError } from '../../../../shared/contract/errors';
import { parseListParams } from '../../../../shared/query/list-params';
import { countWhereConditions, parseWhere } from '../../../../shared/records/filter-parser';

const FIELDS: FieldConfig[] = [
  { name: 'name', type: 'string' },
  { name: 'qty', type: 'integer' },
];
const DATASET: Dataset = toDataset({ datasetCode: 'orders', appCode: 'app', name: 'orders', fields: FIELDS });

const TOO_MANY = new InvalidParameterError('where: holds more than 100 conditions');

/** `n` conditions `{qty: {$ne: k}}` under one `$or`. */
function wide(n: number) {
  return { $or: Array.from({ length: n }, (_, k) => ({ qty: { $ne: k } })) };
}

describe('countWhereConditions', () => {
  it('counts each operator on a field and each bare value, not $and and $or', () => {
    expect(countWhereConditions({}, 100)).toBe(0);
    expect(countWhereConditions({ name: 'a', qty: { $gte: 1, $lt: 5 } }, 100)).toBe(3);
    expect(countWhereConditions({ $and: [{ name: 'a' }, { $or: [{ qty: 1 }, { qty: { $in: [2, 3] } }] }] }, 100)).toBe(
      3,
    );
    expect(countWhereConditions(wide(100), 100)).toBe(100);
  });

  it('stops at the first condition past the limit, reading no more of the filter', () => {
    let read = 0;
    // Each condition counts when the walk reads it; 1,000 are there.
    const conditions = Array.from({ length: 1000 }, (_, k) =>
      Object.defineProperty({}, 'qty', {
        enumerable: true,
        get: () => {
          read += 1;
          return { $ne: k };
        },
      }),
    );
    expect(countWhereConditions({ $or: conditions }, 100)).toBe(101);
    expect(read).toBe(101);
  });

  it('stops inside one field’s operators too', () => {
    const operators = Object.fromEntries(Array.from({ length: 500 }, (_, k) => [`$op${k}`, k]));
    expect(countWhereConditions({ qty: operators }, 100)).toBe(101);
  });

  it('leaves out what the parser refuses: a non-object, an unknown operator, nesting past 8 levels', () => {
    expect(countWhereConditions('qty', 100)).toBe(0);
    expect(countWhereConditions({ $not: { qty: 1 }, $and: 'x' }, 100)).toBe(0);
    let nested: Record<string, unknown> = { qty: 1 };
    for (let i = 0; i < 9; i++) nested = { $and: [nested] };
    expect(countWhereConditions(nested, 100)).toBe(0);
  });
});

describe('parseWhere and parseListParams', () => {
  it('accept 100 conditions', () => {
    expect(parseWhere(wide(100), DATASET)).toMatchObject({ op: 'or' });
  });

  it('refuse 101 or 1,000 conditions with 1001', () => {
    expect(() => parseWhere(wide(101), DATASET)).toThrow(TOO_MANY);
    expect(() => parseListParams({ where: wide(1000) }, DATASET)).toThrow(TOO_MANY);
  });

  it('refuse an oversized where before looking at its fields, or at the other parameters', () => {
    const unknownFirst = { $or: [{ colour: 'red' }, ...wide(1000).$or] };
    expect(() => parseWhere(unknownFirst, DATASET)).toThrow(TOO_MANY);
    expect(() => parseListParams({ colour_like: 'red', where: wide(1000) }, DATASET)).toThrow(TOO_MANY);
  });

  it('still names the first problem of a filter within the limit', () => {
    expect(() => parseWhere({ $or: [{ colour: 'red' }, ...wide(50).$or] }, DATASET)).toThrow(
      new InvalidParameterError("where.$or[0].colour: unknown field 'colour' in dataset 'orders'"),
    );
  });
});

describe('"did you mean" under readFields', () => {
  const TYPES = ['string', 'integer', 'number', 'enum', 'date', 'boolean', 'text'] as const;
  const fieldName = fc.stringMatching(/^[a-z][a-z_]{2,11}$/);

  it('suggests only readable or system fields, whatever the caller sends', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fieldName, { minLength: 2, maxLength: 12 }),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        fc.nat(),
        fc.constantFrom('filter', 'where', 'sort', 'select'),
        fc.stringMatching(/^[a-z_]{0,3}$/),
        (names, visible, pick, place, noise) => {
          const fields: FieldConfig[] = names.map((name, i) => ({
            name,
            type: TYPES[i % TYPES.length] as FieldConfig['type'],
            ...(TYPES[i % TYPES.length] === 'enum' ? { options: ['a'] } : {}),
          }));
          const dataset: Dataset = { ...DATASET, fields, fieldsByName: new Map(fields.map((f) => [f.name, f])) };
          const readable = new Set(names.filter((_, i) => visible[i]));
          // A slip of some field, hidden or not: the field's name with a few letters more.
          const sent = `${names[pick % names.length]}${noise}`;
          fc.pre(!readable.has(sent) && !['id', 'gmt_create', 'gmt_modified'].includes(sent));
          const params =
            place === 'filter'
              ? { [sent]: 1 }
              : place === 'where'
                ? { where: { [sent]: 1 } }
                : place === 'sort'
                  ? { ytSortList: [{ [sent]: 'asc' }] }
                  : { select: [sent] };
          let message = '';
          try {
            parseListParams(params, dataset, { readable });
          } catch (error) {
            message = (error as Error).message;
          }
          const suggested = /; did you mean '([^']+)'\?$/.exec(message)?.[1];
          if (suggested !== undefined) {
            const field = suggested.replace(/(_like|_start|_end|_in|_is_null)$/, '');
            const allowed = [
              ...readable,
              'id',
              'gmt_create',
              'gmt_modified',
              'currentPage',
              'pageSize',
              'ytSortList',
              'where',
              'select',
            ];
            expect([suggested, allowed.includes(field) || allowed.includes(suggested)]).toEqual([suggested, true]);
          }
        },
      ),
    );
  });
});
