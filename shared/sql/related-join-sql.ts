/**
 * A get-list naming related fields as MySQL text over the mirror (docs/interface.md §20, §21): the listed dataset's
 * table joined to each related dataset it names, each as the SELECT of what the caller may read of it
 * (mirror-scope.ts: its visible columns, the rows of its grant's row filter), then the caller's conditions, its sort
 * completed by the id tie-break, and the page, with the exact total beside each row.
 *
 * It means exactly what the in-memory join means (query/related-list.ts): a link joins a related record when it
 * holds that record's id byte for byte; a condition on a related field holds only where there is a related record
 * the caller may read; a sort by one puts records without one where nulls go (first ascending, last descending,
 * as MySQL puts nulls); text compares and sorts by code point (as UTF-8 bytes). The joined columns are named as the
 * caller names them (`customer.name`), so the conditions are the row filters' own compilation (`filterSql`), and a
 * name the caller may not read is no column at all. Values are literals of that compilation (hexadecimal text,
 * numbers), never text of the caller's.
 */
import type { Caller } from '../access/caller';
import { readableTable } from '../access/permissions';
import type { Dataset } from '../catalog/catalog';
import type { RelatedSelection } from '../query/related-beyond-budget';
import { relatedName } from '../records/filter-parser';
import { effectiveSort, type Filter, filterFields, type SortKey } from '../records/list-query';
import { filterSql, mirrorSource } from './mirror-scope';
import { quoteName } from './mysql-names';

export interface RelatedJoinStatements {
  /** The page: `id`, and `das$total`, how many rows match in all. */
  page: string;
  /** One row, `das$total`: for a page past the last row, which carries no total. */
  count: string;
  /** The datasets the statements read: the mirror of each must be caught up. */
  datasets: string[];
}

/** The field types MySQL orders as the service does without a cast (numbers, booleans as 0/1, dates). */
const ORDERED_AS_IS = new Set(['integer', 'number', 'boolean', 'date', 'datetime']);
/** Link field types that can hold an id. */
const LINK_TYPES = new Set(['string', 'text', 'enum']);
const TOTAL = quoteName('das$total');

export function relatedJoinStatements(
  database: string,
  caller: Caller,
  selection: RelatedSelection,
): RelatedJoinStatements {
  const { dataset } = selection;
  const named = [...filterFields(selection.filter), ...selection.sort.map((key) => key.field.name)];
  const relations = [...new Set(named.flatMap((name) => relatedName(name)?.[0] ?? []))];
  const listed = viewOf(caller, dataset);
  const links: string[] = [];
  const columns = ['id', ...listed.fields.map((field) => field.name), 'gmt_create', 'gmt_modified'].map(
    (name) => `t.${quoteName(name)}`,
  );
  const joins: string[] = [];
  relations.forEach((name, i) => {
    const scope = selection.scopes.get(name);
    if (!scope) throw new Error(`relation '${name}' of '${dataset.datasetCode}' not readable after parsing`);
    const alias = quoteName(`r${i}`);
    const link = quoteName(`das$link${i}`);
    const linkField = dataset.fieldsByName.get(scope.relation.field);
    // The link as the id column compares (utf8mb4, byte for byte), so the join reads the related table's key.
    links.push(
      linkField && LINK_TYPES.has(linkField.type)
        ? `CONVERT(${quoteName(linkField.name)} USING utf8mb4) COLLATE utf8mb4_bin AS ${link}`
        : `NULL AS ${link}`,
    );
    const view = viewOf(caller, scope.dataset);
    joins.push(
      ` LEFT JOIN (${mirrorSource(database, view, scope.dataset)}) AS ${alias} ON ${alias}.\`id\` = t.${link}`,
    );
    for (const column of ['id', ...view.fields.map((field) => field.name), 'gmt_create', 'gmt_modified']) {
      columns.push(`${alias}.${quoteName(column)} AS ${quoteName(`${name}.${column}`)}`);
    }
  });
  const source =
    `(SELECT ${columns.join(', ')} FROM (${mirrorSource(database, listed, dataset, links)}) AS t${joins.join('')})` +
    ' AS j';
  const where = filterSql(withPresence(selection.filter));
  const order = effectiveSort(selection.sort).map(orderKey).join(', ');
  const offset = Math.min(selection.offset, Number.MAX_SAFE_INTEGER);
  return {
    page:
      `SELECT j.\`id\` AS \`id\`, COUNT(*) OVER () AS ${TOTAL} FROM ${source} WHERE ${where}` +
      ` ORDER BY ${order} LIMIT ${selection.limit} OFFSET ${offset}`,
    count: `SELECT COUNT(*) AS ${TOTAL} FROM ${source} WHERE ${where}`,
    datasets: [
      dataset.datasetCode,
      ...relations.map((name) => selection.scopes.get(name)?.dataset.datasetCode ?? ''),
    ].filter((code, i, all) => all.indexOf(code) === i),
  };
}

/** What the caller may read of a dataset; get-list's access step and the relation scopes found it readable. */
function viewOf(caller: Caller, dataset: Dataset) {
  const view = readableTable(caller, dataset);
  if (!view) throw new Error(`no readable table of '${dataset.datasetCode}' after the access step`);
  return view;
}

/** Each condition on a related field, holding only where the caller may read a related record. */
function withPresence(filter: Filter): Filter {
  if (filter.op === 'and' || filter.op === 'or') return { op: filter.op, items: filter.items.map(withPresence) };
  const related = relatedName(filter.field.name);
  if (!related) return filter;
  const present: Filter = { op: 'null', field: { name: `${related[0]}.id`, type: 'id' }, isNull: false };
  return { op: 'and', items: [present, filter] };
}

function orderKey(key: SortKey): string {
  const column = `j.${quoteName(key.field.name)}`;
  const value = ORDERED_AS_IS.has(key.field.type) ? column : `CAST(${column} AS BINARY)`;
  return `${value} ${key.direction === 'asc' ? 'ASC' : 'DESC'}`;
}
