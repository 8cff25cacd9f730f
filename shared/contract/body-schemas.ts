/**
 * The schemas the functions check request bodies with: the body codes (`appCode`, `datasetCode`), `paramMap`, and
 * how deep a body may nest. They are the ones the OpenAPI document shows (operation-schemas.ts builds the
 * operations' shapes from them), in a module of their own so that a function's bundle carries these and not every
 * operation's wire shape.
 */
// zod's tree-shakable form (see catalog/schema.ts); a namespace import, so that esbuild drops what is unused.
import * as z from 'zod/mini';
import { CODE_PATTERN } from './codes';
import './zod-messages';

/** `appCode`, `datasetCode`, `sqlCode`: the alphabet of docs/interface.md §6. */
export const codeSchema = z
  .string()
  .check(z.regex(CODE_PATTERN, 'must be 1 to 64 letters, digits, "_" or "-"'))
  .check(z.describe('1 to 64 letters, digits, "_" or "-"'));

/** The business parameters of a data operation: a JSON object. */
export const paramMapSchema = z.record(z.string(), z.unknown());

/** How deep a `json` field's value may nest (DynamoDB allows 32 levels; docs/interface.md §4 promises 30). */
export const MAX_JSON_DEPTH = 30;

/**
 * How deep a request body may nest, counting the body itself: a batch record's `json` field at its limit of 30
 * levels sits 33 deep, and nothing any operation accepts is deeper. The margin keeps the messages that name a
 * field (a `json` value 31 levels deep) for anything short of a pathological body; past this, the body is refused
 * before anything walks it (the idempotency fingerprint, a hook's input, the operation's own checks).
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether a parsed JSON value nests deeper than `limit` levels (an object or array is one level, its members one
 * more). Iterative, and it stops at the first container past the limit, so it is safe on any input.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const member of Object.values(node)) {
      if (member !== null && typeof member === 'object') pending.push([member, depth + 1]);
    }
  }
  return false;
}
