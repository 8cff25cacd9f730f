/**
 * The schemas the functions check request bodies with: the body codes (`appCode`, `datasetCode`) and `paramMap`.
 * They are the ones the OpenAPI document shows (operation-schemas.ts builds the operations' shapes from them), in
 * a module of their own so that a function's bundle carries these two and not every operation's wire shape.
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
