/**
 * An aggregate request (aggregate-request.ts) as MySQL 8 text over the caller's table, the language registered
 * queries are written in (docs/interface.md §19): custom SQL's dialect then renders it for the engine that runs it,
 * as it renders a registered query, so an aggregate answers what MySQL 8 answers on either engine (§20). Every
 * value the caller sent is a bound `#{p<n>}` parameter, never text of the statement; names come from the checked
 * request only (field names and aliases of the field-name alphabet), each quoted.
 *
 * Two statements: the page of groups, and the number of groups (`totalCount`).
 */
import type { StoredValue } from '../records/field-values';
import type { FieldRef, Filter } from '../records/list-query';
import type { SqlParamValue } from '../sql/query-engine';
import type { AggregateRequest, Measure } from './aggregate-request';

export type ParamType = 'string' | 'number' | 'integer' | 'boolean';

export interface AggregateStatements {
  /** The page of groups: the groupBy fields, then the measures by alias. */
  page: string;
  /** One row, `group_count`: how many groups there are. */
  count: string;
  params: Record<string, SqlParamValue>;
  paramTypes: Record<string, ParamType>;
}

/** The escape character of the LIKE patterns built here: not a backslash, which MySQL's string syntax also reads. */
const LIKE_ESCAPE = '!';

const quote = (name: string) => `\`${name}\``;

export function aggregateStatements(table: string, request: AggregateRequest): AggregateStatements {
  const params: Record<string, SqlParamValue> = {};
  const paramTypes: Record<string, ParamType> = {};
  const bind = (value: StoredValue, type: ParamType): string => {
    const name = `p${Object.keys(params).length + 1}`;
    params[name] = value;
    paramTypes[name] = type;
    return `#{${name}}`;
  };
  const measures = new Map(request.measures.map((measure) => [measure.alias, measure]));
  const column = (field: FieldRef) => quote(field.name);
  // In HAVING and ORDER BY a measure is written out again rather than named by its alias: a name there could
  // also be read as a column of the table.
  const groupColumn = (field: FieldRef) => {
    const measure = measures.get(field.name);
    return measure ? measureSql(measure) : quote(field.name);
  };
  const where = filterSql(request.filter, column, bind);
  const having = filterSql(request.having, groupColumn, bind);
  const grouped = request.groupBy.map((field) => quote(field.name));
  const groupBy = grouped.length > 0 ? ` GROUP BY ${grouped.join(', ')}` : '';
  const havingClause = having === TRUE ? '' : ` HAVING ${having}`;
  const from = ` FROM ${quote(table)}${where === TRUE ? '' : ` WHERE ${where}`}`;
  const select = [
    ...grouped.map((name) => `${name} AS ${name}`),
    ...request.measures.map((measure) => `${measureSql(measure)} AS ${quote(measure.alias)}`),
  ];
  // The caller's order, then the groups' own (each group once), so that pages never repeat or skip a group.
  const order = [
    ...request.orderBy.map(
      (key) => `${groupColumn({ name: key.name, type: 'string' })} ${key.direction.toUpperCase()}`,
    ),
    ...grouped.filter((name) => !request.orderBy.some((key) => quote(key.name) === name)).map((name) => `${name} ASC`),
  ];
  const { currentPage, pageSize } = request.paging;
  const page =
    `SELECT ${select.join(', ')}${from}${groupBy}${havingClause}` +
    `${order.length > 0 ? ` ORDER BY ${order.join(', ')}` : ''}` +
    ` LIMIT ${bind(pageSize, 'integer')} OFFSET ${bind((currentPage - 1) * pageSize, 'integer')}`;
  const count = `SELECT COUNT(*) AS group_count FROM (SELECT COUNT(*) AS records${from}${groupBy}${havingClause}) AS measured`;
  return { page, count, params, paramTypes };
}

function measureSql(measure: Measure): string {
  const argument = measure.column ? `${measure.distinct ? 'DISTINCT ' : ''}${quote(measure.column.name)}` : '*';
  const value = `${measure.type}(${argument})`;
  return measure.precision === undefined ? value : `ROUND(${value}, ${measure.precision})`;
}

const TRUE = '1 = 1';

function paramType(field: FieldRef): ParamType {
  if (field.type === 'integer') return 'integer';
  if (field.type === 'number') return 'number';
  if (field.type === 'boolean') return 'boolean';
  return 'string';
}

/** A parsed filter as a MySQL condition; `TRUE` for one that matches everything. */
function filterSql(
  filter: Filter,
  column: (field: FieldRef) => string,
  bind: (value: StoredValue, type: ParamType) => string,
): string {
  switch (filter.op) {
    case 'and':
    case 'or': {
      if (filter.items.length === 0) return filter.op === 'and' ? TRUE : '1 = 0';
      const items = filter.items.map((item) => `(${filterSql(item, column, bind)})`);
      return items.join(filter.op === 'and' ? ' AND ' : ' OR ');
    }
    case 'null':
      return `${column(filter.field)} IS ${filter.isNull ? '' : 'NOT '}NULL`;
    case 'eq':
      return `${column(filter.field)} = ${bind(filter.value, paramType(filter.field))}`;
    case 'ne':
      // A null differs from every value (get-list's meaning), where SQL's <> would answer NULL.
      return `${column(filter.field)} IS NULL OR ${column(filter.field)} <> ${bind(filter.value, paramType(filter.field))}`;
    case 'in':
      return `${column(filter.field)} IN (${filter.values.map((value) => bind(value, paramType(filter.field))).join(', ')})`;
    case 'range': {
      const parts: string[] = [];
      if (filter.lower) {
        parts.push(
          `${column(filter.field)} ${filter.lower.inclusive ? '>=' : '>'} ${bind(filter.lower.value, paramType(filter.field))}`,
        );
      }
      if (filter.upper) {
        parts.push(
          `${column(filter.field)} ${filter.upper.inclusive ? '<=' : '<'} ${bind(filter.upper.value, paramType(filter.field))}`,
        );
      }
      return parts.length === 0 ? TRUE : parts.join(' AND ');
    }
    case 'text': {
      const escaped = filter.value.replace(/[!%_]/g, (c) => `${LIKE_ESCAPE}${c}`);
      const pattern =
        filter.match === 'contains' ? `%${escaped}%` : filter.match === 'prefix' ? `${escaped}%` : `%${escaped}`;
      return `${column(filter.field)} LIKE ${bind(pattern, 'string')} ESCAPE '${LIKE_ESCAPE}'`;
    }
  }
}
