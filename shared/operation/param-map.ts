/** Reading `paramMap`, the business parameters of a data operation (docs/interface.md §1). */
import { paramMapSchema } from '../contract/body-schemas';
import { InvalidParameterError } from '../contract/errors';
import { normalizeRecordId } from '../records/record-ids';

/** `paramMap` as an object; absent is an empty object when `optional` (get-list), else 1001. */
export function readParamMap(body: Record<string, unknown>, optional = false): Record<string, unknown> {
  const value = body.paramMap;
  if (value === undefined || value === null) {
    if (optional) return {};
    throw new InvalidParameterError('paramMap is required');
  }
  // The shape the OpenAPI document shows is the one checked here. The caller's object itself is kept: a
  // parsed copy would rebuild it key by key, and a "__proto__" key would then change the copy's prototype.
  if (!paramMapSchema.safeParse(value).success) throw new InvalidParameterError('paramMap must be a JSON object');
  return value as Record<string, unknown>;
}

/** The record id in `paramMap.id`: a string or a number (docs/interface.md §4). */
export function readRecordId(params: Record<string, unknown>): string {
  if (params.id === undefined || params.id === null) throw new InvalidParameterError('paramMap.id is required');
  const id = normalizeRecordId(params.id);
  if (id === undefined) {
    throw new InvalidParameterError('paramMap.id must be a non-empty string of at most 128 characters, or a number');
  }
  return id;
}
