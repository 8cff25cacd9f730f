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
 * Every other filter compiles exactly. The filter language has no negation of a subtree, so a superset of a
 * part stays a superset of the whole.
 */

import { lowerCaseAttribute } from './index-attributes';
import type { Condition, Filter } from './list-query';
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
}

/**
 * Compile a filter. Placeholders are `#<prefix><n>` and `:<prefix><n>`; choose a prefix that the rest of
 * the request's expressions do not use (default `f`).
 */
export function compileFilterExpression(filter: Filter, prefix = 'f'): CompiledExpression {
  const compiler = new ExpressionCompiler(prefix);
  const expression = compiler.node(filter);
  return { expression, names: compiler.names, values: compiler.values, exact: compiler.exact };
}

class ExpressionCompiler {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  exact = true;
  private nextName = 0;
  private nextValue = 0;
  private readonly nameOf = new Map<string, string>();

  constructor(private readonly prefix: string) {}

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

  node(filter: Filter): string | undefined {
    if (filter.op === 'and' || filter.op === 'or') {
      const parts = filter.items.map((item) => this.node(item));
      if (filter.op === 'and') {
        const present = parts.filter((part): part is string => part !== undefined);
        return present.length === 0 ? undefined : present.map((p) => `(${p})`).join(' AND ');
      }
      // An OR with a branch that matches everything matches everything.
      // An empty OR matches nothing; every item has a sort key.
      if (parts.length === 0) return `attribute_not_exists(${this.name(RecordAttr.sortKey)})`;
      if (parts.some((part) => part === undefined)) return undefined;
      return parts.map((p) => `(${p})`).join(' OR ');
    }
    return this.condition(filter);
  }

  private condition(condition: Condition): string {
    const attribute = condition.field.name === 'id' ? RecordAttr.sortKey : condition.field.name;
    const a = this.name(attribute);
    switch (condition.op) {
      case 'eq':
        return `${a} = ${this.value(condition.value)}`;
      case 'ne':
        return `attribute_not_exists(${a}) OR ${a} <> ${this.value(condition.value)}`;
      case 'in':
        return `${a} IN (${condition.values.map((v) => this.value(v)).join(', ')})`;
      case 'null':
        return condition.isNull ? `attribute_not_exists(${a})` : `attribute_exists(${a})`;
      case 'range': {
        const parts: string[] = [];
        if (condition.lower)
          parts.push(`${a} ${condition.lower.inclusive ? '>=' : '>'} ${this.value(condition.lower.value)}`);
        if (condition.upper)
          parts.push(`${a} ${condition.upper.inclusive ? '<=' : '<'} ${this.value(condition.upper.value)}`);
        return parts.length ? parts.join(' AND ') : `attribute_exists(${a})`;
      }
      case 'text': {
        const shadow = this.name(lowerCaseAttribute(condition.field.name));
        const v = this.value(condition.value);
        let fn = 'contains';
        if (condition.match === 'prefix') fn = 'begins_with';
        if (condition.match === 'suffix') this.exact = false;
        return `${fn}(${shadow}, ${v}) OR (attribute_not_exists(${shadow}) AND ${fn}(${a}, ${v}))`;
      }
    }
  }
}
