/**
 * The wire shapes callers meet (docs/interface.md §1, §4, §5, §8), written for the client so that the package needs
 * nothing of the service. The service's zod schemas are the authority; a type test checks these against them.
 */

/** Record id: a string (a time-ordered ULID) or a number; either form is accepted back. */
export type RecordId = string | number;

/** The system fields of every record. */
export interface SystemFields {
  id: RecordId;
  /** `YYYY-MM-DD HH:MM:SS`, set by the service. */
  gmt_create: string;
  /** `YYYY-MM-DD HH:MM:SS`, set by the service. */
  gmt_modified: string;
}

export type DataRecord = SystemFields & Record<string, unknown>;

/** One key, the field name, mapped to `asc` or `desc`. */
export type SortEntry = Record<string, 'asc' | 'desc'>;

/** `orderBy`'s entry: one key, the field name, mapped to `asc` or `desc` in any letter case. */
export type OrderByEntry = Record<string, string>;

/** get-list's paramMap: paging, sorting, `where`, `select`, and the suffix filters (`status_in`, …). */
export interface GetListParams {
  currentPage?: number;
  /** Read as `currentPage` when that is absent (the platform SDK's name). */
  page?: number;
  pageSize?: number;
  ytSortList?: SortEntry[];
  /** The same sort as `ytSortList`, as the platform SDK sends it; not both. */
  orderBy?: OrderByEntry[];
  /** A key may name a related field, `<relation>.<field>` (the dataset's `relations`). */
  where?: Record<string, unknown>;
  /** Field names; `<relation>.<field>` adds a related field, nested under the relation's name (`null`: none to show). */
  select?: string[];
  [filter: string]: unknown;
}

export interface TableColumn {
  title: string;
  dataIndex: string;
}

export interface ListResult {
  paging: { pageSize: number; totalCount: number; currentPage: number };
  tableData: DataRecord[];
  tableColumns: TableColumn[];
}

/** One measure of an aggregate (docs/interface.md §21): `type(column)`, named `alias`. */
export interface AggregateItem {
  /** SUM, AVG, COUNT, MAX or MIN, in any letter case. */
  type: string;
  /** The field measured; COUNT without it counts records. */
  column?: string;
  /** The old name of `column`. */
  field?: string;
  alias?: string;
  distinct?: boolean;
  /** Round to `precision` decimals (then required). */
  round?: boolean;
  precision?: number;
}

/** aggregate's paramMap: the measures, get-list's filters and `where`, the groups, their filter, order and page. */
export interface AggregateParams {
  aggregate: AggregateItem[];
  groupBy?: string[];
  having?: Record<string, unknown>;
  orderBy?: OrderByEntry[];
  where?: Record<string, unknown>;
  currentPage?: number;
  page?: number;
  pageSize?: number;
  [filter: string]: unknown;
}

/** One row per group: the groupBy fields, then each measure by its alias; `totalCount` counts the groups. */
export interface AggregateResult {
  paging: { pageSize: number; totalCount: number; currentPage: number };
  tableData: Record<string, unknown>[];
  tableColumns: TableColumn[];
}

export type SqlParamValue = string | number | boolean | null;

export interface SqlResult {
  execSuccess: boolean;
  execResult?: Record<string, unknown>[];
  execError?: string;
}

/** Client-key mode: the user a personal access key belongs to (`GET /client/user/loginUserInfo`). */
export interface LoginUserInfo {
  id: string;
  userName: string;
  loginName: string;
  appCode: string;
  role: string | null;
}

/**
 * Client-key mode: a backend function's contract as a caller may know it
 * (`GET /client/bff/endpoint/{appCode}/{functionName}`).
 */
export interface BffEndpoint {
  /** null when the configuration gives none. */
  description: string | null;
  /** Counts the deployments that changed the function's source: 1 for the first. */
  version: number;
  /** When the last change of source was deployed: `YYYY-MM-DD HH:MM:SS` in the configuration's time zone. */
  gmt_modified: string;
}
