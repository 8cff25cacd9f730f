/**
 * The RDS Data API's way to the mirror (Aurora MySQL in a deployment, docs/interface.md §20): a `SqlSession` whose
 * statements are ExecuteStatement calls. The Data API takes named parameters, not `?`: each `?` outside quotes and
 * comments becomes `:p1`, `:p2`, … with a typed value, and rows come back as JSON objects (`formatRecordsAs`), with
 * DECIMAL as numbers, as the MySQL protocol's session reads them.
 */
import {
  ExecuteStatementCommand,
  type ExecuteStatementCommandInput,
  type Field,
  type RDSDataClient,
  type SqlParameter,
} from '@aws-sdk/client-rds-data';
import type { SqlSession } from './mirror-tables';

export interface DataApiTarget {
  client: RDSDataClient;
  /** The Aurora cluster's ARN. */
  resourceArn: string;
  /** The secret holding the database user's name and password. */
  secretArn: string;
  database: string;
}

export function dataApiSession(target: {
  client: RDSDataClient;
  resourceArn: string;
  secretArn: string;
  database: string;
}): SqlSession {
  return {
    async execute(sql, values) {
      const output = await target.client.send(new ExecuteStatementCommand(statementInput(target, sql, values)));
      return recordsOf(output.formattedRecords);
    },
  };
}

/** The ExecuteStatement input of one statement (`transactionId`: within that transaction). */
export function statementInput(
  target: DataApiTarget,
  sql: string,
  values: readonly unknown[] = [],
  transactionId?: string,
): ExecuteStatementCommandInput {
  const named = namedParameters(sql, values);
  return {
    resourceArn: target.resourceArn,
    secretArn: target.secretArn,
    database: target.database,
    sql: named.sql,
    ...(named.parameters.length > 0 ? { parameters: named.parameters } : {}),
    ...(transactionId ? { transactionId } : {}),
    formatRecordsAs: 'JSON',
    resultSetOptions: { decimalReturnType: 'DOUBLE_OR_LONG' },
  };
}

/** The rows of a `formattedRecords` text (none for a statement that returns no rows). */
export function recordsOf(formatted: string | undefined): Record<string, unknown>[] {
  if (!formatted) return [];
  const rows = JSON.parse(formatted) as unknown;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/**
 * `sql` with its `?` placeholders named `:p1…` in order, and the values as the Data API's typed fields. A `?` in a
 * string, a quoted name or a comment is text, not a placeholder. Throws when the counts differ, as mysql2 would
 * bind wrongly rather than say so.
 */
export function namedParameters(sql: string, values: readonly unknown[]): { sql: string; parameters: SqlParameter[] } {
  let out = '';
  let count = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const end = skipQuotedOrComment(sql, i);
    if (end > i) {
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (c === '?') {
      count += 1;
      out += `:p${count}`;
    } else out += c;
    i += 1;
  }
  if (count !== values.length) {
    throw new Error(`the statement has ${count} placeholders but ${values.length} values were given`);
  }
  return { sql: out, parameters: values.map((value, index) => ({ name: `p${index + 1}`, value: fieldOf(value) })) };
}

/** Where the string, quoted name or comment starting at `i` ends (`i` itself when none starts there). */
export function skipQuotedOrComment(sql: string, i: number): number {
  const c = sql[i];
  if (c === "'" || c === '"' || c === '`') {
    let j = i + 1;
    while (j < sql.length) {
      if (sql[j] === '\\' && c !== '`') j += 2;
      else if (sql[j] === c) {
        if (sql[j + 1] === c) j += 2;
        else return j + 1;
      } else j += 1;
    }
    return sql.length;
  }
  if (c === '#' || (c === '-' && sql[i + 1] === '-' && /\s/.test(sql[i + 2] ?? ' '))) {
    const newline = sql.indexOf('\n', i);
    return newline === -1 ? sql.length : newline;
  }
  if (c === '/' && sql[i + 1] === '*') {
    const close = sql.indexOf('*/', i + 2);
    return close === -1 ? sql.length : close + 2;
  }
  return i;
}

/** A value as the Data API's typed field: integers as longs, other numbers as doubles, objects as JSON text. */
export function fieldOf(value: unknown): Field {
  if (value === null || value === undefined) return { isNull: true };
  if (typeof value === 'boolean') return { booleanValue: value };
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) ? { longValue: value } : { doubleValue: value };
  }
  if (typeof value === 'bigint') {
    return Number.isSafeInteger(Number(value)) ? { longValue: Number(value) } : { stringValue: String(value) };
  }
  if (typeof value === 'string') return { stringValue: value };
  if (value instanceof Uint8Array) return { blobValue: value };
  if (value instanceof Date) return { stringValue: value.toISOString().replace('T', ' ').replace('Z', '') };
  return { stringValue: JSON.stringify(value) };
}
