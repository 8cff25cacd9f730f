/**
 * A backend function's `version` and `gmt_modified` (docs/interface.md §15): the version counts the deployments
 * that changed the function's source, and the modified time is when the last such deployment happened. The
 * configuration file cannot say either (it holds only the source), so each deployment derives them from the
 * previous deployment's record: the source's digest tells whether it changed.
 *
 * A function removed from the configuration keeps its record, so a name that comes back continues its count
 * rather than starting again at 1 (a caller that cached version 3 never sees a "newer" version 1). The record is
 * a name, a digest, a number and a time per function ever deployed: about 120 bytes each.
 */
import { createHash } from 'node:crypto';
import type { FunctionConfig } from './schema';

export interface FunctionVersion {
  version: number;
  /** Lower-case hex SHA-256 of the source the version was given for. */
  sourceSha256: string;
  /** When that source was first deployed, in milliseconds since the epoch. */
  modifiedAtMs: number;
}

/** By function name (names are unique in a deployment). */
export type FunctionVersions = Record<string, FunctionVersion>;

export function sourceDigest(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex');
}

/**
 * The versions after deploying `functions` at `nowMs` over the `previous` deployment's: an unchanged source keeps
 * its version and time; a changed one gets the next version and `nowMs`; a new name starts at 1.
 */
export function nextFunctionVersions(
  previous: FunctionVersions,
  functions: readonly FunctionConfig[],
  nowMs: number,
): FunctionVersions {
  const next: FunctionVersions = { ...previous };
  for (const fn of functions) {
    const sourceSha256 = sourceDigest(fn.source ?? '');
    const before = previous[fn.name];
    if (before?.sourceSha256 === sourceSha256) continue;
    next[fn.name] = { version: (before?.version ?? 0) + 1, sourceSha256, modifiedAtMs: nowMs };
  }
  return next;
}

/** The versions a stored item holds, or none when it holds nothing readable (a catalog from before versions). */
export function parseFunctionVersions(value: unknown): FunctionVersions {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const out: FunctionVersions = {};
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    if (entry === null || typeof entry !== 'object') continue;
    const { version, sourceSha256, modifiedAtMs } = entry as Record<string, unknown>;
    if (typeof version !== 'number' || typeof sourceSha256 !== 'string' || typeof modifiedAtMs !== 'number') continue;
    out[name] = { version, sourceSha256, modifiedAtMs };
  }
  return out;
}
