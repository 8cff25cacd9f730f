/**
 * Order-preserving text encoding of field values for the generic indexes' sort keys, and the in-memory order
 * that agrees with it. DynamoDB orders string sort keys by their UTF-8 bytes, which is Unicode code point
 * order; everything here is built so that comparing two encoded keys that way gives the same answer as
 * `compareStoredValues` on the values, with ties broken by the id appended after the value.
 *
 * Key layout: `<tag><body><end><id>`
 *   - tag `0` for null (absent attributes are not indexed, so null needs a value of its own: the sentinel),
 *     `1` for a value; `0` < `1`, so nulls sort first ascending and last descending, as the contract asks.
 *   - body: numbers as 16 hex digits of their IEEE-754 bits, with the sign bit flipped for non-negative
 *     values and every bit flipped for negative ones (the classic order-preserving float trick: integers and
 *     decimals, negatives included, compare as their bytes); booleans as `0`/`1`; dates, datetimes, strings
 *     and enums as their text with the three lowest control characters escaped (`\u0000`→`\u0002\u0002`,
 *     `\u0001`→`\u0002\u0003`, `\u0002`→`\u0002\u0004`), so every body character is ≥ `\u0002`.
 *   - end: `\u0001` after a complete value, lower than any body character, so a value sorts before every
 *     longer value it is a prefix of. `\u0002` after a truncated value (see below).
 *   - id: the record id (ASCII), so equal values are ordered by id and every key is unique.
 *
 * A GSI sort key is at most 1024 bytes. Text longer than `MAX_INDEXED_CODE_POINTS` code points is truncated to
 * that many and marked with the `\u0002` end: the only untruncated value that has the truncated prefix P as a
 * prefix is P itself (anything longer would have been truncated too), so `P\u0001…` < `P\u0002…` keeps the
 * order between groups; inside one truncated group the index orders by id, and whoever reads such a group in
 * value order re-sorts it by the real values (`isTruncatedKey`). Conditions on long values are answered by
 * the index as a superset and checked again on the items.
 */
import type { StoredValue } from './field-values';

/** Text values keep this many code points in an index key (at most 4 bytes each, well under 1024 with the id). */
export const MAX_INDEXED_CODE_POINTS = 240;

export const NULL_TAG = '0';
export const VALUE_TAG = '1';
/** Above every tag: the exclusive upper end of the whole key space. */
export const KEY_SPACE_END = '2';
const END_COMPLETE = '\u0001';
const END_TRUNCATED = '\u0002';
/** Above every id character: closes an interval that must include every id after a given value prefix. */
export const ID_CEILING = '\uffff';

export interface EncodedValue {
  /** Tag and body, without the end marker. */
  text: string;
  truncated: boolean;
}

function escapeText(text: string): { text: string; truncated: boolean } {
  let out = '';
  let codePoints = 0;
  for (const char of text) {
    if (codePoints === MAX_INDEXED_CODE_POINTS) return { text: out, truncated: true };
    const code = char.codePointAt(0) as number;
    out += code <= 2 ? `\u0002${String.fromCharCode(code + 2)}` : char;
    codePoints += 1;
  }
  return { text: out, truncated: false };
}

const floatView = new DataView(new ArrayBuffer(8));

/** 16 hex digits whose byte order is the numeric order of `value` (a finite number, -0 as 0). */
export function encodeNumber(value: number): string {
  floatView.setFloat64(0, value === 0 ? 0 : value);
  const high = floatView.getUint32(0);
  const low = floatView.getUint32(4);
  const negative = high >>> 31 === 1;
  const h = negative ? ~high >>> 0 : (high | 0x80000000) >>> 0;
  const l = negative ? ~low >>> 0 : low;
  return h.toString(16).padStart(8, '0') + l.toString(16).padStart(8, '0');
}

