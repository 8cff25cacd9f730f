/**
 * Type validation of record values (docs/interface.md §4): every field type's rules, one place. A value that passes is
 * returned in its stored form; one that does not is a 1001 naming the field.
 */
import type { FieldConfig, FieldType } from '../catalog/schema';
import { MAX_JSON_DEPTH } from '../contract/body-schemas';
import { InvalidParameterError } from '../contract/errors';

/** A value as stored in a record item (json values are stored as their JSON text). */
export type StoredValue = string | number | boolean;

const INTEGER_TEXT = /^\s*[-+]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_TEXT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * DynamoDB numbers: magnitude from 1e-130 up to, but not including, 1e126 (or zero). The bound is exclusive
 * because the literal 9.999999999999999e125 is the same double as 1e126, which is sent as `1e+126` and refused
 * by the store; the largest accepted double prints as 9.999999999999998e+125.
 */
const MAX_MAGNITUDE_EXCLUSIVE = 1e126;
const MIN_MAGNITUDE = 1e-130;

const TYPE_WORDS: Record<FieldType, string> = {
  string: 'a string',
  text: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  date: "a date 'YYYY-MM-DD'",
  datetime: "a datetime 'YYYY-MM-DD HH:MM:SS'",
  enum: 'one of the options',
  json: 'a JSON value',
};

function typeError(field: FieldConfig, detail?: string): InvalidParameterError {
  const expected = field.type === 'enum' ? `one of: ${(field.options ?? []).join(', ')}` : TYPE_WORDS[field.type];
  return new InvalidParameterError(`field '${field.name}' expects ${expected}${detail ? ` (${detail})` : ''}`);
}

function isValidDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

function checkNumberRange(field: FieldConfig, value: number): number {
  const magnitude = Math.abs(value);
  if (magnitude >= MAX_MAGNITUDE_EXCLUSIVE || (magnitude !== 0 && magnitude < MIN_MAGNITUDE)) {
    throw typeError(field, 'magnitude must be between 1e-130 and 1e126');
  }
  return Object.is(value, -0) ? 0 : value;
}

function jsonDepth(value: unknown, depth: number): number {
  if (depth > MAX_JSON_DEPTH) return depth;
  if (Array.isArray(value)) return value.reduce<number>((max, v) => Math.max(max, jsonDepth(v, depth + 1)), depth + 1);
  if (value !== null && typeof value === 'object') {
    return Object.values(value).reduce<number>((max, v) => Math.max(max, jsonDepth(v, depth + 1)), depth + 1);
  }
  return depth;
}

function checkText(field: FieldConfig, value: unknown): string {
  if (typeof value !== 'string') throw typeError(field);
  if (!value.isWellFormed()) throw typeError(field, 'the text contains invalid Unicode');
  return value;
}

/**
 * Check a non-null value against its field's type and return the stored form. Numeric strings are accepted
 * for integer and number fields and stored as numbers.
 */
export function toStoredValue(field: FieldConfig, value: unknown): StoredValue {
  switch (field.type) {
    case 'string':
    case 'text':
      return checkText(field, value);
    case 'enum': {
      if (typeof value !== 'string' || !(field.options ?? []).includes(value)) throw typeError(field);
      return value;
    }
    case 'integer': {
      const n = typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n)) throw typeError(field);
      if (!Number.isSafeInteger(n)) throw typeError(field, 'must be between -9007199254740991 and 9007199254740991');
      return Object.is(n, -0) ? 0 : n;
    }
    case 'number': {
      const n = typeof value === 'string' && NUMBER_TEXT.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw typeError(field);
      return checkNumberRange(field, n);
    }
    case 'boolean':
      if (typeof value !== 'boolean') throw typeError(field);
      return value;
    case 'date': {
      const match = typeof value === 'string' ? DATE_TEXT.exec(value) : null;
      if (!match || !isValidDate(Number(match[1]), Number(match[2]), Number(match[3]))) throw typeError(field);
      return value as string;
    }
    case 'datetime': {
      const match = typeof value === 'string' ? DATETIME_TEXT.exec(value) : null;
      const valid =
        match &&
        isValidDate(Number(match[1]), Number(match[2]), Number(match[3])) &&
        Number(match[4]) < 24 &&
        Number(match[5]) < 60 &&
        Number(match[6]) < 60;
      if (!valid) throw typeError(field);
      return value as string;
    }
    case 'json': {
      if (value === undefined) throw typeError(field);
      if (jsonDepth(value, 0) > MAX_JSON_DEPTH) {
        throw new InvalidParameterError(`field '${field.name}' nests deeper than ${MAX_JSON_DEPTH} levels`);
      }
      const text = JSON.stringify(value);
      if (!text.isWellFormed()) throw typeError(field, 'the text contains invalid Unicode');
      return text;
    }
  }
}

/** The value a caller sees for a stored one. */
export function fromStoredValue(field: FieldConfig, stored: unknown): unknown {
  if (stored === undefined || stored === null) return null;
  if (field.type === 'json' && typeof stored === 'string') return JSON.parse(stored);
  return stored;
}
