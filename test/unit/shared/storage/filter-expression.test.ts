/**
 * The DynamoDB expression compiler: parentheses only where precedence needs them (DynamoDB refuses redundant
 * ones), comparisons written so that every store evaluates them as DynamoDB does, and the size and operator count
 * that decide whether the store could evaluate a filter (docs/interface.md §7).
 */
import fc from 'fast-check';
import type { Condition, FieldRef, Filter } from '../../../../shared/records/list-query';
import { assertEvaluable, compileFilterExpression } from '../../../../shared/storage/filter-expression';

const A: FieldRef = { name: 'a', type: 'integer' };
const B: FieldRef = { name: 'b', type: 'string' };
const eq = (field: FieldRef, value: number | string): Condition => ({ op: 'eq', field, value });

describe('parentheses', () => {
  it('writes a one-element OR as its only condition', () => {
    const compiled = compileFilterExpression({ op: 'and', items: [{ op: 'or', items: [eq(A, 1)] }, eq(B, 'x')] });
    expect(compiled.expression).toBe('#f0 = :f0 AND #f1 = :f1');
  });

  it('writes a one-element AND nested in one-element ORs as the bare condition', () => {
    const filter: Filter = { op: 'or', items: [{ op: 'and', items: [{ op: 'or', items: [eq(A, 1)] }] }] };
    expect(compileFilterExpression(filter).expression).toBe('#f0 = :f0');
  });

  it('parenthesises an OR inside an AND, and an AND inside an OR', () => {
    const filter: Filter = {
      op: 'and',
      items: [{ op: 'or', items: [eq(A, 1), { op: 'and', items: [eq(A, 2), eq(B, 'y')] }] }, eq(B, 'x')],
    };
    expect(compileFilterExpression(filter).expression).toBe('(#f0 = :f0 OR (#f0 = :f1 AND #f1 = :f2)) AND #f1 = :f3');
  });

  it('keeps the text and not-equal conditions, which are ORs themselves, grouped inside an AND', () => {
    const filter: Filter = {
      op: 'and',
      items: [
        { op: 'ne', field: A, value: 3 },
        { op: 'text', field: B, match: 'contains', value: 'q' },
      ],
    };
    expect(compileFilterExpression(filter).expression).toBe(
      '(attribute_not_exists(#f0) OR #f0 <> :f0) AND (contains(#f2, :f1) OR (attribute_not_exists(#f2) AND contains(#f1, :f1)))',
    );
  });

  /** True when some parenthesised group is nothing but another group: `((x))`, or the whole text in `(...)`. */
  function hasRedundantParentheses(text: string): boolean {
    const match = new Map<number, number>();
    const open: number[] = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] === '(') open.push(i);
      if (text[i] === ')') match.set(open.pop() as number, i);
    }
    const grouping = (i: number) => i === 0 || /[\s(]/.test(text[i - 1] as string);
    for (const [start, end] of match) {
      if (!grouping(start)) continue; // a function call or an IN list
      if (start === 0 && end === text.length - 1) return true;
      if (text[start + 1] === '(' && match.get(start + 1) === end - 1) return true;
    }
    return false;
  }

  const condition: fc.Arbitrary<Filter> = fc.oneof(
    fc.integer().map((n) => eq(A, n)),
    fc.constant<Filter>({ op: 'ne', field: B, value: 'v' }),
    fc.constant<Filter>({
      op: 'range',
      field: A,
      lower: { value: 1, inclusive: true },
      upper: { value: 9, inclusive: false },
    }),
    fc.constant<Filter>({ op: 'text', field: B, match: 'prefix', value: 'p' }),
    fc.constant<Filter>({ op: 'null', field: A, isNull: true }),
    fc.constant<Filter>({ op: 'in', field: A, values: [1, 2] }),
  );
  const tree = fc.letrec<{ node: Filter }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      condition,
      fc.record({
        op: fc.constantFrom('and' as const, 'or' as const),
        items: fc.array(tie('node'), { minLength: 1, maxLength: 4 }),
      }),
    ),
  })).node;

  it('never writes redundant parentheses, whatever the nesting', () => {
    fc.assert(
      fc.property(tree, (filter) => {
        const text = compileFilterExpression(filter).expression;
        if (text !== undefined) expect(hasRedundantParentheses(text)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the record id, which is the sort key', () => {
  const ID: FieldRef = { name: 'id', type: 'id' };
  const filter: Filter = {
    op: 'and',
    items: [
      { op: 'null', field: ID, isNull: false },
      { op: 'or', items: [{ op: 'ne', field: ID, value: 'x' }, eq(A, 1)] },
      eq(B, 'y'),
    ],
  };

  it('is left out of a FilterExpression, which may not name a key, and the result says it is a superset', () => {
    // The OR holding the id is left out whole, and so are the name and value its other branch used; the
    // operator count stays conservative (the branch left out still counts).
    expect(compileFilterExpression(filter)).toEqual({
      expression: '#f1 = :f1',
      names: { '#f1': 'b' },
      values: { ':f1': 'y' },
      exact: false,
      operators: 2,
    });
  });

  it('stays in a ConditionExpression, which may', () => {
    expect(compileFilterExpression(filter, 'rf', 'condition')).toMatchObject({
      expression:
        'attribute_exists(#rf0) AND (attribute_not_exists(#rf0) OR #rf0 <> :rf0 OR #rf1 = :rf1) AND #rf2 = :rf2',
      exact: true,
    });
  });
});

describe('comparisons every store makes as DynamoDB does', () => {
  const range = (lower: string | undefined, upper: string | undefined): Condition => ({
    op: 'range',
    field: B,
    ...(lower === undefined ? {} : { lower: { value: lower, inclusive: true } }),
    ...(upper === undefined ? {} : { upper: { value: upper, inclusive: false } }),
  });

  it('keeps a string range whose bounds order alike by code point and by UTF-16 code unit', () => {
    expect(compileFilterExpression({ op: 'and', items: [range('a', 'é\ud7ff'), eq(A, 1)] })).toMatchObject({
      expression: '#f0 >= :f0 AND #f0 < :f1 AND #f1 = :f2',
      values: { ':f0': 'a', ':f1': 'é\ud7ff', ':f2': 1 },
      exact: true,
    });
  });

  it('leaves out of a filter a string range with a bound from U+D800 up, and keeps it in a condition', () => {
    for (const bound of ['🙂', '\ue000', 'x\uffff']) {
      expect(compileFilterExpression({ op: 'and', items: [range(bound, undefined), eq(A, 1)] })).toMatchObject({
        expression: '#f1 = :f0',
        exact: false,
      });
      expect(compileFilterExpression({ op: 'and', items: [range('a', bound), eq(A, 1)] })).toMatchObject({
        expression: '#f1 = :f0',
        exact: false,
      });
      expect(compileFilterExpression(range(bound, undefined), 'rf', 'condition')).toMatchObject({
        expression: '#rf0 >= :rf0',
        values: { ':rf0': bound },
        exact: true,
      });
    }
  });

  it('writes the empty string of an IN list as an equality', () => {
    const within = (values: string[]): Filter => ({ op: 'and', items: [{ op: 'in', field: B, values }, eq(A, 1)] });
    expect(compileFilterExpression(within(['', 'x', 'y']))).toMatchObject({
      expression: '(#f0 IN (:f0, :f1) OR #f0 = :f2) AND #f1 = :f3',
      values: { ':f0': 'x', ':f1': 'y', ':f2': '', ':f3': 1 },
      exact: true,
    });
    expect(compileFilterExpression(within(['']))).toMatchObject({
      expression: '#f0 = :f0 AND #f1 = :f1',
      values: { ':f0': '', ':f1': 1 },
    });
    expect(compileFilterExpression(within(['x']))).toMatchObject({ expression: '#f0 IN (:f0) AND #f1 = :f1' });
  });
});

describe('what the store could evaluate', () => {
  it('counts comparators, logical operators and functions', () => {
    const filter: Filter = {
      op: 'and',
      items: [
        eq(A, 1),
        { op: 'range', field: A, lower: { value: 1, inclusive: true }, upper: { value: 2, inclusive: true } },
      ],
    };
    // =, >=, <=, and the two ANDs.
    expect(compileFilterExpression(filter).operators).toBe(5);
  });

  it('accepts 100 conditions and refuses 301 operators with 1001', () => {
    const conditions = (n: number): Filter => ({ op: 'and', items: Array.from({ length: n }, (_, i) => eq(A, i)) });
    expect(() => assertEvaluable(conditions(100))).not.toThrow();
    // 151 equalities and 150 ANDs.
    expect(() => assertEvaluable(conditions(151))).toThrow(
      expect.objectContaining({
        code: 1001,
        message:
          'the filters are too complex for the store to evaluate in one read; use fewer conditions or fewer values in $in and _in',
      }),
    );
  });

  it('refuses an expression longer than 4 KB with 1001', () => {
    // 40 lists of 100 values: about 40 operators, but some 30 KB of placeholders.
    const filter: Filter = {
      op: 'and',
      items: Array.from({ length: 40 }, () => ({
        op: 'in',
        field: A,
        values: Array.from({ length: 100 }, (_, i) => i),
      })),
    };
    expect(compileFilterExpression(filter).operators).toBeLessThan(300);
    expect(() => assertEvaluable(filter)).toThrow(expect.objectContaining({ code: 1001 }));
  });
});