/** The tag and body of a value in an index key (`null` → the null sentinel). */
export function encodeValue(value: StoredValue | null): EncodedValue {
  if (value === null) return { text: NULL_TAG, truncated: false };
  if (typeof value === 'number') return { text: VALUE_TAG + encodeNumber(value), truncated: false };
  if (typeof value === 'boolean') return { text: VALUE_TAG + (value ? '1' : '0'), truncated: false };
  const escaped = escapeText(value);
  return { text: VALUE_TAG + escaped.text, truncated: escaped.truncated };
}

/** The complete sort key of a record in a generic index. */
export function encodeIndexKey(value: StoredValue | null, id: string): string {
  const encoded = encodeValue(value);
  return encoded.text + (encoded.truncated ? END_TRUNCATED : END_COMPLETE) + id;
}

/** An inclusive interval of index sort keys. */
export interface KeyInterval {
  lower: string;
  upper: string;
}

/**
 * Keys of records whose value equals `value`. `exact` is false for a truncated (long) value: the interval then
 * holds every record sharing its indexed prefix, and the condition must be checked again on the items.
 */
export function equalityInterval(value: StoredValue | null): { interval: KeyInterval; exact: boolean } {
  const encoded = encodeValue(value);
  const prefix = encoded.text + (encoded.truncated ? END_TRUNCATED : END_COMPLETE);
  return { interval: { lower: prefix, upper: prefix + ID_CEILING }, exact: !encoded.truncated };
}

export interface Bound {
  value: StoredValue;
  inclusive: boolean;
}

/** Keys of records whose (non-null) value lies between the bounds; inexact when a bound is truncated. */
export function rangeInterval(lower?: Bound, upper?: Bound): { interval: KeyInterval; exact: boolean } {
  let exact = true;
  let low = VALUE_TAG;
  if (lower) {
    const encoded = encodeValue(lower.value);
    if (encoded.truncated) {
      exact = false;
      low = encoded.text;
    } else {
      low = lower.inclusive ? encoded.text : encoded.text + END_COMPLETE + ID_CEILING;
    }
  }
  let high = KEY_SPACE_END;
  if (upper) {
    const encoded = encodeValue(upper.value);
    if (encoded.truncated) {
      exact = false;
      high = encoded.text + END_TRUNCATED + ID_CEILING;
    } else {
      // Exclusive: everything below the value's own keys; `text` alone is below them and above smaller values.
      high = upper.inclusive ? encoded.text + END_COMPLETE + ID_CEILING : encoded.text;
    }
  }
  return { interval: { lower: low, upper: high }, exact };
}

/** Whether an interval holds the keys of one value exactly (an equality's, or the null sentinel's). */
export function isOneValueInterval(interval: KeyInterval): boolean {
  return interval.lower.endsWith(END_COMPLETE) && interval.upper === interval.lower + ID_CEILING;
}

/** The null sentinel's keys. */
export function nullInterval(): KeyInterval {
  return { lower: NULL_TAG, upper: NULL_TAG + END_COMPLETE + ID_CEILING };
}

/** Every key of a record that has a value. */
export function nonNullInterval(): KeyInterval {
  return { lower: VALUE_TAG, upper: KEY_SPACE_END };
}

/** The whole index. */
export function fullInterval(): KeyInterval {
  return { lower: NULL_TAG, upper: KEY_SPACE_END };
}

/** The intersection of two intervals, or undefined when they do not meet. */
export function intersectIntervals(a: KeyInterval, b: KeyInterval): KeyInterval | undefined {
  const lower = compareCodePoints(a.lower, b.lower) >= 0 ? a.lower : b.lower;
  const upper = compareCodePoints(a.upper, b.upper) <= 0 ? a.upper : b.upper;
  return compareCodePoints(lower, upper) <= 0 ? { lower, upper } : undefined;
}

/** Whether a key read from an index belongs to a truncated value (its group is ordered by id, not by value). */
export function isTruncatedKey(key: string, id: string): boolean {
  return key.charAt(key.length - id.length - 1) === END_TRUNCATED;
}

/** The value part of a key (tag, body and end), which is what groups equal values. */
export function keyValuePart(key: string, id: string): string {
  return key.slice(0, key.length - id.length);
}

