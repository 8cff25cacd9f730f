/**
 * A parsed filter as a DynamoDB condition or filter expression, evaluated by DynamoDB on the stored item with
 * the same meaning as `matchesFilter` in memory. Used by get-list's partition reads (FilterExpression) and by
 * writes that must only touch rows of a grant's row filter (ConditionExpression on update).
 *
 * Text operators are case-insensitive: they read the lower-cased shadow (`@lc:field`) when the item has one,
 * and the field itself otherwise (the shadow is only written when the value is not lower-case already).
 *
 * DynamoDB has no `ends_with`. A `$endWith` is compiled to the weaker `contains`, and the result says
 * `exact: false`: the expression then selects a superset, and the caller must also apply `matchesFilter`.
 * A FilterExpression may not name a key attribute, and the record id is the sort key: in a filter, a condition
 * on `id` is left out the same way (a superset, `exact: false`). A ConditionExpression may name keys, so a
 * condition (`target: 'condition'`) keeps it.
 * Two comparisons are written so that every store evaluates them as DynamoDB does, whatever its own quirks (the
 * embedded store of local runs, dynalite, has both):
 * - DynamoDB compares strings by UTF-8 bytes, which is code point order; a store comparing UTF-16 code units
 *   orders characters above U+FFFF before U+E000–U+FFFF instead. The two orders agree on every value unless the
 *   bound holds a code unit from U+D800 up, so a string range with such a bound is left out of a filter (a
 *   superset, `exact: false`; the matcher decides, by code point). A condition keeps it: there DynamoDB's
 *   answer is the one that counts, and no expression says the same thing in both orders.
 * - `IN` with the empty string among its values is written `IN (...) OR = ""`: equality with the empty string is
 *   the comparison every store gets right.
 * Every other filter compiles exactly. The filter language has no negation of a subtree, so a superset of a
 * part stays a superset of the whole.
 *
 * Parentheses are written only where precedence needs them (an OR inside an AND): DynamoDB refuses an
 * expression with redundant parentheses such as `((#a = :v))`, which a one-element `$or` used to produce.
 * The compiled expression also reports its size and its count of operators and functions, so that a filter
 * DynamoDB could not evaluate (docs/interface.md §7) is refused before anything is read (`assertEvaluable`).
 */
import { InvalidParameterError } from '../contract/errors';
import type { Condition, Filter } from '../records/list-query';
import { lowerCaseAttribute } from './index-attributes';
import { RecordAttr } from './table-definitions';

export interface CompiledExpression {
  /** Undefined when the filter matches everything (no expression to send). */
  expression: string | undefined;
  /** `ExpressionAttributeNames` entries the expression uses. */
  names: Record<string, string>;
  /** `ExpressionAttributeValues` entries the expression uses (document client form). */
  values: Record<string, unknown>;
  /** False when the expression matches a superset (see the module comment): check with `matchesFilter` too. */
  exact: boolean;
  /** Comparators, logical operators and functions in the expression, as DynamoDB counts them. */
  operators: number;
}

/** DynamoDB's limits on one expression: 4 KB of text and 300 operators or functions. */
export const MAX_EXPRESSION_BYTES = 4096;
export const MAX_EXPRESSION_OPERATORS = 300;

/**
 * Refuse (1001) a filter whose expression DynamoDB could not evaluate. The message describes the caller's
 * request as a whole, so it reveals nothing about a row filter that is part of it.
 */
export function assertEvaluable(filter: Filter): void {
  if (!isEvaluable(filter)) {
    throw new InvalidParameterError(
      'the filters are too complex for the store to evaluate in one read; use fewer conditions or fewer values in $in and _in',
    );
  }
}

/** Whether DynamoDB could evaluate the filter's expression in one read (its size and its operators). */
export function isEvaluable(filter: Filter): boolean {
  const compiled = compileFilterExpression(filter);
  const bytes = compiled.expression === undefined ? 0 : Buffer.byteLength(compiled.expression);
  return bytes <= MAX_EXPRESSION_BYTES && compiled.operators <= MAX_EXPRESSION_OPERATORS;
}

