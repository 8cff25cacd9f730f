/**
 * What the Data API twin does with a statement: named parameters (`:name` with typed fields) bound as `?` for
 * mysql2, and rows answered as the Data API answers them (`formattedRecords` JSON text, or typed records with
 * column metadata).
 */
import type { FieldPacket } from 'mysql2';
// Strings, quoted names and comments are skipped as MySQL reads them, by the same scanner the session uses.
import { skipQuotedOrComment } from '../../../shared/mirror/data-api-session';

export interface WireField {
  isNull?: boolean;
  booleanValue?: boolean;
  longValue?: number;
  doubleValue?: number;
  stringValue?: string;
  blobValue?: string;
  arrayValue?: unknown;
}

export interface WireParameter {
  name?: string;
  value?: WireField;
  typeHint?: string;
}

export class TwinRequestError extends Error {}

/** `sql` with each `:name` outside strings, quoted names and comments replaced by `?`, and the values in order. */
export function positional(sql: string, parameters: readonly WireParameter[] = []): { sql: string; values: unknown[] } {
  const byName = new Map(parameters.map((parameter) => [parameter.name ?? '', parameter.value ?? { isNull: true }]));
  const values: unknown[] = [];
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const end = skipQuotedOrComment(sql, i);
    if (end > i) {
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    const name =
      sql[i] === ':' && sql[i - 1] !== ':' ? /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))?.[0] : undefined;
    if (name) {
      const field = byName.get(name);
      if (!field) throw new TwinRequestError(`No value specified for parameter: ${name}`);
      values.push(boundValue(field));
      out += '?';
      i += name.length + 1;
      continue;
    }
    out += sql[i];
    i += 1;
  }
  return { sql: out, values };
}

function boundValue(field: WireField): unknown {
  if (field.isNull) return null;
  if (field.booleanValue !== undefined) return field.booleanValue;
  if (field.longValue !== undefined) return field.longValue;
  if (field.doubleValue !== undefined) return field.doubleValue;
  if (field.stringValue !== undefined) return field.stringValue;
  if (field.blobValue !== undefined) return Buffer.from(field.blobValue, 'base64');
  throw new TwinRequestError('Array parameters are not supported.');
}

/** MySQL's NEWDECIMAL column type: text unless the caller asked for numbers. */
const NEWDECIMAL = 246;

/** The rows of a SELECT as the Data API's response members. */
export function resultMembers(
  rows: Record<string, unknown>[],
  fields: readonly FieldPacket[],
  request: {
    formatRecordsAs?: string;
    includeResultMetadata?: boolean;
    resultSetOptions?: { decimalReturnType?: string };
  },
): Record<string, unknown> {
  const decimalsAsNumbers = request.resultSetOptions?.decimalReturnType === 'DOUBLE_OR_LONG';
  const cell = (value: unknown, field: FieldPacket | undefined): unknown => {
    if (value === null || value === undefined) return null;
    if (field?.columnType === NEWDECIMAL) return decimalsAsNumbers ? Number(value) : String(value);
    if (Buffer.isBuffer(value)) return value.toString('utf8');
    return value;
  };
  if (request.formatRecordsAs === 'JSON') {
    const records = rows.map((row) =>
      Object.fromEntries(fields.map((field) => [field.name, cell(row[field.name], field)])),
    );
    return { formattedRecords: JSON.stringify(records) };
  }
  return {
    records: rows.map((row) =>
      fields.map((field) => {
        const value = cell(row[field.name], field);
        if (value === null) return { isNull: true };
        if (typeof value === 'number') return Number.isInteger(value) ? { longValue: value } : { doubleValue: value };
        if (typeof value === 'boolean') return { booleanValue: value };
        return { stringValue: String(value) };
      }),
    ),
    ...(request.includeResultMetadata
      ? { columnMetadata: fields.map((field) => ({ name: field.name, label: field.name, type: field.columnType })) }
      : {}),
  };
}