/**
 * Compare two strings by Unicode code point, which is UTF-8 byte order and so DynamoDB's order. JavaScript's
 * `<` compares UTF-16 code units, which differs for characters above U+FFFF versus U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

function codeUnitRank(unit: number): number {
  // Surrogates (D800–DFFF) stand for code points above FFFF: move them above E000–FFFF.
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/**
 * The order of stored values of one type, nulls first (the order an ascending sort uses): numbers by value,
 * booleans false before true, text (strings, enums, dates, datetimes, json text, ids) by code point.
 */
export function compareStoredValues(a: StoredValue | null | undefined, b: StoredValue | null | undefined): number {
  const aNull = a === null || a === undefined;
  const bNull = b === null || b === undefined;
  if (aNull || bNull) return aNull === bNull ? 0 : aNull ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  return compareCodePoints(String(a), String(b));
}

/**
 * Per-value totals (storage/value-counter.ts) count records by a *count key*: the value part of the index key
 * without its end marker, its text cut to `MAX_COUNTED_CODE_POINTS` code points. A cut value is marked with
 * `\u0002` after the kept prefix and stands for every value sharing that prefix (a group, like the index's
 * truncated keys but shorter, so that a change item stays small whatever the values). Count keys sort in the
 * index's order: a value before every longer value it is a prefix of, a group after the prefix itself and
 * before any value that continues it with a higher character. A group's key ends with `\u0002\u0001`, which no
 * value's text ends with (a body's `\u0001` is escaped).
 */
export const MAX_COUNTED_CODE_POINTS = 32;
const GROUP_MARK = `${END_TRUNCATED}${END_COMPLETE}`;

/** The count key of a value (`null` → the null sentinel's). */
export function countKeyOf(value: StoredValue | null): string {
  return countKeyOfText(encodeValue(value));
}

/** The count key of an index key of record `id` (its value part, cut). */
export function countKeyOfIndexKey(key: string, id: string): string {
  const part = keyValuePart(key, id);
  return countKeyOfText({ text: part.slice(0, -1), truncated: part.endsWith(END_TRUNCATED) });
}

function countKeyOfText(encoded: EncodedValue): string {
  const { text } = encoded;
  // Tag plus the escaped body: an escaped character takes two code units, all of them below U+D800.
  let codePoints = 0;
  let i = 1;
  while (i < text.length) {
    if (codePoints === MAX_COUNTED_CODE_POINTS) return `${text.slice(0, i)}${GROUP_MARK}`;
    const unit = text.charCodeAt(i);
    i += unit === 0x2 || (unit >= 0xd800 && unit <= 0xdbff) ? 2 : 1;
    codePoints += 1;
  }
  return encoded.truncated ? `${text}${GROUP_MARK}` : text;
}

/** Whether a count key stands for a group of values (a cut text) rather than one value. */
export function isCountGroup(countKey: string): boolean {
  return countKey.endsWith(GROUP_MARK);
}

/** Where a count key lies against an interval of index keys: every record it counts is inside, outside, or some of each. */
export type CountKeyPlace = 'inside' | 'outside' | 'across';

/** Above every character: the end of the keys that continue a given prefix. */
const LAST_CHARACTER = '\u{10ffff}';

/** Where the records a count key stands for lie against `interval` (index keys). */
export function countKeyPlace(countKey: string, interval: KeyInterval): CountKeyPlace {
  const group = isCountGroup(countKey);
  // One value: its index keys are `countKey \u0001 <id>`. A group: every key that continues its kept prefix.
  const prefix = group ? countKey.slice(0, -GROUP_MARK.length) : countKey;
  const lowest = group ? prefix + END_TRUNCATED : countKey + END_COMPLETE;
  const highest = group ? `${prefix}${LAST_CHARACTER}` : `${countKey}${END_COMPLETE}${ID_CEILING}`;
  if (compareCodePoints(highest, interval.lower) < 0 || compareCodePoints(lowest, interval.upper) > 0) return 'outside';
  if (compareCodePoints(lowest, interval.lower) >= 0 && compareCodePoints(highest, interval.upper) <= 0)
    return 'inside';
  return 'across';
}