/** The placeholders of `entries` that `expression` uses (`#f1` is not used by `#f10`). */
function used<T>(entries: Record<string, T>, expression: string | undefined): Record<string, T> {
  if (expression === undefined) return {};
  const present = new Set(expression.match(/[#:][A-Za-z]+\d+/g));
  return Object.fromEntries(Object.entries(entries).filter(([placeholder]) => present.has(placeholder)));
}

type Kind = 'atom' | 'and' | 'or';
interface Part {
  text: string;
  kind: Kind;
}

/**
 * Compile a filter. Placeholders are `#<prefix><n>` and `:<prefix><n>`; choose a prefix that the rest of
 * the request's expressions do not use (default `f`).
 */
export function compileFilterExpression(
  filter: Filter,
  prefix = 'f',
  target: 'filter' | 'condition' = 'filter',
): CompiledExpression {
  const compiler = new ExpressionCompiler(prefix, target);
  const expression = compiler.node(filter)?.text;
  return {
    expression,
    // A branch left out (a superset) may have named attributes and values: DynamoDB refuses unused ones.
    names: used(compiler.names, expression),
    values: used(compiler.values, expression),
    exact: compiler.exact,
    operators: compiler.operators,
  };
}

class ExpressionCompiler {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  exact = true;
  operators = 0;
  private nextName = 0;
  private nextValue = 0;
  private readonly nameOf = new Map<string, string>();

  constructor(
    private readonly prefix: string,
    private readonly target: 'filter' | 'condition',
  ) {}

  private name(attribute: string): string {
    let placeholder = this.nameOf.get(attribute);
    if (!placeholder) {
      placeholder = `#${this.prefix}${this.nextName++}`;
      this.nameOf.set(attribute, placeholder);
      this.names[placeholder] = attribute;
    }
    return placeholder;
  }

  private value(value: unknown): string {
    const placeholder = `:${this.prefix}${this.nextValue++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  node(filter: Filter): Part | undefined {
    if (filter.op === 'and' || filter.op === 'or') {
      const parts = filter.items.map((item) => this.node(item));
      if (filter.op === 'and') {
        const present = parts.filter((part): part is Part => part !== undefined);
        return this.join(present, 'and');
      }
      // An OR with a branch that matches everything matches everything.
      // An empty OR matches nothing; every item has a sort key.
      if (parts.length === 0) return this.fn(`attribute_not_exists(${this.name(RecordAttr.sortKey)})`);
      if (parts.some((part) => part === undefined)) return undefined;
      return this.join(parts as Part[], 'or');
    }
    return this.condition(filter);
  }

  /** Parts joined by AND or OR, parenthesised only where the other operator would bind differently. */
  private join(parts: Part[], kind: 'and' | 'or'): Part | undefined {
    if (parts.length === 0) return undefined;
    if (parts.length === 1) return parts[0];
    this.operators += parts.length - 1;
    const text = parts
      .map((part) => (part.kind === 'atom' || part.kind === kind ? part.text : `(${part.text})`))
      .join(kind === 'and' ? ' AND ' : ' OR ');
    return { text, kind };
  }

  private fn(text: string, count = 1): Part {
    this.operators += count;
    return { text, kind: 'atom' };
  }

  private condition(condition: Condition): Part | undefined {
    if (condition.field.name === 'id' && this.target === 'filter') {
      this.exact = false;
      return undefined;
    }
    const attribute = condition.field.name === 'id' ? RecordAttr.sortKey : condition.field.name;
    const a = this.name(attribute);
    switch (condition.op) {
      case 'eq':
        return this.fn(`${a} = ${this.value(condition.value)}`);
      case 'ne':
        this.operators += 3;
        return { text: `attribute_not_exists(${a}) OR ${a} <> ${this.value(condition.value)}`, kind: 'or' };
      case 'in': {
        const empty = condition.values.includes('');
        const others = condition.values.filter((v) => v !== '');
        const parts: Part[] = [];
        if (others.length > 0) parts.push(this.fn(`${a} IN (${others.map((v) => this.value(v)).join(', ')})`));
        if (empty) parts.push(this.fn(`${a} = ${this.value('')}`));
        return this.join(parts, 'or');
      }
      case 'null':
        return this.fn(condition.isNull ? `attribute_not_exists(${a})` : `attribute_exists(${a})`);
      case 'range': {
        if (
          this.target === 'filter' &&
          [condition.lower, condition.upper].some((b) => b && ordersByCodeUnit(b.value))
        ) {
          this.exact = false;
          return undefined;
        }
        const parts: Part[] = [];
        if (condition.lower)
          parts.push(this.fn(`${a} ${condition.lower.inclusive ? '>=' : '>'} ${this.value(condition.lower.value)}`));
        if (condition.upper)
          parts.push(this.fn(`${a} ${condition.upper.inclusive ? '<=' : '<'} ${this.value(condition.upper.value)}`));
        return this.join(parts, 'and') ?? this.fn(`attribute_exists(${a})`);
      }
      case 'text': {
        const shadow = this.name(lowerCaseAttribute(condition.field.name));
        const v = this.value(condition.value);
        let fn = 'contains';
        if (condition.match === 'prefix') fn = 'begins_with';
        if (condition.match === 'suffix') this.exact = false;
        this.operators += 5;
        return {
          text: `${fn}(${shadow}, ${v}) OR (attribute_not_exists(${shadow}) AND ${fn}(${a}, ${v}))`,
          kind: 'or',
        };
      }
    }
  }
}

/**
 * Whether comparing text with `bound` could depend on how strings are ordered: UTF-16 code units and code points
 * order the same way unless the bound's deciding unit is a surrogate or U+E000–U+FFFF.
 */
function ordersByCodeUnit(bound: unknown): boolean {
  return typeof bound === 'string' && /[\ud800-\uffff]/.test(bound);
}
